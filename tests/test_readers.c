/* Mesh readers (src/mesh/read*.c): the four Gmsh variants of one cube (MSH 2.2 / 4.1, ASCII / binary)
 * and its TetGen pair give the same mesh and node sets; so do the four variants of a box of each
 * element kind (tet4, tet10, tet20, hex8, hex27, prism6, pyramid5), with the box's volume from the
 * element layer; TetGen -o2 files map to Gmsh's node order; sheets of triangles (alone or beside
 * volumes) read as tri3 elements and are validated; malformed files fail with a message
 * naming the file and the record; truncated and corrupted copies of the cube never crash. Data:
 * tests/data (PBNG_TEST_DATA), see tests/data/README.md. */
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

/* The element nodes' rest positions. */
static void element_nodes(const pbng_mesh *m, int64_t e, double (*X)[3])
{
  const int nen = m->nen;
  for (int a = 0; a < pbng_mesh_element_type(m, e)->nodes; ++a) memcpy(X[a], &m->X[3 * (int64_t)m->elems[(size_t)e * nen + a]], sizeof(X[a]));
}

/* Sum of the element volumes sum_q V_q from the element layer (seed Alg. 3), each element by its own
 * kind; *nonpositive counts the elements it rejects (inverted or degenerate at a quadrature point). */
static double mesh_volume(const pbng_mesh *m, int *nonpositive)
{
  pbng_element_reference *ref = malloc(sizeof(*ref) * PBNG_ELEMENT_KIND_COUNT);
  double(*grad)[PBNG_MAX_ELEMENT_NODES][3] = malloc(sizeof(double) * PBNG_MAX_QUAD_POINTS * PBNG_MAX_ELEMENT_NODES * 3);
  double V = 0, X[PBNG_MAX_ELEMENT_NODES][3], Vq[PBNG_MAX_QUAD_POINTS], det_min;
  *nonpositive = 0;
  if (!ref || !grad) {
    free(ref), free(grad);
    *nonpositive = -1;
    return NAN;
  }
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k) pbng_element_reference_init(pbng_element_type_get((pbng_element_kind)k), &ref[k]);
  for (int64_t e = 0; e < m->nelems; ++e) {
    const pbng_element_reference *r = &ref[pbng_mesh_element_type(m, e)->kind];
    element_nodes(m, e, X);
    if (pbng_element_precompute(r, (const double(*)[3])X, Vq, grad, &det_min)) ++*nonpositive;
    for (int q = 0; q < r->nq; ++q) V += Vq[q];
  }
  free(ref), free(grad);
  return V;
}

static int same_set(const pbng_node_set *a, const pbng_node_set *b)
{
  if (!a || !b || a->count != b->count) return 0;
  return !memcmp(a->nodes, b->nodes, sizeof(int32_t) * (size_t)a->count);
}

/* Compares kind, nodes, elements and (when given) named sets of mesh b against reference a. */
static void compare_meshes(test_ctx *t, const char *what, const pbng_mesh *a, const pbng_mesh *b, const char *const *sa,
                           const char *const *sb, int nsets)
{
  double dx = 0;
  CHECK(t, a->etype == b->etype && a->nen == b->nen && !a->kind == !b->kind, "%s: kind %s (rows of %d), expected %s (rows of %d)", what,
        b->etype ? b->etype->name : "mixed", b->nen, a->etype ? a->etype->name : "mixed", a->nen);
  CHECK(t, a->nnodes == b->nnodes && a->nelems == b->nelems, "%s: %lld nodes %lld elements vs %lld %lld", what,
        (long long)b->nnodes, (long long)b->nelems, (long long)a->nnodes, (long long)a->nelems);
  if (a->etype != b->etype || a->nen != b->nen || !a->kind != !b->kind || a->nnodes != b->nnodes || a->nelems != b->nelems) return;
  for (int64_t i = 0; i < 3 * a->nnodes; ++i) dx = fmax(dx, fabs(a->X[i] - b->X[i]));
  CHECK(t, dx <= 1e-14, "%s: coordinates differ by %g", what, dx);
  CHECK(t, !memcmp(a->elems, b->elems, sizeof(int32_t) * (size_t)a->nen * (size_t)a->nelems), "%s: elements differ", what);
  CHECK(t, !a->kind || !memcmp(a->kind, b->kind, (size_t)a->nelems), "%s: element kinds differ", what);
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

/* Every node of set `name` has x = x0, and every node with x = x0 is in it. */
static void check_face_set(test_ctx *t, const char *what, const pbng_mesh *m, const char *name, double x0)
{
  const pbng_node_set *set = pbng_mesh_find_node_set(m, name);
  int64_t off = 0, on = 0;
  CHECK(t, set != NULL, "%s: no node set '%s'", what, name);
  if (!set) return;
  for (int64_t i = 0; i < set->count; ++i) off += m->X[3 * set->nodes[i]] != x0;
  for (int64_t i = 0; i < m->nnodes; ++i) on += m->X[3 * i] == x0;
  CHECK(t, off == 0 && set->count == on && on >= 4, "%s: set '%s' has %lld nodes (%lld off x = %g), %lld nodes lie there", what, name,
        (long long)set->count, (long long)off, x0, (long long)on);
}

/* The box [0,1] x [0,0.5] x [0,0.25] of one kind, read from MSH 2.2 / 4.1, ASCII / binary: the kind,
 * the counts gmsh reports, volume 0.125 summed over the element layer's quadrature (exact for every
 * kind on these straight-sided elements), faces left/right and body as node sets, and the four
 * variants identical. */
static PetscErrorCode test_kind_boxes(test_ctx *t)
{
  static const struct {
    pbng_element_kind kind;
    int64_t nnodes, nelems;
  } boxes[] = {{PBNG_ELEMENT_TET4, 36, 78}, {PBNG_ELEMENT_TET10, 183, 78}, {PBNG_ELEMENT_TET20, 520, 78}, {PBNG_ELEMENT_HEX8, 45, 16},
               {PBNG_ELEMENT_HEX27, 225, 16}, {PBNG_ELEMENT_PRISM6, 54, 44}, {PBNG_ELEMENT_PYRAMID5, 9, 6}};
  static const char *const variants[] = {"v22_ascii", "v22_binary", "v41_ascii", "v41_binary"};
  static const char *const sets[] = {"left", "right", "body"};
  char name[128];
  pbng_mesh ref, m;
  PetscBool ok;

  PetscFunctionBeginUser;
  for (size_t b = 0; b < sizeof(boxes) / sizeof(boxes[0]); ++b) {
    const pbng_element_type *kind = pbng_element_type_get(boxes[b].kind);
    for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); ++v) {
      snprintf(name, sizeof(name), "%s_%s.msh", kind->name, variants[v]);
      PetscCall(read_ok(t, name, v ? &m : &ref, &ok));
      if (!ok && !v) break;
      if (!ok) continue;
      if (v) {
        compare_meshes(t, name, &ref, &m, sets, sets, 3);
        PetscCall(pbng_mesh_destroy(&m));
        continue;
      }
      int nonpositive;
      const double V = mesh_volume(&ref, &nonpositive);
      CHECK(t, ref.etype == kind, "%s: read as %s", name, ref.etype->name);
      CHECK(t, ref.nnodes == boxes[b].nnodes && ref.nelems == boxes[b].nelems, "%s: %lld nodes %lld elements, expected %lld %lld", name,
            (long long)ref.nnodes, (long long)ref.nelems, (long long)boxes[b].nnodes, (long long)boxes[b].nelems);
      CHECK(t, !nonpositive && fabs(V - 0.125) <= 1e-14, "%s: volume %.17g (expected 0.125), %d elements rejected", name, V, nonpositive);
      check_face_set(t, name, &ref, "left", 0.0);
      check_face_set(t, name, &ref, "right", 1.0);
      const pbng_node_set *body = pbng_mesh_find_node_set(&ref, "body");
      CHECK(t, ref.nsets == 3 && body && body->count == ref.nnodes, "%s: %d node sets, body of %lld nodes", name, ref.nsets,
            body ? (long long)body->count : -1LL);
    }
    PetscCall(pbng_mesh_destroy(&ref)); /* zeroed when its read failed */
  }
  PetscCall(read_ok(t, "tiny_prism_v41.msh", &m, &ok)); /* one prism from a 4.1 block, half the unit cube */
  if (ok) {
    int nonpositive;
    const double V = mesh_volume(&m, &nonpositive);
    CHECK(t, m.etype->kind == PBNG_ELEMENT_PRISM6 && m.nelems == 1 && !nonpositive && fabs(V - 0.5) <= 1e-15, "tiny prism: %s, volume %g",
          m.etype->name, V);
    PetscCall(pbng_mesh_destroy(&m));
  }
  PetscFunctionReturn(0);
}

/* Element count of each kind against expected[PBNG_ELEMENT_KIND_COUNT]. */
static void check_kind_counts(test_ctx *t, const char *name, const pbng_mesh *m, const int64_t *expected)
{
  int64_t counts[PBNG_ELEMENT_KIND_COUNT];
  pbng_mesh_count_kinds(m, counts);
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k)
    CHECK(t, counts[k] == expected[k], "%s: %lld %s elements, expected %lld", name, (long long)counts[k],
          pbng_element_type_get((pbng_element_kind)k)->name, (long long)expected[k]);
}

/* Meshes mixing kinds: the unit cube of hexahedra, a layer of pyramids and prisms (mixed_box.py, in
 * the four Gmsh variants, identical: rows padded to 8 nodes with -1, a kind per element), and gmsh's
 * half-hexahedra half-prisms box; counts per kind, node sets, volume from each element's own kind. */
static PetscErrorCode test_mixed_kinds(test_ctx *t)
{
  static const char *const variants[] = {"v22_ascii", "v22_binary", "v41_ascii", "v41_binary"};
  static const char *const sets[] = {"left", "right", "body"};
  static const int64_t box_counts[PBNG_ELEMENT_KIND_COUNT] = {[PBNG_ELEMENT_HEX8] = 32, [PBNG_ELEMENT_PRISM6] = 32, [PBNG_ELEMENT_PYRAMID5] = 96};
  static const int64_t hex_prism_counts[PBNG_ELEMENT_KIND_COUNT] = {[PBNG_ELEMENT_HEX8] = 8, [PBNG_ELEMENT_PRISM6] = 28};
  char name[128];
  pbng_mesh ref, m;
  PetscBool ok;
  int nonpositive;

  PetscFunctionBeginUser;
  for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); ++v) {
    snprintf(name, sizeof(name), "mixed_box_%s.msh", variants[v]);
    PetscCall(read_ok(t, name, v ? &m : &ref, &ok));
    if (!ok && !v) PetscFunctionReturn(0);
    if (!ok) continue;
    if (v) {
      compare_meshes(t, name, &ref, &m, sets, sets, 3);
      PetscCall(pbng_mesh_destroy(&m));
      continue;
    }
    const double V = mesh_volume(&ref, &nonpositive);
    CHECK(t, !ref.etype && ref.kind && ref.nen == 8 && ref.nnodes == 141, "%s: %s, rows of %d, %lld nodes (expected mixed, 8, 141)", name,
          ref.etype ? ref.etype->name : "mixed", ref.nen, (long long)ref.nnodes);
    check_kind_counts(t, name, &ref, box_counts);
    CHECK(t, !nonpositive && fabs(V - 1.0) <= 1e-12, "%s: volume %.17g (expected 1), %d elements rejected", name, V, nonpositive);
    for (int64_t e = 0; e < ref.nelems; ++e)
      CHECK(t, pbng_mesh_element_nodes(&ref, e) == pbng_mesh_element_type(&ref, e)->nodes, "%s: element %lld has %d nodes in its row", name,
            (long long)e, pbng_mesh_element_nodes(&ref, e));
    check_face_set(t, name, &ref, "left", 0.0);
    check_face_set(t, name, &ref, "right", 1.0);
  }
  PetscCall(pbng_mesh_destroy(&ref));
  PetscCall(read_ok(t, "mixed_hex_prism.msh", &m, &ok));
  if (ok) {
    const double V = mesh_volume(&m, &nonpositive);
    check_kind_counts(t, "mixed_hex_prism.msh", &m, hex_prism_counts);
    CHECK(t, !nonpositive && fabs(V - 0.125) <= 1e-14, "mixed_hex_prism.msh: volume %.17g (expected 0.125)", V);
    PetscCall(pbng_mesh_destroy(&m));
  }
  PetscFunctionReturn(0);
}

/* The rows of mesh m, less their padding, against expected[nelems][4] (-1 padded: tri3 rows). */
static void check_rows(test_ctx *t, const char *name, const pbng_mesh *m, const int32_t (*expected)[4])
{
  int bad = 0;
  for (int64_t e = 0; e < m->nelems; ++e)
    for (int a = 0; a < 4; ++a) bad += (a < m->nen ? m->elems[(size_t)e * m->nen + a] : -1) != expected[e][a];
  CHECK(t, bad == 0, "%s: %d element nodes differ from the file's", name, bad);
}

/* A node set against the expected sorted list of n nodes. */
static void check_set(test_ctx *t, const char *name, const pbng_mesh *m, const char *set_name, int n, const int32_t *nodes)
{
  const pbng_node_set *set = pbng_mesh_find_node_set(m, set_name);
  CHECK(t, set && set->count == n && !memcmp(set->nodes, nodes, sizeof(int32_t) * (size_t)n), "%s: node set '%s' (%lld nodes) is not the "
        "expected one (%d nodes)", name, set_name, set ? (long long)set->count : -1LL, n);
}

/* Sheets from Gmsh (docs/cloth.md#reading-sheets-from-gmsh). A file without volume elements: the 2 x 2
 * cell square (9 nodes, 8 triangles in the plane z = 0.5, a "top" edge of lines) in MSH 2.2 ASCII, 4.1
 * ASCII and 4.1 binary reads as 8 tri3 elements with the file's nodes, counter-clockwise about +z,
 * areas summing to 1, and its groups as node sets. A file with volume elements: the unit cube's 6
 * tetrahedra with the 2 triangles of a flap x in [1, 2] (group "sheet"; its outer nodes only there),
 * 2 on the top face (group "sheet_skin", on the tetrahedra's faces) and 2 on the bottom (group "fixed",
 * boundary faces): 6 tet4 and 4 tri3 in file order, mixed (rows of 4, a kind per element), "fixed"
 * only a node set; the 4.1 files list the fixed triangles between the sheet's (non-contiguous tags). */
static PetscErrorCode test_sheets(test_ctx *t)
{
  static const char *const square[] = {"sheet_square_v22_ascii.msh", "sheet_square_v41_ascii.msh", "sheet_square_v41_binary.msh"};
  static const char *const block[] = {"sheet_block_v22_ascii.msh", "sheet_block_v41_ascii.msh", "sheet_block_v41_binary.msh"};
  static const int32_t square_rows[8][4] = {{0, 1, 4, -1}, {0, 4, 3, -1}, {1, 2, 4, -1}, {2, 5, 4, -1},
                                            {3, 4, 6, -1}, {4, 7, 6, -1}, {4, 5, 8, -1}, {4, 8, 7, -1}};
  static const int32_t block_rows[10][4] = {{5, 8, 9, -1}, {5, 9, 6, -1}, {4, 5, 6, -1}, {4, 6, 7, -1}, {0, 1, 2, 6},
                                            {0, 1, 6, 5},  {0, 3, 6, 2},  {0, 3, 7, 6},  {0, 4, 5, 6},  {0, 4, 6, 7}};
  static const int32_t top[] = {6, 7, 8}, all9[] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, fixed[] = {0, 1, 2, 3}, flap[] = {5, 6, 8, 9},
                       skin[] = {4, 5, 6, 7}, body[] = {0, 1, 2, 3, 4, 5, 6, 7};
  static const int64_t block_counts[PBNG_ELEMENT_KIND_COUNT] = {[PBNG_ELEMENT_TET4] = 6, [PBNG_ELEMENT_TRI3] = 4};
  pbng_mesh m;
  PetscBool ok;

  PetscFunctionBeginUser;
  for (size_t f = 0; f < sizeof(square) / sizeof(square[0]); ++f) {
    PetscCall(read_ok(t, square[f], &m, &ok));
    if (!ok) continue;
    CHECK(t, m.etype && m.etype->kind == PBNG_ELEMENT_TRI3 && !m.kind && m.nen == 3 && m.nnodes == 9 && m.nelems == 8,
          "%s: %s, rows of %d, %lld nodes, %lld elements (expected tri3, 3, 9, 8)", square[f], m.etype ? m.etype->name : "mixed", m.nen,
          (long long)m.nnodes, (long long)m.nelems);
    if (m.nelems == 8 && m.nen == 3) {
      check_rows(t, square[f], &m, square_rows);
      double area = 0, min_nz = 1;
      for (int64_t e = 0; e < 8; ++e) { /* the normal's z component, twice the area */
        const double *A = &m.X[3 * m.elems[3 * e]], *B = &m.X[3 * m.elems[3 * e + 1]], *C = &m.X[3 * m.elems[3 * e + 2]];
        const double nz = (B[0] - A[0]) * (C[1] - A[1]) - (B[1] - A[1]) * (C[0] - A[0]);
        area += nz / 2, min_nz = fmin(min_nz, nz);
      }
      CHECK(t, fabs(area - 1.0) <= 1e-15 && min_nz > 0, "%s: area %g, a triangle clockwise about +z", square[f], area);
    }
    CHECK(t, m.nsets == 2, "%s: %d node sets (expected top, sheet)", square[f], m.nsets);
    check_set(t, square[f], &m, "top", 3, top);
    check_set(t, square[f], &m, "sheet", 9, all9);
    PetscCall(pbng_mesh_destroy(&m));
  }
  for (size_t f = 0; f < sizeof(block) / sizeof(block[0]); ++f) {
    PetscCall(read_ok(t, block[f], &m, &ok));
    if (!ok) continue;
    CHECK(t, !m.etype && m.kind && m.nen == 4 && m.nnodes == 10 && m.nelems == 10, "%s: %s, rows of %d, %lld nodes, %lld elements "
          "(expected mixed, 4, 10, 10)", block[f], m.etype ? m.etype->name : "mixed", m.nen, (long long)m.nnodes, (long long)m.nelems);
    check_kind_counts(t, block[f], &m, block_counts);
    if (m.kind && m.nelems == 10) {
      int bad = 0;
      double V = 0;
      for (int64_t e = 0; e < 10; ++e) bad += m.kind[e] != (e < 4 ? PBNG_ELEMENT_TRI3 : PBNG_ELEMENT_TET4);
      CHECK(t, bad == 0, "%s: kind[] is not 4 tri3 then 6 tet4 (file order)", block[f]);
      check_rows(t, block[f], &m, block_rows);
      for (int64_t e = 4; e < 10; ++e) {
        const int32_t *r = &m.elems[4 * e];
        V += pbng_tet_signed_volume(&m.X[3 * r[0]], &m.X[3 * r[1]], &m.X[3 * r[2]], &m.X[3 * r[3]]);
      }
      CHECK(t, fabs(V - 1.0) <= 1e-15, "%s: the tetrahedra's volume is %g (expected 1)", block[f], V);
    }
    CHECK(t, m.nsets == 4, "%s: %d node sets (expected sheet, fixed, sheet_skin, body)", block[f], m.nsets);
    check_set(t, block[f], &m, "fixed", 4, fixed);
    check_set(t, block[f], &m, "sheet", 4, flap);
    check_set(t, block[f], &m, "sheet_skin", 4, skin);
    check_set(t, block[f], &m, "body", 8, body);
    PetscCall(pbng_mesh_destroy(&m));
  }
  PetscFunctionReturn(0);
}

/* A mesh of 2 elements on the tetrahedron (0,0,0), (1,0,0), (0,1,0), (0,0,1), rows of 4, for validation. */
static PetscErrorCode two_element_mesh(pbng_mesh *m, pbng_element_kind k0, const int32_t *row0, pbng_element_kind k1, const int32_t *row1)
{
  static const double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

  PetscFunctionBeginUser;
  PetscCall(pbng_mesh_alloc_mixed(m, 4, 4, 2));
  memcpy(m->X, X, sizeof(X));
  memcpy(m->elems, row0, 4 * sizeof(int32_t));
  memcpy(m->elems + 4, row1, 4 * sizeof(int32_t));
  m->kind[0] = (uint8_t)k0, m->kind[1] = (uint8_t)k1;
  snprintf(m->source, sizeof(m->source), "two_elements");
  PetscFunctionReturn(0);
}

/* pbng_mesh_validate with sheet kinds beside linear tetrahedra: tetrahedra all listed with negative volume
 * are re-oriented as in a tet4 mesh and the triangles left alone; a stencil on a tetrahedron's 4 nodes is
 * no duplicate of it; the same triangle twice (either orientation) is; errors name the record. */
static PetscErrorCode test_sheet_validation(test_ctx *t)
{
  static const int32_t tri[4] = {0, 1, 2, -1}, tri_reversed[4] = {2, 1, 0, -1}, tet_negative[4] = {0, 2, 1, 3}, tet[4] = {0, 1, 2, 3};
  pbng_mesh m;
  PetscErrorCode ierr;
  const char *text;
  char *msg;

  PetscFunctionBeginUser;
  PetscCall(two_element_mesh(&m, PBNG_ELEMENT_TRI3, tri, PBNG_ELEMENT_TET4, tet_negative));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = pbng_mesh_validate(&m, 0);
  PetscCall(PetscPopErrorHandler());
  CHECK(t, !ierr && !memcmp(m.elems, tri, sizeof(tri)) && !memcmp(m.elems + 4, tet_negative, 2 * sizeof(int32_t)) && m.elems[6] == 3 &&
             m.elems[7] == 1, "tri3 + tet4 listed negatively: not re-oriented as a tet4 mesh (error %d, tet %d %d %d %d)", (int)ierr,
        m.elems[4], m.elems[5], m.elems[6], m.elems[7]);
  PetscCall(pbng_mesh_destroy(&m));
  PetscCall(two_element_mesh(&m, PBNG_ELEMENT_BEND4, tet, PBNG_ELEMENT_TET4, tet));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = pbng_mesh_validate(&m, 0);
  PetscCall(PetscPopErrorHandler());
  CHECK(t, !ierr, "a bend4 stencil on a tet4's nodes taken for a duplicate");
  PetscCall(pbng_mesh_destroy(&m));
  PetscCall(two_element_mesh(&m, PBNG_ELEMENT_TRI3, tri, PBNG_ELEMENT_TRI3, tri_reversed));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = pbng_mesh_validate_records(&m, (const int64_t[]){17, 42});
  PetscCall(PetscPopErrorHandler());
  msg = NULL;
  if (ierr) PetscCall(PetscErrorMessage(ierr, &text, &msg));
  CHECK(t, ierr && msg && strstr(msg, "two_elements: elements 0 and 1 (records 17 and 42) are duplicates: two tri3"),
        "the same triangle twice: %s", msg ? msg : "accepted");
  PetscCall(pbng_mesh_destroy(&m));
  PetscFunctionReturn(0);
}

/* TetGen -o2: the P2 box converted from Gmsh with the edge nodes in TetGen's order reads as the Gmsh
 * file (so the mapping inverts the converter's, msh22_to_tetgen.py); a file TetGen 1.5.0 wrote has
 * every edge node at the middle of its Gmsh edge (so the mapping is TetGen's). */
static PetscErrorCode test_tetgen_o2(test_ctx *t)
{
  static const char *const gsets[] = {"left", "right"}, *const tsets[] = {"marker_1", "marker_2"};
  pbng_mesh ref, m;
  PetscBool ok, ok_ref;

  PetscFunctionBeginUser;
  PetscCall(read_ok(t, "tet10_v22_ascii.msh", &ref, &ok_ref));
  PetscCall(read_ok(t, "tet10_box.ele", &m, &ok));
  if (ok && ok_ref) compare_meshes(t, "tet10_box (TetGen -o2 order)", &ref, &m, gsets, tsets, 2);
  if (ok) PetscCall(pbng_mesh_destroy(&m));
  if (ok_ref) PetscCall(pbng_mesh_destroy(&ref));
  PetscCall(read_ok(t, "tet10", &m, &ok));
  if (!ok) PetscFunctionReturn(0);
  double err = 0, X[PBNG_MAX_ELEMENT_NODES][3];
  for (int64_t e = 0; e < m.nelems; ++e) {
    element_nodes(&m, e, X);
    for (int a = 4; a < 10; ++a) { /* node a at the corners' affine map of its reference point */
      const double *r = m.etype->ref_nodes[a], lambda[4] = {1 - r[0] - r[1] - r[2], r[0], r[1], r[2]};
      for (int i = 0; i < 3; ++i)
        err = fmax(err, fabs(X[a][i] - (lambda[0] * X[0][i] + lambda[1] * X[1][i] + lambda[2] * X[2][i] + lambda[3] * X[3][i])));
    }
  }
  int nonpositive;
  const double V = mesh_volume(&m, &nonpositive);
  CHECK(t, m.etype->kind == PBNG_ELEMENT_TET10 && m.nelems == 6 && m.nnodes == 27, "TetGen -o2 cube: %s, %lld elements", m.etype->name,
        (long long)m.nelems);
  CHECK(t, err == 0, "TetGen -o2 cube: an edge node is %g off the middle of its Gmsh edge", err);
  CHECK(t, !nonpositive && fabs(V - 1.0) <= 1e-14, "TetGen -o2 cube: volume %.17g, %d elements rejected", V, nonpositive);
  PetscCall(pbng_mesh_destroy(&m));
  PetscFunctionReturn(0);
}

/* Each file fails with a message naming it and containing both needles (NULL: none). */
static PetscErrorCode test_malformed(test_ctx *t)
{
  static const struct {
    const char *file, *needle1, *needle2;
  } cases[] = {
    {"bad_trunc_ascii.msh", ":13 ($Elements, element record 2)", "truncated"},
    {"bad_trunc_v22_binary.msh", ": byte ", "truncated"},
    {"bad_trunc_v41_binary.msh", ": byte ", "truncated"},
    {"bad_nan.msh", ":8 ($Nodes, node tag 3)", "non-finite"},
    {"bad_inf.msh", ":8 ($Nodes, node tag 3)", "non-finite coordinate -inf"},
    {"bad_token.msh", ":9 ($Nodes, node tag 4)", "'abc'"},
    {"bad_node_index.msh", ":13 ($Elements, element 1)", "node tag 7"},
    {"bad_v41_prism15.msh", ":23 ($Elements, element 7)", "unsupported element type 18 (15-node prism)"},
    {"bad_mixed_inverted.msh", "element 0 (record 1, tet4) is inverted in the rest state at quadrature point 0", "1 of the 2 elements"},
    {"bad_tet10_node_count.msh", ":19 ($Elements, element 1)", "needs 10 node tags, but the record lists 9"},
    {"bad_hex27_node_index.msh", ":249 ($Elements, element 10)", "node tag 9999"},
    {"bad_hex8_inverted.msh", "element 2 (record 11, hex8) is inverted in the rest state at quadrature point 0", "1 of the 16 elements"},
    {"bad_tet10_degenerate.msh", "element 0 (record 1, tet10) is inverted in the rest state at quadrature point 1", "det J = -"},
    {"bad_tetgen_o2_short.ele", "bad_tetgen_o2_short.ele:3", "10 nodes, 0 attributes': expected 11 values, found 10"},
    {"bad_degenerate.msh", "element 0 (record 1", "degenerate"},
    {"bad_duplicate.msh", "duplicate node tag 2", "lines 7 and 8"},
    {"bad_huge_count.msh", ":5", "truncated"},
    {"bad_no_tets.msh", "no volume elements", "and no 3-node triangles (type 2)"},
    {"bad_sheet_degenerate.msh", "element 1 (record 3, tri3, 0-based nodes 0 1 3) is degenerate", "1 of the 2 elements"},
    {"bad_sheet_quad.msh", ":15 ($Elements, element 2)", "element type 3 (4-node quadrangle) in a sheet mesh"},
    {"bad_sheet_group_quad.msh", ":20 ($Elements, element 2)", "element type 3 (4-node quadrangle) in the sheet group \"sheet_cloth\""},
    {"bad_version.msh", ":2", "unsupported MSH version 3.0"},
    {"bad_index.ele", "bad_index.ele:2", "element 1 references node 9"},
    {"bad_inverted.msh", "element 1 (record 2", "is inverted in the rest state: 1 of the 3"},
    {"bad_duplicate_element.msh", "elements 0 and 2 (records 1 and 3)", "duplicates"},
    {"bad_empty.msh", "bad_empty.msh", "empty file"},
    {"bad_empty_mesh.msh", ":5 ($Nodes)", "no nodes"},
    {"bad_empty_tetgen.node", "bad_empty_tetgen.node", "empty file"},
    {"nonexistent.msh", "cannot open", NULL},
    {"nonexistent", "cannot open", NULL},
    {"cube.geo", "unrecognised mesh format", "supported"},
  };

  PetscFunctionBeginUser;
  printf("malformed inputs:\n");
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) PetscCall(expect_failure(t, cases[i].file, cases[i].needle1, cases[i].needle2));
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
  PetscCall(test_kind_boxes(&t));
  PetscCall(test_mixed_kinds(&t));
  PetscCall(test_tetgen_o2(&t));
  PetscCall(test_sheets(&t));
  PetscCall(test_sheet_validation(&t));
  PetscCall(test_malformed(&t));
  PetscCall(test_fuzz(&t));
  printf("test_readers: %d checks passed%s\n", t.passed, t.failed ? "" : "");
  if (t.failed) printf("test_readers: %d checks FAILED\n", t.failed);
  PetscCall(PetscFinalize());
  return t.failed ? 1 : 0;
}
