/* Mesh readers (src/mesh/read*.c): the four Gmsh variants of one cube (MSH 2.2 / 4.1, ASCII / binary)
 * and its TetGen pair give the same mesh and node sets; malformed files fail with a message naming the
 * file and the record; truncated and corrupted copies of the cube never crash. Data: tests/data
 * (PBNG_TEST_DATA), see tests/data/README.md. */
#include "mesh/mesh.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  int passed, failed;
  char data[1024], tmp[1024];
} test_ctx;

static void check(test_ctx *t, int ok, int line, const char *fmt, ...)
{
  if (ok) {
    t->passed++;
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "test_readers.c:%d: FAILED: ", line);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  t->failed++;
}
#define CHECK(t, cond, ...) check((t), (cond) ? 1 : 0, __LINE__, __VA_ARGS__)

static void data_path(const test_ctx *t, const char *name, char *path)
{
  snprintf(path, PETSC_MAX_PATH_LEN, "%s/%s", t->data, name);
}

static void setup_dirs(test_ctx *t)
{
  const char *env = getenv("PBNG_TEST_DATA"), *tmp = getenv("PBNG_TEST_TMP");
  if (env && env[0]) snprintf(t->data, sizeof(t->data), "%s", env);
  else {
    snprintf(t->data, sizeof(t->data), "%s", __FILE__);
    char *slash = strrchr(t->data, '/');
    if (slash) snprintf(slash, sizeof(t->data) - (size_t)(slash - t->data), "/data");
    else snprintf(t->data, sizeof(t->data), "data");
  }
  snprintf(t->tmp, sizeof(t->tmp), "%s", tmp && tmp[0] ? tmp : "/tmp");
  if (mkdir(t->tmp, 0777) && errno != EEXIST) snprintf(t->tmp, sizeof(t->tmp), "/tmp");
}

/* Reads a file expected to be valid (failures are reported, not fatal). */
static PetscErrorCode read_ok(test_ctx *t, const char *name, pbng_mesh *mesh, PetscBool *ok)
{
  char path[PETSC_MAX_PATH_LEN];
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  data_path(t, name, path);
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = pbng_mesh_read(path, mesh);
  PetscCall(PetscPopErrorHandler());
  if (ierr) {
    const char *text;
    char *specific;
    PetscCall(PetscErrorMessage(ierr, &text, &specific));
    CHECK(t, 0, "reading %s: %s", name, specific ? specific : text);
  }
  *ok = ierr ? PETSC_FALSE : PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* Reads path expecting failure: returns the error message (empty if it succeeded). */
static PetscErrorCode read_fail(const char *path, char *msg, size_t len, PetscErrorCode *err, pbng_mesh *mesh)
{
  const char *text;
  char *specific;

  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  *err = pbng_mesh_read(path, mesh);
  PetscCall(PetscPopErrorHandler());
  msg[0] = 0;
  if (*err) {
    PetscCall(PetscErrorMessage(*err, &text, &specific));
    snprintf(msg, len, "%s", specific && specific[0] ? specific : text ? text : "");
  }
  PetscFunctionReturn(0);
}

static int mesh_is_zeroed(const pbng_mesh *m)
{
  return !m->X && !m->elems && !m->sets && !m->nsets && !m->nnodes && !m->nelems;
}

/* The read of `name` fails, the message names the file and contains each of the needles. */
static PetscErrorCode expect_failure(test_ctx *t, const char *name, const char *needle1, const char *needle2)
{
  char path[PETSC_MAX_PATH_LEN], msg[4096];
  PetscErrorCode err;
  pbng_mesh mesh;

  PetscFunctionBeginUser;
  data_path(t, name, path);
  PetscCall(read_fail(path, msg, sizeof(msg), &err, &mesh));
  CHECK(t, err != 0, "%s: read succeeded, expected an error", name);
  if (!err) PetscCall(pbng_mesh_destroy(&mesh));
  const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
  char stem[256];
  snprintf(stem, sizeof(stem), "%s", base);
  if (strchr(stem, '.')) *strchr(stem, '.') = 0; /* a TetGen error may name the .node or .ele file */
  CHECK(t, strstr(msg, stem) != NULL, "%s: message does not name the file: %s", name, msg);
  CHECK(t, !needle1 || strstr(msg, needle1), "%s: message lacks '%s': %s", name, needle1, msg);
  CHECK(t, !needle2 || strstr(msg, needle2), "%s: message lacks '%s': %s", name, needle2, msg);
  CHECK(t, mesh_is_zeroed(&mesh), "%s: mesh not left zeroed after an error", name);
  printf("  %-28s -> %s\n", name, msg);
  PetscFunctionReturn(0);
}

static double mesh_volume(const pbng_mesh *m, int *nonpositive)
{
  double V = 0;
  *nonpositive = 0;
  for (int64_t e = 0; e < m->nelems; ++e) {
    const int32_t *n = &m->elems[4 * e];
    const double v = pbng_tet_signed_volume(&m->X[3 * n[0]], &m->X[3 * n[1]], &m->X[3 * n[2]], &m->X[3 * n[3]]);
    if (v <= 0) ++*nonpositive;
    V += v;
  }
  return V;
}

static int same_set(const pbng_node_set *a, const pbng_node_set *b)
{
  if (!a || !b || a->count != b->count) return 0;
  return !memcmp(a->nodes, b->nodes, sizeof(int32_t) * (size_t)a->count);
}

/* Compares nodes, tetrahedra and (when given) named sets of mesh b against reference a. */
static void compare_meshes(test_ctx *t, const char *what, const pbng_mesh *a, const pbng_mesh *b, const char *const *sa,
                           const char *const *sb, int nsets)
{
  double dx = 0;
  CHECK(t, a->nnodes == b->nnodes && a->nelems == b->nelems, "%s: %lld nodes %lld tets vs %lld %lld", what,
        (long long)b->nnodes, (long long)b->nelems, (long long)a->nnodes, (long long)a->nelems);
  if (a->nnodes != b->nnodes || a->nelems != b->nelems) return;
  for (int64_t i = 0; i < 3 * a->nnodes; ++i) dx = fmax(dx, fabs(a->X[i] - b->X[i]));
  CHECK(t, dx <= 1e-14, "%s: coordinates differ by %g", what, dx);
  CHECK(t, !memcmp(a->elems, b->elems, sizeof(int32_t) * 4 * (size_t)a->nelems), "%s: tetrahedra differ", what);
  for (int s = 0; s < nsets; ++s)
    CHECK(t, same_set(pbng_mesh_find_node_set(a, sa[s]), pbng_mesh_find_node_set(b, sb[s])),
          "%s: node set %s differs from %s", what, sb[s], sa[s]);
}

/* Cube checks on the reference mesh: unit volume, faces x = 0 / x = 1, body = every node. */
static void check_cube(test_ctx *t, const char *name, const pbng_mesh *m)
{
  int nonpositive;
  const double V = mesh_volume(m, &nonpositive);
  const pbng_node_set *left = pbng_mesh_find_node_set(m, "left"), *right = pbng_mesh_find_node_set(m, "right"),
                      *body = pbng_mesh_find_node_set(m, "body");

  CHECK(t, m->nelems >= 100 && m->nelems <= 500, "%s: %lld tetrahedra", name, (long long)m->nelems);
  CHECK(t, nonpositive == 0, "%s: %d tetrahedra with volume <= 0", name, nonpositive);
  CHECK(t, fabs(V - 1.0) <= 1e-12, "%s: volume %.17g, expected 1", name, V);
  CHECK(t, left && right && body, "%s: missing node set left/right/body", name);
  if (!left || !right || !body) return;
  int bad = 0;
  for (int64_t i = 0; i < left->count; ++i) bad += m->X[3 * left->nodes[i]] != 0.0;
  for (int64_t i = 0; i < right->count; ++i) bad += m->X[3 * right->nodes[i]] != 1.0;
  int64_t on_left = 0;
  for (int64_t i = 0; i < m->nnodes; ++i) on_left += m->X[3 * i] == 0.0;
  CHECK(t, bad == 0 && left->count == on_left && left->count >= 4, "%s: left/right sets wrong", name);
  CHECK(t, body->count == m->nnodes, "%s: body has %lld of %lld nodes", name, (long long)body->count,
        (long long)m->nnodes);
}

static PetscErrorCode test_cube_variants(test_ctx *t)
{
  static const char *const files[] = {"cube_v22_ascii.msh", "cube_v22_binary.msh", "cube_v41_ascii.msh",
                                      "cube_v41_binary.msh", "cube_v22_binary_be.msh", "cube.node", "cube.ele", "cube"};
  const size_t ngmsh = 5;
  static const char *const gsets[] = {"left", "right", "body"}, *const tsets[] = {"marker_1", "marker_2"};
  pbng_mesh ref, m;
  PetscBool ok;

  PetscFunctionBeginUser;
  PetscCall(read_ok(t, files[0], &ref, &ok));
  if (!ok) PetscFunctionReturn(0);
  check_cube(t, files[0], &ref);
  CHECK(t, strstr(ref.source, files[0]) != NULL, "mesh->source is '%s'", ref.source);
  for (size_t f = 1; f < sizeof(files) / sizeof(files[0]); ++f) {
    PetscCall(read_ok(t, files[f], &m, &ok));
    if (!ok) continue;
    if (f < ngmsh) {
      compare_meshes(t, files[f], &ref, &m, gsets, gsets, 3);
      check_cube(t, files[f], &m);
      CHECK(t, m.nsets == 3, "%s: %d node sets", files[f], m.nsets);
    } else {
      compare_meshes(t, files[f], &ref, &m, gsets, tsets, 2);
      int nonpositive;
      CHECK(t, fabs(mesh_volume(&m, &nonpositive) - 1.0) <= 1e-12 && !nonpositive, "%s: volume", files[f]);
      CHECK(t, m.nsets == 2, "%s: %d node sets", files[f], m.nsets);
    }
    PetscCall(pbng_mesh_destroy(&m));
  }
  PetscCall(pbng_mesh_destroy(&ref));
  PetscFunctionReturn(0);
}

/* Sparse node tags (40, 20, 30, 10), $Entities physical groups, unknown sections skipped. */
static PetscErrorCode test_sparse(test_ctx *t)
{
  pbng_mesh m;
  PetscBool ok;
  static const double X3[3] = {0, 0, 1};

  PetscFunctionBeginUser;
  PetscCall(read_ok(t, "tiny_sparse_v41.msh", &m, &ok));
  if (!ok) PetscFunctionReturn(0);
  CHECK(t, m.nnodes == 4 && m.nelems == 1, "sparse: %lld nodes %lld tets", (long long)m.nnodes, (long long)m.nelems);
  CHECK(t, m.elems[0] == 0 && m.elems[1] == 1 && m.elems[2] == 2 && m.elems[3] == 3, "sparse: tet %d %d %d %d",
        m.elems[0], m.elems[1], m.elems[2], m.elems[3]);
  CHECK(t, !memcmp(&m.X[9], X3, sizeof(X3)), "sparse: node tag 10 is not at index 3");
  const pbng_node_set *bottom = pbng_mesh_find_node_set(&m, "bottom"), *vol = pbng_mesh_find_node_set(&m, "physical_3");
  CHECK(t, bottom && bottom->count == 3 && bottom->nodes[2] == 2, "sparse: set 'bottom'");
  CHECK(t, vol && vol->count == 4, "sparse: unnamed volume group 'physical_3'");
  PetscCall(pbng_mesh_destroy(&m));
  PetscCall(read_ok(t, "tiny_tet_v22.msh", &m, &ok));
  if (ok) {
    CHECK(t, m.nnodes == 4 && m.nelems == 1 && m.nsets == 0, "tiny v22");
    PetscCall(pbng_mesh_destroy(&m));
  }
  /* every tetrahedron listed with negative volume: the opposite convention, re-oriented */
  PetscCall(read_ok(t, "tiny_negative_v22.msh", &m, &ok));
  if (ok) {
    int nonpositive;
    const double V = mesh_volume(&m, &nonpositive);
    CHECK(t, m.nelems == 2 && !nonpositive && fabs(V - 0.5) <= 1e-15, "negative convention: volume %g, %d non-positive", V, nonpositive);
    CHECK(t, m.elems[0] == 0 && m.elems[1] == 2 && m.elems[2] == 3 && m.elems[3] == 1, "negative convention: nodes 2 and 3 swapped");
    PetscCall(pbng_mesh_destroy(&m));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode test_malformed(test_ctx *t)
{
  PetscFunctionBeginUser;
  printf("malformed inputs:\n");
  PetscCall(expect_failure(t, "bad_trunc_ascii.msh", ":13 ($Elements, element record 2)", "truncated"));
  PetscCall(expect_failure(t, "bad_trunc_v22_binary.msh", ": byte ", "truncated"));
  PetscCall(expect_failure(t, "bad_trunc_v41_binary.msh", ": byte ", "truncated"));
  PetscCall(expect_failure(t, "bad_nan.msh", ":8 ($Nodes, node tag 3)", "non-finite"));
  PetscCall(expect_failure(t, "bad_inf.msh", ":8 ($Nodes, node tag 3)", "non-finite coordinate -inf"));
  PetscCall(expect_failure(t, "bad_token.msh", ":9 ($Nodes, node tag 4)", "'abc'"));
  PetscCall(expect_failure(t, "bad_node_index.msh", ":13 ($Elements, element 1)", "node tag 7"));
  PetscCall(expect_failure(t, "bad_hex.msh", "element 2", "unsupported element type 5 (8-node hexahedron)"));
  PetscCall(expect_failure(t, "bad_v41_prism.msh", ":23 ($Elements, element 7)", "unsupported element type 6 (6-node prism)"));
  PetscCall(expect_failure(t, "bad_degenerate.msh", "element 0 (record 1", "degenerate"));
  PetscCall(expect_failure(t, "bad_duplicate.msh", "duplicate node tag 2", "lines 7 and 8"));
  PetscCall(expect_failure(t, "bad_huge_count.msh", ":5", "truncated"));
  PetscCall(expect_failure(t, "bad_no_tets.msh", "no 4-node tetrahedra", NULL));
  PetscCall(expect_failure(t, "bad_version.msh", ":2", "unsupported MSH version 3.0"));
  PetscCall(expect_failure(t, "bad_index.ele", "bad_index.ele:2", "element 1 references node 9"));
  PetscCall(expect_failure(t, "tet10", "tet10.ele:1", "10-node"));
  PetscCall(expect_failure(t, "bad_inverted.msh", "element 1 (record 2", "is inverted in the rest state: 1 of the 3"));
  PetscCall(expect_failure(t, "bad_duplicate_element.msh", "elements 0 and 2 (records 1 and 3)", "duplicates"));
  PetscCall(expect_failure(t, "bad_empty.msh", "bad_empty.msh", "empty file"));
  PetscCall(expect_failure(t, "bad_empty_mesh.msh", ":5 ($Nodes)", "no nodes"));
  PetscCall(expect_failure(t, "bad_empty_tetgen.node", "bad_empty_tetgen.node", "empty file"));
  PetscCall(expect_failure(t, "nonexistent.msh", "cannot open", NULL));
  PetscCall(expect_failure(t, "nonexistent", "cannot open", NULL));
  PetscCall(expect_failure(t, "cube.geo", "unrecognised mesh format", "supported"));
  PetscFunctionReturn(0);
}

/* Truncated and byte-corrupted copies of the cube files: each read succeeds or fails cleanly with a
 * message naming the file, and leaves the mesh zeroed on failure. Deterministic. */
static PetscErrorCode fuzz_one(test_ctx *t, const unsigned char *buf, size_t len, const char *path, int *fails)
{
  char msg[4096];
  PetscErrorCode err;
  pbng_mesh m;
  FILE *f = fopen(path, "wb");

  PetscFunctionBeginUser;
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
  PetscCheck(fwrite(buf, 1, len, f) == len && !fclose(f), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write %s", path);
  PetscCall(read_fail(path, msg, sizeof(msg), &err, &m));
  if (!err) {
    PetscCall(pbng_mesh_destroy(&m));
    PetscFunctionReturn(0);
  }
  ++*fails;
  CHECK(t, strstr(msg, path) != NULL, "fuzz: message does not name %s: %s", path, msg);
  CHECK(t, mesh_is_zeroed(&m), "fuzz: mesh not zeroed after: %s", msg);
  PetscFunctionReturn(0);
}

static PetscErrorCode test_fuzz(test_ctx *t)
{
  static const char *const files[] = {"cube_v22_ascii.msh", "cube_v22_binary.msh", "cube_v41_ascii.msh",
                                      "cube_v41_binary.msh"};
  char path[PETSC_MAX_PATH_LEN], out[PETSC_MAX_PATH_LEN];
  unsigned long long seed = 12345;
  int cases = 0, fails = 0;

  PetscFunctionBeginUser;
  snprintf(out, sizeof(out), "%s/test_readers_%d_fuzz.msh", t->tmp, (int)getpid());
  for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); ++f) {
    data_path(t, files[f], path);
    FILE *in = fopen(path, "rb");
    PetscCheck(in, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open %s", path);
    unsigned char *buf, *copy;
    fseek(in, 0, SEEK_END);
    const size_t len = (size_t)ftell(in);
    fseek(in, 0, SEEK_SET);
    PetscCall(PetscMalloc2(len, &buf, len, &copy));
    PetscCheck(fread(buf, 1, len, in) == len, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "cannot read %s", path);
    fclose(in);
    for (size_t cut = 0; cut < len; cut += 1 + len / 97, ++cases) PetscCall(fuzz_one(t, buf, cut, out, &fails));
    for (int k = 0; k < 150; ++k, ++cases) {
      memcpy(copy, buf, len);
      for (int j = 0; j < 1 + k % 4; ++j) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        const size_t at = (size_t)(seed >> 33) % len;
        copy[at] = (unsigned char)(seed >> 20);
      }
      PetscCall(fuzz_one(t, copy, len, out, &fails));
    }
    PetscCall(PetscFree2(buf, copy));
  }
  remove(out);
  printf("fuzz: %d truncated/corrupted files, %d rejected cleanly, the rest read\n", cases, fails);
  CHECK(t, fails > cases / 2, "fuzz: only %d of %d damaged files rejected", fails, cases);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  test_ctx t;

  memset(&t, 0, sizeof(t));
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  setup_dirs(&t);
  PetscCall(test_cube_variants(&t));
  PetscCall(test_sparse(&t));
  PetscCall(test_malformed(&t));
  PetscCall(test_fuzz(&t));
  printf("test_readers: %d checks passed%s\n", t.passed, t.failed ? "" : "");
  if (t.failed) printf("test_readers: %d checks FAILED\n", t.failed);
  PetscCall(PetscFinalize());
  return t.failed ? 1 : 0;
}
