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
    if (k == 0) H5Gclose(loc);
    else H5Dclose(loc);
  }
}

/* ---- the main write/read round trip ------------------------------------------------------------- */

static const int frame_ids[2] = {0, 3};
static const pbng_frame_info frame_infos[2] = {{0.5, 7, 1.25e-9, 3.5e-10, 0.75, -12.5},
                                               {1.25, 11, 2.5e-11, 4.0e-12, 1.5, -13.75}};

static PetscErrorCode write_full(MPI_Comm comm, const char *path, int64_t N, int64_t M, PetscBool success)
{
  int rank, size;
  int64_t n, m, *rows, *erows, *fixed;
  double *rest, *pos;
  int32_t *color, *part;
  int64_t *tets;
  pbng_output *out;
  const pbng_output_info info = test_info();

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  PetscCall(local_rows(N, rank, size, owner_blocks, &n, &rows));
  PetscCall(local_rows(M, rank, size, owner_blocks, &m, &erows));
  PetscCall(PetscMalloc5(3 * n + 1, &rest, 3 * n + 1, &pos, n + 1, &color, n + 1, &part, 4 * m + 1, &tets));
  for (int64_t k = 0; k < n; ++k) {
    for (int c = 0; c < 3; ++c) rest[3 * k + c] = rest_value(rows[k], c);
    color[k] = color_value(rows[k]);
    part[k] = owner_blocks(rows[k], N, size);
  }
  for (int64_t k = 0; k < m; ++k)
    for (int c = 0; c < 4; ++c) tets[4 * k + c] = tet_value(erows[k], c, N);

  PetscCall(pbng_output_open(comm, path, &info, N, M, &out));
  PetscCall(pbng_output_write_nodes_double(out, "rest_positions", 3, n, rows, rest));
  PetscCall(pbng_output_write_elements(out, m, erows, tets, NULL));
  PetscCall(pbng_output_write_nodes_int32(out, "color", n, rows, color));
  PetscCall(pbng_output_write_nodes_int32(out, "/mesh/partition", n, rows, part));
  /* every rank gives 9, N-1 duplicated and one rank-specific node: union is {0..size-1, 9, N-1} sorted */
  PetscCall(PetscMalloc1(3, &fixed));
  fixed[0] = N - 1;
  fixed[1] = 9 % N;
  fixed[2] = rank % N;
  PetscCall(pbng_output_write_fixed_nodes(out, 3, fixed));
  PetscCall(PetscFree(fixed));
  for (int f = 0; f < 2; ++f) {
    for (int64_t k = 0; k < n; ++k)
      for (int c = 0; c < 3; ++c) pos[3 * k + c] = frame_value(frame_ids[f], rows[k], c);
    PetscCall(pbng_output_write_frame(out, frame_ids[f], n, rows, pos, &frame_infos[f]));
  }
  PetscCall(pbng_output_close(&out, success));
  PetscCheck(out == NULL, PETSC_COMM_SELF, PETSC_ERR_PLIB, "close did not reset the handle");
  PetscCall(PetscFree5(rest, pos, color, part, tets));
  PetscCall(PetscFree(rows));
  PetscCall(PetscFree(erows));
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
  for (int f = 0; f < 2; ++f) check_frame(t, file, frame_ids[f], &frame_infos[f], N);
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
    CHECK(t, count_substr(x, "<Attribute ") == 6 && count_substr(x, "</Attribute>") == 6, "6 attributes");
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
  int rank;

  PetscFunctionBeginUser;
  MPI_Comm_rank(comm, &rank);
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

  /* 3. failures */
  PetscCall(failed_run_keeps_old(&t, comm, dir));
  PetscCall(expected_failures(&t, comm, dir));

  MPI_Allreduce(&t.failures, &failures, 1, MPI_INT, MPI_SUM, comm);
  MPI_Allreduce(&t.checks, &checks, 1, MPI_INT, MPI_SUM, comm);
  if (failures) PetscCall(PetscPrintf(comm, "test_output: %d of %d checks FAILED\n", failures, checks));
  else PetscCall(PetscPrintf(comm, "test_output: %d checks passed\n", checks));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
