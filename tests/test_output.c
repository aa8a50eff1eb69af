/* Unit test of src/io/output.c: writes small result files from any number of ranks (rows shuffled
 * and, with >= 2 ranks, split into non-contiguous runs), reads them back with the serial HDF5 API on
 * rank 0 and compares every dataset and attribute exactly; checks the XDMF companion, the
 * .partial/rename protocol and the error messages. */
#include "io/output.h"

#include <errno.h>
#include <hdf5.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  int checks, failures;
} tally;

#define CHECK(t, cond, ...)                                                                                  \
  do {                                                                                                       \
    (t)->checks++;                                                                                           \
    if (!(cond)) {                                                                                           \
      (t)->failures++;                                                                                       \
      fprintf(stderr, "test_output: FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);                         \
      fprintf(stderr, __VA_ARGS__);                                                                          \
      fputc('\n', stderr);                                                                                   \
    }                                                                                                        \
  } while (0)

/* ---- made-up global data, a function of the global index so rank 0 can rebuild it --------------- */

static double rest_value(int64_t i, int c) { return 0.5 * (double)i + 0.25 * c + 1.0 / 3.0; }
static double frame_value(int f, int64_t i, int c) { return rest_value(i, c) + (f + 1) * 1e-3 * (double)(i - c); }
static int32_t color_value(int64_t i) { return (int32_t)(i % 4); }
static int64_t tet_value(int64_t e, int k, int64_t N) { return (e * 3 + k * (k + 1)) % N; }
static double cell_value(int f, int64_t e, int c) { return 1e-3 * (double)(f + 1) + 0.125 * (double)e - 0.5 * c; }
static double target_value(int f, int64_t i, int c) { return frame_value(f, i, c) - 0.0625 * (double)(i % 3) * c; }
static double stiffness_value(int f, int64_t i, int c) { return (void)f, (void)c, i % 3 ? 0.0 : 2.5e4 + (double)i; }

/* Rank r owns blocks r and r + size of 2*size equal blocks: two runs per rank when size >= 2. */
static int owner_blocks(int64_t i, int64_t N, int size)
{
  int64_t b = i * 2 * size / N;
  return (int)(b % size);
}

/* Scattered ownership (many runs per rank with >= 2 ranks). */
static int owner_scattered(int64_t i, int64_t N, int size)
{
  (void)N;
  return (int)(((i * 7919) % 13) % size);
}

/* Runs of 17 rows dealt round-robin (> 1024 runs of >= 16 rows per rank for N = 40000, 2 ranks). */
static int owner_strips(int64_t i, int64_t N, int size)
{
  (void)N;
  return (int)((i / 17) % size);
}

/* The rows this rank owns, in a shuffled order. */
static PetscErrorCode local_rows(int64_t N, int rank, int size, int (*owner)(int64_t, int64_t, int), int64_t *n,
                                 int64_t **rows)
{
  int64_t k = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)N + 1, rows));
  for (int64_t i = 0; i < N; ++i)
    if (owner(i, N, size) == rank) (*rows)[k++] = i;
  for (int64_t i = 0; i + 1 < k; i += 2) { /* swap pairs, then reverse: clearly unsorted */
    int64_t t = (*rows)[i];
    (*rows)[i] = (*rows)[i + 1];
    (*rows)[i + 1] = t;
  }
  for (int64_t i = 0; i < k / 2; ++i) {
    int64_t t = (*rows)[i];
    (*rows)[i] = (*rows)[k - 1 - i];
    (*rows)[k - 1 - i] = t;
  }
  *n = k;
  PetscFunctionReturn(0);
}

static pbng_output_info test_info(void)
{
  pbng_output_info info = {.material = "neohookean",
                           .youngs_modulus = 1.5e6,
                           .poisson_ratio = 0.45,
                           .density = 1070.0,
                           .gravity = {0.0, -9.81, 0.125},
                           .solver = "pbng",
                           .mode = "quasistatic",
                           .command_line = "pbng --mesh bar.msh --out \"x y.h5\"",
                           .element = NULL};
  return info;
}

/* ---- small file helpers ------------------------------------------------------------------------- */

/* buf = a + "/" + b; the test paths are short, overlong ones abort. */
static void join(char *buf, size_t len, const char *a, const char *b)
{
  int k = snprintf(buf, len, "%s/%s", a, b);
  if (k < 0 || (size_t)k >= len) {
    fprintf(stderr, "test_output: path too long\n");
    abort();
  }
}

static int file_exists(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0;
}

static char *slurp(const char *p, size_t *len)
{
  FILE *f = fopen(p, "rb");
  char *buf;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  if (len) *len = (size_t)n;
  return buf;
}

static int count_substr(const char *s, const char *sub)
{
  int n = 0;
  for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub)) ++n;
  return n;
}

/* ---- serial read-back (rank 0) ------------------------------------------------------------------ */

/* Reads a whole dataset; checks its rank and dims. Returns malloc'ed data or NULL. */
static void *read_dataset(tally *t, hid_t file, const char *path, hid_t memtype, size_t elsize, int rank,
                          hsize_t d0, hsize_t d1)
{
  hid_t dset = H5Dopen2(file, path, H5P_DEFAULT), space;
  hsize_t dims[2] = {0, 0};
  void *buf;
  int nd;
  CHECK(t, dset >= 0, "dataset %s missing", path);
  if (dset < 0) return NULL;
  space = H5Dget_space(dset);
  nd = H5Sget_simple_extent_ndims(space);
  H5Sget_simple_extent_dims(space, dims, NULL);
  H5Sclose(space);
  CHECK(t, nd == rank, "%s has rank %d, expected %d", path, nd, rank);
  CHECK(t, dims[0] == d0 && (rank == 1 || dims[1] == d1), "%s has dims %llu x %llu", path,
        (unsigned long long)dims[0], (unsigned long long)dims[1]);
  if (nd != rank || dims[0] != d0 || (rank == 2 && dims[1] != d1)) {
    H5Dclose(dset);
    return NULL;
  }
  buf = malloc(elsize * d0 * (rank == 2 ? d1 : 1) + 1);
  CHECK(t, H5Dread(dset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "cannot read %s", path);
  H5Dclose(dset);
  return buf;
}

static void check_attr_double(tally *t, hid_t loc, const char *name, double expect)
{
  double v = -12345.0;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  CHECK(t, a >= 0, "attribute %s missing", name);
  if (a < 0) return;
  CHECK(t, H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0 && v == expect, "attribute %s = %.17g, expected %.17g", name, v,
        expect);
  H5Aclose(a);
}

static void check_attr_int(tally *t, hid_t loc, const char *name, int expect)
{
  int v = -12345;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  CHECK(t, a >= 0, "attribute %s missing", name);
  if (a < 0) return;
  CHECK(t, H5Aread(a, H5T_NATIVE_INT, &v) >= 0 && v == expect, "attribute %s = %d, expected %d", name, v, expect);
  H5Aclose(a);
}

static void check_attr_string(tally *t, hid_t loc, const char *name, const char *expect)
{
  char buf[512] = "";
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT), type;
  CHECK(t, a >= 0, "attribute %s missing", name);
  if (a < 0) return;
  type = H5Aget_type(a);
  CHECK(t, H5Tget_class(type) == H5T_STRING && !H5Tis_variable_str(type) && H5Tget_size(type) < sizeof buf,
        "attribute %s is not a short fixed-length string", name);
  if (H5Tget_class(type) == H5T_STRING && !H5Tis_variable_str(type) && H5Tget_size(type) < sizeof buf) {
    CHECK(t, H5Aread(a, type, buf) >= 0, "cannot read attribute %s", name);
    buf[H5Tget_size(type)] = '\0';
    CHECK(t, strcmp(buf, expect) == 0, "attribute %s = '%s', expected '%s'", name, buf, expect);
  }
  H5Tclose(type);
  H5Aclose(a);
}

static void check_frame(tally *t, hid_t file, int f, const pbng_frame_info *fi, int64_t N)
{
  char gname[64], dname[80];
  double *pos;
  hid_t g;
  int bad = 0;

  snprintf(gname, sizeof gname, "/frames/%06d", f);
  join(dname, sizeof dname, gname, "positions");
  pos = read_dataset(t, file, dname, H5T_NATIVE_DOUBLE, sizeof(double), 2, (hsize_t)N, 3);
  for (int64_t i = 0; pos && i < N; ++i)
    for (int c = 0; c < 3; ++c) bad += pos[i * 3 + c] != frame_value(f, i, c);
  CHECK(t, pos && bad == 0, "%s: %d wrong values", dname, bad);
  free(pos);
  for (int k = 0; k < 2; ++k) {
    hid_t loc = k == 0 ? (g = H5Gopen2(file, gname, H5P_DEFAULT)) : (g = H5Dopen2(file, dname, H5P_DEFAULT));
    CHECK(t, loc >= 0, "cannot open %s", k == 0 ? gname : dname);
    if (loc < 0) continue;
    check_attr_double(t, loc, "time", fi->time);
    check_attr_int(t, loc, "iterations", fi->iterations);
    check_attr_double(t, loc, "residual", fi->residual);
    check_attr_double(t, loc, "relative_residual", fi->relative_residual);
    check_attr_double(t, loc, "seconds", fi->seconds);
    check_attr_double(t, loc, "energy", fi->energy);
    check_attr_int(t, loc, "converged", fi->converged);
    if (k == 0) H5Gclose(loc);
    else H5Dclose(loc);
  }
}

/* Reads the float64 dataset `path` [rows, cols] ([rows] when rank is 1) and compares it with value(f, row, column). */
static void check_doubles(tally *t, hid_t file, const char *path, int rank, int64_t rows, int cols, double (*value)(int, int64_t, int), int f)
{
  double *v = read_dataset(t, file, path, H5T_NATIVE_DOUBLE, sizeof(double), rank, (hsize_t)rows, (hsize_t)cols);
  int bad = 0;
  for (int64_t i = 0; v && i < rows; ++i)
    for (int c = 0; c < cols; ++c) bad += v[i * cols + c] != value(f, i, c);
  CHECK(t, v && bad == 0, "%s: %d wrong values", path, bad);
  free(v);
}

/* The frame fields of full_frame (handle_targets in frame 0 only) and /mesh/handle_stiffness. */
static void check_frame_fields(tally *t, hid_t file, int f, int64_t N, int64_t M)
{
  char name[80];

  snprintf(name, sizeof name, "/frames/%06d/plastic_strain", f);
  check_doubles(t, file, name, 2, M, 6, cell_value, f);
  snprintf(name, sizeof name, "/frames/%06d/handle_targets", f);
  if (f == 0) check_doubles(t, file, name, 2, N, 3, target_value, f);
  else CHECK(t, H5Lexists(file, name, H5P_DEFAULT) == 0, "%s written", name);
  check_doubles(t, file, "/mesh/handle_stiffness", 1, N, 1, stiffness_value, f);
}

/* ---- the main write/read round trip ------------------------------------------------------------- */

static const int frame_ids[2] = {0, 3};
static const pbng_frame_info frame_infos[2] = {{0.5, 7, 1.25e-9, 3.5e-10, 0.75, -12.5, 1},
                                               {1.25, 11, 2.5e-11, 4.0e-12, 1.5, -13.75, 0}};

/* This rank's node and element rows of write_full's files (owner_blocks, shuffled). */
typedef struct {
  int64_t n, m, *rows, *erows;
} ownership;

/* Opens a result of N nodes and M tetrahedra and writes its mesh datasets (handle_stiffness among them). */
static PetscErrorCode full_open(MPI_Comm comm, const char *path, int64_t N, int64_t M, ownership *o, pbng_output **out)
{
  int rank, size;
  int64_t fixed[3];
  double *rest, *stiffness;
  int32_t *color, *part;
  int64_t *tets;
  const pbng_output_info info = test_info();

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  PetscCall(local_rows(N, rank, size, owner_blocks, &o->n, &o->rows));
  PetscCall(local_rows(M, rank, size, owner_blocks, &o->m, &o->erows));
  PetscCall(PetscMalloc5(3 * o->n + 1, &rest, o->n + 1, &color, o->n + 1, &part, 4 * o->m + 1, &tets, o->n + 1, &stiffness));
  for (int64_t k = 0; k < o->n; ++k) {
    for (int c = 0; c < 3; ++c) rest[3 * k + c] = rest_value(o->rows[k], c);
    color[k] = color_value(o->rows[k]);
    part[k] = owner_blocks(o->rows[k], N, size);
    stiffness[k] = stiffness_value(0, o->rows[k], 0);
  }
  for (int64_t k = 0; k < o->m; ++k)
    for (int c = 0; c < 4; ++c) tets[4 * k + c] = tet_value(o->erows[k], c, N);

  PetscCall(pbng_output_open(comm, path, &info, N, M, out));
  PetscCall(pbng_output_write_nodes_double(*out, "rest_positions", 3, o->n, o->rows, rest));
  PetscCall(pbng_output_write_elements(*out, o->m, o->erows, tets, NULL));
  PetscCall(pbng_output_write_nodes_int32(*out, "color", o->n, o->rows, color));
  PetscCall(pbng_output_write_nodes_int32(*out, "/mesh/partition", o->n, o->rows, part));
  PetscCall(pbng_output_write_nodes_double(*out, "handle_stiffness", 1, o->n, o->rows, stiffness));
  /* every rank gives 9, N-1 duplicated and one rank-specific node: union is {0..size-1, 9, N-1} sorted */
  fixed[0] = N - 1;
  fixed[1] = 9 % N;
  fixed[2] = rank % N;
  PetscCall(pbng_output_write_fixed_nodes(*out, 3, fixed));
  PetscCall(PetscFree5(rest, color, part, tets, stiffness));
  PetscFunctionReturn(0);
}

/* Frame f: its positions, plastic_strain [M, 6] (element rows) and, in frame 0 only (released handles:
 * absent afterwards), handle_targets [N, 3]. */
static PetscErrorCode full_frame(pbng_output *out, const ownership *o, int f, const pbng_frame_info *fi)
{
  double *pos, *eps, *targets;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3(3 * o->n + 1, &pos, 6 * o->m + 1, &eps, 3 * o->n + 1, &targets));
  for (int64_t k = 0; k < o->n; ++k)
    for (int c = 0; c < 3; ++c) {
      pos[3 * k + c] = frame_value(f, o->rows[k], c);
      targets[3 * k + c] = target_value(f, o->rows[k], c);
    }
  for (int64_t k = 0; k < o->m; ++k)
    for (int c = 0; c < 6; ++c) eps[6 * k + c] = cell_value(f, o->erows[k], c);
  PetscCall(pbng_output_write_frame(out, f, o->n, o->rows, pos, fi));
  PetscCall(pbng_output_write_frame_cells_double(out, f, "plastic_strain", 6, o->m, o->erows, eps));
  if (f == 0) PetscCall(pbng_output_write_frame_nodes_double(out, f, "handle_targets", 3, o->n, o->rows, targets));
  PetscCall(PetscFree3(pos, eps, targets));
  PetscFunctionReturn(0);
}

static PetscErrorCode ownership_free(ownership *o)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(o->rows));
  PetscCall(PetscFree(o->erows));
  PetscFunctionReturn(0);
}

static PetscErrorCode write_full(MPI_Comm comm, const char *path, int64_t N, int64_t M, PetscBool success)
{
  ownership o;
  pbng_output *out;

  PetscFunctionBeginUser;
  PetscCall(full_open(comm, path, N, M, &o, &out));
  for (int f = 0; f < 2; ++f) PetscCall(full_frame(out, &o, frame_ids[f], &frame_infos[f]));
  PetscCall(pbng_output_close(&out, success));
  PetscCheck(out == NULL, PETSC_COMM_SELF, PETSC_ERR_PLIB, "close did not reset the handle");
  PetscCall(ownership_free(&o));
  PetscFunctionReturn(0);
}

static void check_full(tally *t, const char *path, const char *xdmf, int64_t N, int64_t M, int size)
{
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), root;
  const pbng_output_info info = test_info();
  double *rest;
  int32_t *ints;
  int64_t *tets, *fixed;
  int bad = 0;

  CHECK(t, file >= 0, "cannot open %s", path);
  if (file < 0) return;
  root = H5Gopen2(file, "/", H5P_DEFAULT);
  check_attr_string(t, root, "format", "pbng-1");
  check_attr_string(t, root, "material", info.material);
  check_attr_string(t, root, "solver", info.solver);
  check_attr_string(t, root, "mode", info.mode);
  check_attr_string(t, root, "command_line", info.command_line);
  check_attr_double(t, root, "youngs_modulus", info.youngs_modulus);
  check_attr_double(t, root, "poisson_ratio", info.poisson_ratio);
  check_attr_double(t, root, "density", info.density);
  check_attr_int(t, root, "frames_written", 2);
  {
    double g[3] = {0, 0, 0};
    hid_t a = H5Aopen(root, "gravity", H5P_DEFAULT), sp = a >= 0 ? H5Aget_space(a) : -1;
    CHECK(t, a >= 0 && H5Sget_simple_extent_npoints(sp) == 3, "gravity is not double[3]");
    if (a >= 0) {
      CHECK(t, H5Aread(a, H5T_NATIVE_DOUBLE, g) >= 0, "cannot read gravity");
      CHECK(t, memcmp(g, info.gravity, sizeof g) == 0, "gravity = %g %g %g", g[0], g[1], g[2]);
      H5Sclose(sp);
      H5Aclose(a);
    }
  }
  H5Gclose(root);

  rest = read_dataset(t, file, "/mesh/rest_positions", H5T_NATIVE_DOUBLE, sizeof(double), 2, (hsize_t)N, 3);
  for (int64_t i = 0; rest && i < N; ++i)
    for (int c = 0; c < 3; ++c) bad += rest[3 * i + c] != rest_value(i, c);
  CHECK(t, rest && bad == 0, "rest_positions: %d wrong values", bad);
  free(rest);

  bad = 0;
  tets = read_dataset(t, file, "/mesh/tetrahedra", H5T_NATIVE_INT64, sizeof(int64_t), 2, (hsize_t)M, 4);
  for (int64_t e = 0; tets && e < M; ++e)
    for (int c = 0; c < 4; ++c) bad += tets[4 * e + c] != tet_value(e, c, N);
  CHECK(t, tets && bad == 0, "tetrahedra: %d wrong values", bad);
  free(tets);

  bad = 0;
  ints = read_dataset(t, file, "/mesh/color", H5T_NATIVE_INT32, sizeof(int32_t), 1, (hsize_t)N, 1);
  for (int64_t i = 0; ints && i < N; ++i) bad += ints[i] != color_value(i);
  CHECK(t, ints && bad == 0, "color: %d wrong values", bad);
  free(ints);

  bad = 0;
  ints = read_dataset(t, file, "/mesh/partition", H5T_NATIVE_INT32, sizeof(int32_t), 1, (hsize_t)N, 1);
  for (int64_t i = 0; ints && i < N; ++i) bad += ints[i] != owner_blocks(i, N, size);
  CHECK(t, ints && bad == 0, "partition: %d wrong values", bad);
  free(ints);

  {
    int64_t expect[64];
    int K = 0;
    for (int64_t i = 0; i < N; ++i)
      if (i < size || i == 9 || i == N - 1) expect[K++] = i;
    fixed = read_dataset(t, file, "/mesh/fixed_nodes", H5T_NATIVE_INT64, sizeof(int64_t), 1, (hsize_t)K, 1);
    CHECK(t, fixed && memcmp(fixed, expect, sizeof(int64_t) * (size_t)K) == 0, "fixed_nodes differ");
    free(fixed);
  }
  for (int f = 0; f < 2; ++f) {
    check_frame(t, file, frame_ids[f], &frame_infos[f], N);
    check_frame_fields(t, file, frame_ids[f], N, M);
  }
  CHECK(t, H5Fclose(file) >= 0, "cannot close %s", path);

  {
    char *x = slurp(xdmf, NULL);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char ref[512];
    CHECK(t, x != NULL, "XDMF %s missing", xdmf);
    if (!x) return;
    CHECK(t, strstr(x, "<Xdmf") && strstr(x, "</Xdmf>") && strstr(x, "<Xdmf") < strstr(x, "</Xdmf>"),
          "XDMF root element");
    CHECK(t, strstr(x, "Version=\"3.0\""), "XDMF version");
    CHECK(t, strstr(x, "CollectionType=\"Temporal\""), "temporal collection");
    CHECK(t, count_substr(x, "<Grid") == 3 && count_substr(x, "</Grid>") == 3, "3 grids");
    CHECK(t, count_substr(x, "<DataItem") == count_substr(x, "</DataItem>"), "balanced DataItem");
    /* rest_position, color, partition, handle_stiffness and plastic_strain in both grids, handle_targets in frame 0's */
    CHECK(t, count_substr(x, "<Attribute ") == 11 && count_substr(x, "</Attribute>") == 11, "11 attributes");
    /* plastic_strain (Voigt columns) as the full tensor, joined from column hyperslabs xx xy xz / xy yy yz / xz yz zz */
    CHECK(t, count_substr(x, "Name=\"plastic_strain\" AttributeType=\"Tensor\" Center=\"Cell\"") == 2, "plastic_strain cell attributes");
    snprintf(ref, sizeof ref, "Function=\"JOIN($0, $1, $2, $3, $4, $5, $6, $7, $8)\" Dimensions=\"%" PRId64 " 9\"", M);
    CHECK(t, count_substr(x, ref) == 2, "XDMF joins plastic_strain: %s", ref);
    {
      static const int column[9] = {0, 5, 4, 5, 1, 3, 4, 3, 2};
      const char *at = x;
      for (int k = 0; k < 18 && at; ++k) {
        snprintf(ref, sizeof ref, "<DataItem Dimensions=\"3 2\" Format=\"XML\">0 %d 1 1 %" PRId64 " 1</DataItem>", column[k % 9], M);
        at = strstr(at, ref);
        CHECK(t, at, "XDMF hyperslab %d of plastic_strain: %s", k, ref);
        if (at) at += strlen(ref);
      }
    }
    CHECK(t, count_substr(x, "Name=\"handle_targets\" AttributeType=\"Vector\" Center=\"Node\"") == 1, "one handle_targets attribute");
    CHECK(t, count_substr(x, "Name=\"handle_stiffness\" AttributeType=\"Scalar\" Center=\"Node\"") == 2, "handle_stiffness attributes");
    for (int f = 0; f < 2; ++f) {
      snprintf(ref, sizeof ref, "Dimensions=\"%" PRId64 " 6\">%s:/frames/%06d/plastic_strain<", M, base, frame_ids[f]);
      CHECK(t, count_substr(x, ref) == 9, "XDMF references %s in 9 hyperslabs", ref);
      snprintf(ref, sizeof ref, "Dimensions=\"%" PRId64 " 3\">%s:/frames/%06d/handle_targets<", N, base, frame_ids[f]);
      CHECK(t, count_substr(x, ref) == (f == 0), "XDMF references %s %s", ref, f == 0 ? "once" : "not at all (not in that frame)");
    }
    {
      const char *g3 = strstr(x, "frame_000003"), *targets = strstr(x, "handle_targets\" AttributeType");
      CHECK(t, g3 && targets && targets < g3, "handle_targets shown in frame 0's grid");
    }
    CHECK(t, strstr(x, "<Time Value=\"0.5\"/>") && strstr(x, "<Time Value=\"1.25\"/>"), "frame times");
    snprintf(ref, sizeof ref, "%s:/frames/000000/positions", base);
    CHECK(t, strstr(x, ref), "XDMF references %s", ref);
    snprintf(ref, sizeof ref, "%s:/frames/000003/positions", base);
    CHECK(t, strstr(x, ref), "XDMF references %s", ref);
    snprintf(ref, sizeof ref, "%s:/mesh/tetrahedra", base);
    CHECK(t, count_substr(x, ref) == 2, "XDMF references %s twice", ref);
    snprintf(ref, sizeof ref, "%s:/mesh/rest_positions", base);
    CHECK(t, strstr(x, ref) && strstr(x, "Name=\"rest_position\""), "rest_position attribute");
    CHECK(t, strstr(x, "Name=\"color\"") && strstr(x, "Name=\"partition\""), "color/partition attributes");
    CHECK(t, strstr(x, "TopologyType=\"Tetrahedron\" NumberOfElements=\"3\" NodesPerElement=\"4\""), "topology");
    CHECK(t, strstr(x, "GeometryType=\"XYZ\""), "geometry");
    CHECK(t, strstr(x, "Dimensions=\"3 4\""), "tetrahedra dims");
    CHECK(t, !strchr(base, '/') && !strstr(x, "//"), "relative reference");
    free(x);
  }
}

/* ---- cell fields of other element kinds: shown only where each element is one XDMF cell ---------- */

/* A file of 20 nodes and two elements of kinds kinds[0], kinds[1] (mixed when they differ), each on the
 * first nodes, and a cell field [2, 6] in its one frame; element e on rank e % size. */
static PetscErrorCode write_kinds(MPI_Comm comm, const char *path, const pbng_element_kind kinds[2])
{
  enum { N = 20, M = 2 };
  const int mixed = kinds[0] != kinds[1];
  const int nen = PetscMax(pbng_element_type_get(kinds[0])->nodes, pbng_element_type_get(kinds[1])->nodes);
  int rank, size;
  int64_t count[PBNG_ELEMENT_KIND_COUNT] = {0}, rows[N], erows[M], conn[M * N], m = 0, n = 0;
  uint8_t kind[M];
  double rest[3 * N], pos[3 * N], eps[6 * M];
  pbng_output_info info = test_info();
  pbng_output *out;

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int e = 0; e < M; ++e) {
    count[kinds[e]]++;
    if (e % size != rank) continue;
    erows[m] = e, kind[m] = (uint8_t)kinds[e];
    for (int j = 0; j < nen; ++j) conn[m * nen + j] = j < pbng_element_type_get(kinds[e])->nodes ? j : -1;
    for (int c = 0; c < 6; ++c) eps[6 * m + c] = cell_value(0, e, c);
    ++m;
  }
  for (int64_t i = 0; i < N && rank == 0; ++i, ++n) {
    rows[i] = i;
    for (int c = 0; c < 3; ++c) rest[3 * i + c] = rest_value(i, c), pos[3 * i + c] = frame_value(0, i, c);
  }
  info.element = mixed ? NULL : pbng_element_type_get(kinds[0]);
  info.mixed_nen = mixed ? nen : 0;
  info.kind_count = count;
  PetscCall(pbng_output_open(comm, path, &info, N, M, &out));
  PetscCall(pbng_output_write_nodes_double(out, "rest_positions", 3, n, rows, rest));
  PetscCall(pbng_output_write_elements(out, m, erows, conn, mixed ? kind : NULL));
  PetscCall(pbng_output_write_frame(out, 0, n, rows, pos, &frame_infos[0]));
  PetscCall(pbng_output_write_frame_cells_double(out, 0, "plastic_strain", 6, m, erows, eps));
  PetscCall(pbng_output_close(&out, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* Per case: the dataset is written; the XDMF shows it where every element draws one cell (tet10: its
 * own cell in another node order; tet4 and hex8 mixed) and not where cells and elements differ (tet20:
 * 27 sub-tetrahedra each; mixed with tet20). */
static PetscErrorCode kinds_cell_fields(tally *t, MPI_Comm comm, const char *dir)
{
  static const struct {
    pbng_element_kind kinds[2];
    int shown;
  } cases[] = {{{PBNG_ELEMENT_TET10, PBNG_ELEMENT_TET10}, 1},
               {{PBNG_ELEMENT_TET20, PBNG_ELEMENT_TET20}, 0},
               {{PBNG_ELEMENT_TET4, PBNG_ELEMENT_HEX8}, 1},
               {{PBNG_ELEMENT_TET4, PBNG_ELEMENT_TET20}, 0}};
  char path[PETSC_MAX_PATH_LEN], xdmf[PETSC_MAX_PATH_LEN];
  int rank;

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    char name[32];
    snprintf(name, sizeof name, "kinds%zu.h5", k);
    join(path, sizeof path, dir, name);
    snprintf(name, sizeof name, "kinds%zu.xdmf", k);
    join(xdmf, sizeof xdmf, dir, name);
    PetscCall(write_kinds(comm, path, cases[k].kinds));
    if (rank) continue;
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(t, file >= 0, "cannot open %s", path);
    if (file >= 0) check_doubles(t, file, "/frames/000000/plastic_strain", 2, 2, 6, cell_value, 0);
    if (file >= 0) H5Fclose(file);
    char *x = slurp(xdmf, NULL);
    CHECK(t, x && (strstr(x, "Name=\"plastic_strain\" AttributeType=\"Tensor\" Center=\"Cell\"") != NULL) == cases[k].shown,
          "case %zu (%s, %s): plastic_strain %s in the XDMF", k, pbng_element_type_get(cases[k].kinds[0])->name,
          pbng_element_type_get(cases[k].kinds[1])->name, cases[k].shown ? "missing" : "shown");
    CHECK(t, x && (strstr(x, "/plastic_strain") != NULL) == cases[k].shown, "case %zu: plastic_strain referenced: %d", k, !cases[k].shown);
    free(x);
  }
  PetscFunctionReturn(0);
}

/* ---- a suspended run resumed: the kept frames' fields stay in the XDMF -------------------------- */

static PetscErrorCode suspend_resume(tally *t, MPI_Comm comm, const char *dir)
{
  const int64_t N = 10, M = 3;
  char path[PETSC_MAX_PATH_LEN], xdmf[PETSC_MAX_PATH_LEN];
  pbng_frame_info fi[3] = {frame_infos[0], frame_infos[0], frame_infos[0]};
  const pbng_output_info info = test_info();
  pbng_output *out;
  ownership o;
  int rank;

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  join(path, sizeof path, dir, "resumed.h5");
  join(xdmf, sizeof xdmf, dir, "resumed.xdmf");
  for (int f = 0; f < 3; ++f) fi[f].time = 1.0 + f;
  PetscCall(full_open(comm, path, N, M, &o, &out));
  for (int f = 0; f < 3; ++f) PetscCall(full_frame(out, &o, f, &fi[f]));
  PetscCall(pbng_output_suspend(&out));
  PetscCall(pbng_output_resume(comm, path, &info, N, M, 2, &out)); /* frame 2 dropped, written again */
  PetscCall(full_frame(out, &o, 2, &fi[2]));
  PetscCall(pbng_output_close(&out, PETSC_TRUE));
  PetscCall(ownership_free(&o));
  if (rank == 0) {
    char *x = slurp(xdmf, NULL);
    CHECK(t, x != NULL, "XDMF %s missing", xdmf);
    if (x) {
      CHECK(t, count_substr(x, "<Grid Name=\"frame_") == 3, "3 frames after the resume");
      CHECK(t, count_substr(x, "Name=\"plastic_strain\"") == 3, "plastic_strain in every frame after the resume");
      CHECK(t, count_substr(x, "Name=\"handle_targets\"") == 1 && strstr(x, "resumed.h5:/frames/000000/handle_targets"),
            "handle_targets in frame 0 only after the resume");
      CHECK(t, count_substr(x, "Name=\"handle_stiffness\"") == 3, "handle_stiffness recalled");
      free(x);
    }
  }
  PetscFunctionReturn(0);
}

/* ---- scattered ownership, no ".h5" suffix ------------------------------------------------------ */

static PetscErrorCode write_scattered(MPI_Comm comm, const char *path, int64_t N, int (*owner)(int64_t, int64_t, int))
{
  int rank, size;
  int64_t n, *rows, M = 1, erow = 0, conn[4] = {0, 1, 2, 3};
  double *rest, *pos;
  pbng_output *out;
  const pbng_output_info info = test_info();

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  PetscCall(local_rows(N, rank, size, owner, &n, &rows));
  PetscCall(PetscMalloc2(3 * n + 1, &rest, 3 * n + 1, &pos));
  for (int64_t k = 0; k < n; ++k)
    for (int c = 0; c < 3; ++c) {
      rest[3 * k + c] = rest_value(rows[k], c);
      pos[3 * k + c] = frame_value(0, rows[k], c);
    }
  PetscCall(pbng_output_open(comm, path, &info, N, M, &out));
  PetscCall(pbng_output_write_nodes_double(out, "rest_positions", 3, n, rows, rest));
  PetscCall(pbng_output_write_elements(out, rank == size - 1, &erow, conn, NULL)); /* only the last rank has it */
  PetscCall(pbng_output_write_fixed_nodes(out, 0, NULL));
  PetscCall(pbng_output_write_frame(out, 0, n, rows, pos, &frame_infos[0]));
  PetscCall(pbng_output_close(&out, PETSC_TRUE));
  PetscCall(PetscFree2(rest, pos));
  PetscCall(PetscFree(rows));
  PetscFunctionReturn(0);
}

static void check_scattered(tally *t, const char *path, int64_t N)
{
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  double *rest, *pos;
  int64_t *fixed;
  int bad = 0;

  CHECK(t, file >= 0, "cannot open %s", path);
  if (file < 0) return;
  rest = read_dataset(t, file, "/mesh/rest_positions", H5T_NATIVE_DOUBLE, sizeof(double), 2, (hsize_t)N, 3);
  pos = read_dataset(t, file, "/frames/000000/positions", H5T_NATIVE_DOUBLE, sizeof(double), 2, (hsize_t)N, 3);
  for (int64_t i = 0; rest && pos && i < N; ++i)
    for (int c = 0; c < 3; ++c) bad += rest[3 * i + c] != rest_value(i, c) || pos[3 * i + c] != frame_value(0, i, c);
  CHECK(t, rest && pos && bad == 0, "scattered: %d wrong values", bad);
  free(rest);
  free(pos);
  fixed = read_dataset(t, file, "/mesh/fixed_nodes", H5T_NATIVE_INT64, sizeof(int64_t), 1, 0, 1);
  free(fixed);
  H5Fclose(file);
}

/* ---- expected failures -------------------------------------------------------------------------- */

/* Runs 'ierr' already obtained under PetscReturnErrorHandler; checks the message mentions 'needle'. */
static void check_error(tally *t, PetscErrorCode ierr, const char *what, const char *needle)
{
  const char *text = NULL;
  char *specific = NULL;
  CHECK(t, ierr != 0, "%s should fail", what);
  PetscErrorMessage(ierr, &text, &specific);
  CHECK(t, specific && strstr(specific, needle), "%s: message '%s' does not mention '%s'", what,
        specific ? specific : "(none)", needle);
}

static PetscErrorCode failing_open(MPI_Comm comm, const char *path, pbng_output **out)
{
  const pbng_output_info info = test_info();
  return pbng_output_open(comm, path, &info, 10, 3, out);
}

static PetscErrorCode expected_failures(tally *t, MPI_Comm comm, const char *dir)
{
  char path[PETSC_MAX_PATH_LEN], regular[PETSC_MAX_PATH_LEN];
  pbng_output *out = NULL;
  PetscErrorCode ierr;
  int rank, size;

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* non-existent directory */
  join(path, sizeof path, dir, "no_such_dir/out.h5");
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = failing_open(comm, path, &out);
  PetscCall(PetscPopErrorHandler());
  check_error(t, ierr, "open in a missing directory", path);
  check_error(t, ierr, "open in a missing directory", "does not exist");
  CHECK(t, out == NULL, "handle set after failed open");

  /* parent is a regular file */
  join(regular, sizeof regular, dir, "regular_file");
  if (rank == 0) {
    FILE *f = fopen(regular, "w");
    if (f) fclose(f);
  }
  MPI_Barrier(comm);
  join(path, sizeof path, regular, "out.h5");
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = failing_open(comm, path, &out);
  PetscCall(PetscPopErrorHandler());
  check_error(t, ierr, "open below a regular file", path);
  check_error(t, ierr, "open below a regular file", "not a directory");

  /* bad rows in the middle of a file: error names the dataset; close(false) cleans up */
  join(path, sizeof path, dir, "bad_rows.h5");
  PetscCall(failing_open(comm, path, &out));
  {
    int64_t rows[1] = {rank == 0 ? 10 : 0};
    double xyz[3] = {0, 0, 0};
    int32_t c = 0;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = pbng_output_write_nodes_double(out, "rest_positions", 3, 1, rows, xyz);
    PetscCall(PetscPopErrorHandler());
    check_error(t, ierr, "row out of range", "rest_positions");
    rows[0] = rank; /* all ranks valid now, but the total is not N = 10 */
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = pbng_output_write_nodes_int32(out, "color", 1, rows, &c);
    PetscCall(PetscPopErrorHandler());
    check_error(t, ierr, "row count mismatch", "color");
    if (size > 1) { /* the right count, but row 0 from two ranks (and row 9 from none) */
      const int64_t twice[5][2] = {{0, 0}, {2, 1}, {4, 3}, {6, 5}, {8, 7}};
      int64_t mine[5];
      int32_t v[5] = {0};
      const int64_t n = rank < 2 ? 5 : 0;
      for (int i = 0; i < 5; ++i) mine[i] = twice[i][rank < 2 ? rank : 0];
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = pbng_output_write_nodes_int32(out, "partition", n, mine, v);
      PetscCall(PetscPopErrorHandler());
      check_error(t, ierr, "a row from two ranks", "row 0 given by two ranks");
    }
  }
  { /* frame fields: not before their frame; the same columns in every frame */
    const int64_t nrows = rank == 0 ? 10 : 0, nelems = rank == 0 ? 3 : 0;
    int64_t rows[10];
    double xyz[30] = {0};
    for (int i = 0; i < 10; ++i) rows[i] = i;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = pbng_output_write_frame_nodes_double(out, 0, "handle_targets", 3, nrows, rows, xyz);
    PetscCall(PetscPopErrorHandler());
    check_error(t, ierr, "frame field before its frame", "positions are not written yet");
    for (int f = 0; f < 2; ++f) {
      PetscCall(pbng_output_write_frame(out, f, nrows, rows, xyz, &frame_infos[f]));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = pbng_output_write_frame_cells_double(out, f, "plastic_strain", f == 0 ? 6 : 3, nelems, rows, xyz);
      PetscCall(PetscPopErrorHandler());
      if (f == 0) CHECK(t, ierr == 0, "plastic_strain of frame 0 refused");
      else check_error(t, ierr, "a frame field changing its columns", "earlier with 6 of float64 per element");
    }
  }
  CHECK(t, out != NULL, "handle lost after a failed write");
  PetscCall(pbng_output_close(&out, PETSC_FALSE));
  CHECK(t, out == NULL, "handle set after close");
  MPI_Barrier(comm);
  if (rank == 0) {
    char p2[PETSC_MAX_PATH_LEN + 16];
    CHECK(t, !file_exists(path), "%s exists after a failed run", path);
    snprintf(p2, sizeof p2, "%s.partial", path);
    CHECK(t, !file_exists(p2), "%s exists after a failed run", p2);
  }
  PetscFunctionReturn(0);
}

/* A run that ends with success = false leaves an earlier file at the requested path untouched. */
static PetscErrorCode failed_run_keeps_old(tally *t, MPI_Comm comm, const char *dir)
{
  char path[PETSC_MAX_PATH_LEN], partial[PETSC_MAX_PATH_LEN + 16], xdmf[PETSC_MAX_PATH_LEN];
  static const char sentinel[] = "earlier result \x01\x02\x03 do not touch\n";
  int rank;

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  join(path, sizeof path, dir, "failed.h5");
  snprintf(partial, sizeof partial, "%s.partial", path);
  join(xdmf, sizeof xdmf, dir, "failed.xdmf");
  if (rank == 0) {
    FILE *f = fopen(path, "wb");
    CHECK(t, f && fwrite(sentinel, 1, sizeof sentinel, f) == sizeof sentinel, "cannot write sentinel");
    if (f) fclose(f);
    (void)remove(xdmf);
  }
  MPI_Barrier(comm);
  PetscCall(write_full(comm, path, 10, 3, PETSC_FALSE));
  if (rank == 0) {
    size_t len = 0;
    char *bytes = slurp(path, &len);
    CHECK(t, bytes && len == sizeof sentinel && memcmp(bytes, sentinel, len) == 0, "earlier file was modified");
    free(bytes);
    CHECK(t, !file_exists(partial), "%s remains", partial);
    CHECK(t, !file_exists(xdmf), "%s was created", xdmf);
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  tally t = {0, 0};
  int rank, size, failures = 0, checks = 0;
  char dir[PETSC_MAX_PATH_LEN], path[PETSC_MAX_PATH_LEN], xdmf[PETSC_MAX_PATH_LEN],
    partial[PETSC_MAX_PATH_LEN + 16];
  const char *tmp = getenv("PBNG_TEST_TMP");
  MPI_Comm comm;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  comm = PETSC_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (!tmp || !tmp[0]) tmp = "/tmp";
  snprintf(dir, sizeof dir, "%s/test_output_np%d", tmp, size);
  if (rank == 0) {
    (void)mkdir(tmp, 0777);
    (void)mkdir(dir, 0777);
  }
  MPI_Barrier(comm);

  /* 1. full round trip */
  join(path, sizeof path, dir, "result.h5");
  join(xdmf, sizeof xdmf, dir, "result.xdmf");
  snprintf(partial, sizeof partial, "%s.partial", path);
  PetscCall(write_full(comm, path, 10, 3, PETSC_TRUE));
  if (rank == 0) {
    char xp[PETSC_MAX_PATH_LEN + 16];
    check_full(&t, path, xdmf, 10, 3, size);
    snprintf(xp, sizeof xp, "%s.partial", xdmf);
    CHECK(&t, !file_exists(partial) && !file_exists(xp), "partial files remain");
  }
  /* writing again over an existing result replaces it */
  PetscCall(write_full(comm, path, 10, 3, PETSC_TRUE));
  if (rank == 0) check_full(&t, path, xdmf, 10, 3, size);

  /* 2. scattered ownership, many runs, suffix other than .h5 (rewritten in place) */
  join(path, sizeof path, dir, "scattered.res");
  PetscCall(write_scattered(comm, path, 20000, owner_scattered)); /* short runs: point selections */
  if (rank == 0) {
    char xp[PETSC_MAX_PATH_LEN + 16];
    check_scattered(&t, path, 20000);
    snprintf(xp, sizeof xp, "%s.xdmf", path);
    CHECK(&t, file_exists(xp), "%s missing", xp);
  }
  PetscCall(write_scattered(comm, path, 40000, owner_strips)); /* many long runs: several hyperslab batches */
  if (rank == 0) check_scattered(&t, path, 40000);

  /* 3. cell fields of other kinds; fields after a resume */
  PetscCall(kinds_cell_fields(&t, comm, dir));
  PetscCall(suspend_resume(&t, comm, dir));

  /* 4. failures */
  PetscCall(failed_run_keeps_old(&t, comm, dir));
  PetscCall(expected_failures(&t, comm, dir));

  MPI_Allreduce(&t.failures, &failures, 1, MPI_INT, MPI_SUM, comm);
  MPI_Allreduce(&t.checks, &checks, 1, MPI_INT, MPI_SUM, comm);
  if (failures) PetscCall(PetscPrintf(comm, "test_output: %d of %d checks FAILED\n", failures, checks));
  else PetscCall(PetscPrintf(comm, "test_output: %d checks passed\n", checks));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
