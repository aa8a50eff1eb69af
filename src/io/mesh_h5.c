#include "io/mesh_h5.h"
#include "io/h5rows.h"
#include "io/h5util.h"
#include "parallel/slice_check.h"
#include "parallel/slice_sets.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Rows read at a time: the element rows pass through an int64 buffer of this many rows (32 MiB for tet4). */
enum { ROWS_PER_READ = 1 << 20 };

typedef struct {
  int64_t nnodes, nelems;
  const pbng_element_type *etype;
  const char *elements; /* the element dataset */
  int has_sets;
} mesh_h5_header;

static int link_exists(hid_t file, const char *path)
{
  char parent[64];
  const char *slash = strrchr(path, '/');
  snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
  return (!parent[0] || H5Lexists(file, parent, H5P_DEFAULT) > 0) && H5Lexists(file, path, H5P_DEFAULT) > 0;
}

/* The shape of a dataset of class cls, one- or two-dimensional (then dims[1] = 1); 0 when it is something else. */
static int dataset_shape(hid_t file, const char *path, H5T_class_t cls, int64_t dims[2])
{
  hid_t dset = H5Dopen2(file, path, H5P_DEFAULT), space = -1, type = -1;
  hsize_t d[2] = {0, 1};
  int ok = 0;
  if (dset >= 0) {
    space = H5Dget_space(dset), type = H5Dget_type(dset);
    const int rank = H5Sget_simple_extent_ndims(space);
    ok = (rank == 1 || rank == 2) && H5Tget_class(type) == cls && H5Sget_simple_extent_dims(space, d, NULL) >= 0;
  }
  dims[0] = (int64_t)d[0], dims[1] = (int64_t)d[1];
  pbng_h5_close(&type), pbng_h5_close(&space), pbng_h5_close(&dset);
  return ok;
}

/* The element kind of /mesh/elements: the root attribute element, one volume kind. */
static PetscErrorCode element_kind(hid_t file, const char *fname, const pbng_element_type **etype)
{
  char name[32] = "";

  PetscFunctionBeginUser;
  PetscCheck(pbng_h5_attr_read_string(file, "element", name, sizeof(name)) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: /mesh/elements without the root attribute element naming their kind", fname);
  *etype = strcmp(name, "mixed") ? pbng_element_type_by_name(name) : NULL;
  PetscCheck(strcmp(name, "mixed"), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: a mesh mixing element kinds: HDF5 meshes of one kind are read (Gmsh files mix them)", fname);
  PetscCheck(*etype, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: the root attribute element names '%s', not an element kind", fname, name);
  PetscCheck(!pbng_element_is_sheet(*etype), PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: %s sheets are not read from HDF5 meshes (volume kinds only; Gmsh files hold sheets)",
             fname, (*etype)->name);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_header(hid_t file, const char *fname, mesh_h5_header *h)
{
  int64_t xdims[2], edims[2];

  PetscFunctionBeginUser;
  memset(h, 0, sizeof(*h));
  PetscCheck(link_exists(file, "/mesh/rest_positions"), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: no /mesh/rest_positions: an HDF5 mesh has /mesh/rest_positions [N, 3] and /mesh/tetrahedra [M, 4] (docs/output.md)", fname);
  PetscCheck(dataset_shape(file, "/mesh/rest_positions", H5T_FLOAT, xdims) && xdims[1] == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: /mesh/rest_positions is not a floating-point [N, 3] dataset", fname);
  h->elements = link_exists(file, "/mesh/tetrahedra") ? "/mesh/tetrahedra" : "/mesh/elements";
  PetscCheck(link_exists(file, h->elements), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: neither /mesh/tetrahedra nor /mesh/elements", fname);
  if (!strcmp(h->elements, "/mesh/tetrahedra")) h->etype = pbng_element_type_get(PBNG_ELEMENT_TET4);
  else PetscCall(element_kind(file, fname, &h->etype));
  PetscCheck(dataset_shape(file, h->elements, H5T_INTEGER, edims) && edims[1] == h->etype->nodes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: %s is not an integer [M, %d] dataset (%s)", fname, h->elements, h->etype->nodes, h->etype->name);
  h->nnodes = xdims[0], h->nelems = edims[0];
  PetscCheck(h->nnodes > 0 && h->nelems > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %" PRId64 " nodes and %" PRId64 " elements: an empty mesh",
             fname, h->nnodes, h->nelems);
  PetscCheck(h->nnodes < INT32_MAX && h->nelems < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "%s: %" PRId64 " nodes and %" PRId64 " elements (at most 2^31 - 1 each)", fname, h->nnodes, h->nelems);
  h->has_sets = H5Lexists(file, "/sets", H5P_DEFAULT) > 0;
  PetscFunctionReturn(0);
}

int pbng_mesh_h5_probe(const char *path)
{
  pbng_h5_quiet_scope quiet;
  int yes = 0;

  if (!pbng_h5_has_signature(path)) return 0;
  pbng_h5_quiet(&quiet);
  hid_t file = pbng_h5_open(MPI_COMM_NULL, path, H5F_ACC_RDONLY);
  if (file >= 0) yes = link_exists(file, "/mesh/rest_positions") && (link_exists(file, "/mesh/tetrahedra") || link_exists(file, "/mesh/elements"));
  pbng_h5_close(&file);
  pbng_h5_restore(&quiet);
  return yes;
}

/* Element rows as read (int64) into the mesh's int32 rows, each node id checked against the node count. */
typedef struct {
  const char *fname;
  const mesh_h5_header *h;
  int32_t *rows;
  int64_t first;   /* the first row read (rows[0]'s record) */
  int64_t bad;     /* the first record with a node id out of range (INT64_MAX: none) */
  char msg[PETSC_MAX_PATH_LEN + 512];
} element_rows;

static void take_element_rows(element_rows *er, int64_t row, int64_t n, const int64_t *ids)
{
  const int nen = er->h->etype->nodes;
  for (int64_t k = 0; k < n * nen; ++k) {
    const int64_t record = row + k / nen;
    if ((ids[k] < 0 || ids[k] >= er->h->nnodes) && er->bad == INT64_MAX) {
      er->bad = record;
      snprintf(er->msg, sizeof(er->msg), "%s: element %" PRId64 " (record %" PRId64 ") references node %" PRId64 ", outside 0..%" PRId64, er->fname,
               record, record, ids[k], er->h->nnodes - 1);
    }
    er->rows[(row - er->first) * nen + k] = (int32_t)ids[k];
  }
}

/* Whether any process's read failed (MPI_COMM_NULL: this one's); the error says which dataset. */
static PetscErrorCode agree_on_read(MPI_Comm comm, PetscErrorCode ierr, const char *fname, const char *path)
{
  int failed = ierr != 0;

  PetscFunctionBeginUser;
  if (comm != MPI_COMM_NULL) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm));
  PetscCheck(!failed, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: cannot read the rows of %s (damaged file?)", fname, path);
  PetscFunctionReturn(0);
}

/* Rows [start, start + n) of `path` (ncols columns of memory type `type`), at most ROWS_PER_READ at a time, in `rounds`
 * reads on every process (collective; n = 0 reads nothing): straight into rows[n][ncols], or with er (element rows)
 * through rows (ROWS_PER_READ rows) to er. */
static PetscErrorCode read_in_rounds(MPI_Comm comm, hid_t file, const char *fname, const char *path, hid_t type, int ncols, int64_t start, int64_t n,
                                     int64_t rounds, void *rows, element_rows *er)
{
  const size_t row_bytes = H5Tget_size(type) * (size_t)ncols;

  PetscFunctionBeginUser;
  for (int64_t k = 0; k < rounds; ++k) {
    const int64_t row = PetscMin(start + k * ROWS_PER_READ, start + n), m = PetscMin((int64_t)ROWS_PER_READ, start + n - row);
    void *at = er ? rows : (char *)rows + (size_t)(row - start) * row_bytes;
    PetscCall(agree_on_read(comm, pbng_h5_collective_rows(file, fname, path, type, ncols, row, m, at, 0), fname, path));
    if (er) take_element_rows(er, row, m, rows);
  }
  PetscFunctionReturn(0);
}

/* The reads of n rows ROWS_PER_READ at a time, rounds[k] for n[k], as many as the largest share's on every process. */
static PetscErrorCode agreed_rounds(MPI_Comm comm, int count, const int64_t *n, int64_t *rounds)
{
  PetscFunctionBeginUser;
  for (int k = 0; k < count; ++k) rounds[k] = (n[k] + ROWS_PER_READ - 1) / ROWS_PER_READ;
  if (comm != MPI_COMM_NULL) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, rounds, count, MPI_INT64_T, MPI_MAX, comm));
  PetscFunctionReturn(0);
}

/* The rows of both datasets, nodes [nb, ne) and elements [eb, ee), read in as many rounds as the largest share. */
static PetscErrorCode read_rows(MPI_Comm comm, hid_t file, const char *fname, const mesh_h5_header *h, int64_t nb, int64_t ne, int64_t eb, int64_t ee,
                                double *X, int32_t *elems, int64_t *bad, char *msg, size_t len)
{
  const int64_t n[2] = {ne - nb, ee - eb};
  int64_t rounds[2], *ids;
  element_rows er = {.fname = fname, .h = h, .rows = elems, .first = eb, .bad = INT64_MAX};

  PetscFunctionBeginUser;
  PetscCall(agreed_rounds(comm, 2, n, rounds));
  PetscCall(PetscMalloc1((int64_t)PetscMin(ee - eb, ROWS_PER_READ) * h->etype->nodes + 1, &ids));
  PetscErrorCode ierr = read_in_rounds(comm, file, fname, "/mesh/rest_positions", H5T_NATIVE_DOUBLE, 3, nb, ne - nb, rounds[0], X, NULL);
  if (!ierr) ierr = read_in_rounds(comm, file, fname, h->elements, H5T_NATIVE_INT64, h->etype->nodes, eb, ee - eb, rounds[1], ids, &er);
  PetscCall(PetscFree(ids));
  PetscCall(ierr);
  *bad = er.bad;
  PetscCall(PetscStrncpy(msg, er.msg, len));
  PetscFunctionReturn(0);
}

static PetscErrorCode too_long_name(const char *fname, int most)
{
  PetscFunctionBeginUser;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /sets: a set name is longer than %d characters", fname, most);
}

static PetscErrorCode cannot_open(const char *path)
{
  PetscFunctionBeginUser;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: an HDF5 file that HDF5 cannot open (truncated or damaged?)", path);
}

/* The first of a set's entries ids[n] (ids[k] its entry first + k) that names no node of the mesh, INT64_MAX when none;
 * msg[len] then says which. */
static int64_t first_bad_entry(const char *fname, const char *path, int64_t nnodes, int64_t first, int64_t n, const int64_t *ids, char *msg, size_t len)
{
  for (int64_t k = 0; k < n; ++k)
    if (ids[k] < 0 || ids[k] >= nnodes) {
      snprintf(msg, len, "%s: %s: entry %" PRId64 " is node %" PRId64 ", outside 0..%" PRId64, fname, path, first + k, ids[k], nnodes - 1);
      return first + k;
    }
  return INT64_MAX;
}

/* One set's node ids as read, checked and narrowed. */
static PetscErrorCode set_nodes(const char *fname, const char *path, int64_t nnodes, int64_t n, const int64_t *ids, int32_t *nodes)
{
  char msg[PETSC_MAX_PATH_LEN + 256];

  PetscFunctionBeginUser;
  PetscCheck(first_bad_entry(fname, path, nnodes, 0, n, ids, msg, sizeof(msg)) == INT64_MAX, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s", msg);
  for (int64_t i = 0; i < n; ++i) nodes[i] = (int32_t)ids[i];
  PetscFunctionReturn(0);
}

/* The length of the set `name`'s dataset (an integer [K] dataset of node ids), its path in path[80]. */
static PetscErrorCode set_length(hid_t file, const char *fname, const char *name, char *path, int64_t *length)
{
  int64_t dims[2];

  PetscFunctionBeginUser;
  snprintf(path, 80, "/sets/%s", name);
  PetscCheck(dataset_shape(file, path, H5T_INTEGER, dims) && dims[1] == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: %s is not an integer [K] dataset of node ids", fname, path);
  *length = dims[0];
  PetscFunctionReturn(0);
}

/* The set `name` of /sets added to the mesh. */
static PetscErrorCode read_set(hid_t file, const char *fname, const char *name, pbng_mesh *mesh)
{
  char path[80];
  int64_t n = 0, *ids;
  int32_t *nodes;

  PetscFunctionBeginUser;
  PetscCall(set_length(file, fname, name, path, &n));
  PetscCall(PetscMalloc2(n + 1, &ids, n + 1, &nodes));
  PetscErrorCode ierr = pbng_h5_collective_rows(file, fname, path, H5T_NATIVE_INT64, 1, 0, n, ids, 0);
  if (!ierr) ierr = set_nodes(fname, path, mesh->nnodes, n, ids, nodes);
  if (!ierr) ierr = pbng_mesh_add_node_set(mesh, name, n, nodes);
  PetscCall(PetscFree2(ids, nodes));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* The names of /sets's datasets in increasing name order (the order of the mesh's sets): *names[*nsets] (PetscMalloc'd). */
static PetscErrorCode set_names(hid_t file, const char *fname, int *nsets, char (**names)[64])
{
  H5G_info_t info;
  hid_t group = H5Gopen2(file, "/sets", H5P_DEFAULT);
  PetscErrorCode ierr = 0;

  PetscFunctionBeginUser;
  PetscCheck(group >= 0 && H5Gget_info(group, &info) >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /sets is not a group", fname);
  PetscCheck(info.nlinks < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: /sets holds too many sets", fname);
  *nsets = (int)info.nlinks;
  PetscCall(PetscCalloc1(info.nlinks + 1, names));
  for (hsize_t k = 0; k < info.nlinks && !ierr; ++k) {
    const ssize_t len = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, k, (*names)[k], sizeof(**names), H5P_DEFAULT);
    if (len <= 0 || len >= (ssize_t)sizeof(**names)) ierr = too_long_name(fname, (int)sizeof(**names) - 1);
  }
  pbng_h5_close(&group);
  if (ierr) PetscCall(PetscFree(*names));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* /sets/<name>: every dataset of the group, a named node set. */
static PetscErrorCode read_sets(hid_t file, const char *fname, pbng_mesh *mesh)
{
  char(*names)[64];
  int nsets;
  PetscErrorCode ierr = 0;

  PetscFunctionBeginUser;
  PetscCall(set_names(file, fname, &nsets, &names));
  for (int t = 0; t < nsets && !ierr; ++t) ierr = read_set(file, fname, names[t], mesh);
  PetscCall(PetscFree(names));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_whole(hid_t file, const char *path, pbng_mesh *mesh)
{
  mesh_h5_header h;
  int64_t bad;
  char msg[PETSC_MAX_PATH_LEN + 512];

  PetscFunctionBeginUser;
  PetscCall(read_header(file, path, &h));
  PetscCall(pbng_mesh_alloc(mesh, h.etype->kind, h.nnodes, h.nelems));
  PetscCall(PetscStrncpy(mesh->source, path, sizeof(mesh->source)));
  PetscCall(read_rows(MPI_COMM_NULL, file, path, &h, 0, h.nnodes, 0, h.nelems, mesh->X, mesh->elems, &bad, msg, sizeof(msg)));
  PetscCheck(bad == INT64_MAX, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s", msg);
  if (h.has_sets) PetscCall(read_sets(file, path, mesh));
  PetscCall(pbng_mesh_validate(mesh, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_h5_read(const char *path, pbng_mesh *mesh)
{
  pbng_h5_quiet_scope quiet;

  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh));
  pbng_h5_quiet(&quiet);
  hid_t file = pbng_h5_open(MPI_COMM_NULL, path, H5F_ACC_RDONLY);
  PetscErrorCode ierr = file < 0 ? cannot_open(path) : read_whole(file, path, mesh);
  pbng_h5_close(&file);
  pbng_h5_restore(&quiet);
  if (ierr) PetscCall(pbng_mesh_destroy(mesh));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* This process's share of a set's K entries: rows K rank / size .. K (rank + 1) / size. */
static void set_share(MPI_Comm comm, int64_t length, int64_t *begin, int64_t *end)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  *begin = length * rank / size, *end = length * (rank + 1) / size;
}

/* This process's share of set t (/sets/<name>, its entries checked, every process stopping at the first bad one),
 * appended to pairs as (t, node id) from pairs[2 * *n]. */
static PetscErrorCode read_set_share(MPI_Comm comm, hid_t file, const char *fname, int64_t nnodes, int t, const char *path, int64_t length,
                                     int64_t *pairs, int64_t *n)
{
  int64_t begin, end, rounds, *ids;
  int failed = 0;
  char msg[PETSC_MAX_PATH_LEN + 256] = "";

  PetscFunctionBeginUser;
  set_share(comm, length, &begin, &end);
  PetscCall(agreed_rounds(comm, 1, (int64_t[]){end - begin}, &rounds));
  PetscCall(PetscMalloc1(end - begin + 1, &ids));
  PetscErrorCode ierr = read_in_rounds(comm, file, fname, path, H5T_NATIVE_INT64, 1, begin, end - begin, rounds, ids, NULL);
  const int64_t bad = ierr ? INT64_MAX : first_bad_entry(fname, path, nnodes, begin, end - begin, ids, msg, sizeof(msg));
  if (!ierr) ierr = pbng_agree_on_first_error(comm, bad, msg, sizeof(msg), &failed);
  if (!ierr && !failed)
    for (int64_t k = 0; k < end - begin; ++k) pairs[2 * (*n + k)] = t, pairs[2 * (*n + k) + 1] = ids[k];
  *n += end - begin;
  PetscCall(PetscFree(ids));
  PetscCall(ierr);
  PetscCheck(!failed, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s", msg);
  PetscFunctionReturn(0);
}

/* The node sets of /sets in the slices: every process reads its share of each set's entries, which go to the slices
 * holding their nodes (parallel/slice_sets.h). */
static PetscErrorCode read_slice_sets(MPI_Comm comm, hid_t file, const char *fname, pbng_mesh_slice *s)
{
  char(*names)[64], path[80];
  int nsets;
  int64_t *length, total = 0, n = 0, *pairs = NULL;

  PetscFunctionBeginUser;
  PetscCall(set_names(file, fname, &nsets, &names)); /* the same file: every process fails alike */
  PetscCall(pbng_mesh_slice_name_sets(s, nsets, (const char(*)[64])names));
  PetscCall(PetscMalloc1(nsets + 1, &length));
  for (int t = 0; t < nsets; ++t) {
    int64_t begin, end;
    PetscCall(set_length(file, fname, names[t], path, &length[t]));
    set_share(comm, length[t], &begin, &end);
    total += end - begin;
  }
  PetscCall(PetscMalloc1(2 * total + 1, &pairs));
  PetscErrorCode ierr = 0;
  for (int t = 0; t < nsets && !ierr; ++t) {
    snprintf(path, sizeof(path), "/sets/%s", names[t]);
    ierr = read_set_share(comm, file, fname, s->nglobal_nodes, t, path, length[t], pairs, &n);
  }
  if (!ierr) ierr = pbng_slice_sets_add_members(comm, s, n, pairs);
  PetscCall(PetscFree(pairs));
  PetscCall(PetscFree(length));
  PetscCall(PetscFree(names));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_slice(MPI_Comm comm, hid_t file, const char *path, pbng_mesh_slice *s)
{
  mesh_h5_header h;
  int rank, size, failed;
  int64_t bad;
  char msg[PETSC_MAX_PATH_LEN + 512];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(read_header(file, path, &h)); /* the same file: every process fails alike */
  s->nglobal_nodes = h.nnodes, s->nglobal_elems = h.nelems, s->etype = h.etype, s->nen = h.etype->nodes;
  s->node_begin = h.nnodes * rank / size, s->node_end = h.nnodes * (rank + 1) / size;
  s->elem_begin = h.nelems * rank / size, s->elem_end = h.nelems * (rank + 1) / size;
  PetscCall(PetscStrncpy(s->source, path, sizeof(s->source)));
  PetscCall(PetscMalloc1(3 * (s->node_end - s->node_begin) + 1, &s->X));
  PetscCall(PetscMalloc1((s->elem_end - s->elem_begin) * s->nen + 1, &s->elems));
  PetscCall(read_rows(comm, file, path, &h, s->node_begin, s->node_end, s->elem_begin, s->elem_end, s->X, s->elems, &bad, msg, sizeof(msg)));
  PetscCall(pbng_agree_on_first_error(comm, bad, msg, sizeof(msg), &failed));
  PetscCheck(!failed, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s", msg);
  if (h.has_sets) PetscCall(read_slice_sets(comm, file, path, s));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_h5_read_slice(MPI_Comm comm, const char *path, pbng_mesh_slice *s)
{
  pbng_h5_quiet_scope quiet;
  int opened;

  PetscFunctionBeginUser;
  memset(s, 0, sizeof(*s));
  PetscCheck(pbng_h5_has_signature(path), comm, PETSC_ERR_SUP,
             "%s: missing or not an HDF5 file: mesh files are read in slices from HDF5 meshes (/mesh/rest_positions, /mesh/tetrahedra); "
             "convert a Gmsh file with pbng-convert (docs/output.md#hdf5-mesh-input)", path);
  pbng_h5_quiet(&quiet);
  hid_t file = pbng_h5_open(comm, path, H5F_ACC_RDONLY);
  opened = file >= 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &opened, 1, MPI_INT, MPI_MIN, comm));
  PetscErrorCode ierr = !opened ? cannot_open(path) : read_slice(comm, file, path, s);
  if (opened) pbng_h5_close(&file); /* collective: every process reaches this alike (read_slice agrees on its errors) */
  pbng_h5_restore(&quiet);
  if (!ierr) ierr = pbng_slice_validate(comm, s);
  if (ierr) PetscCall(pbng_mesh_slice_destroy(s));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_file_read(const char *path, pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  if (pbng_h5_has_signature(path)) PetscCall(pbng_mesh_h5_read(path, mesh));
  else PetscCall(pbng_mesh_read(path, mesh));
  PetscFunctionReturn(0);
}
