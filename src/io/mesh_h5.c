#include "io/mesh_h5.h"
#include "io/h5rows.h"
#include "io/h5util.h"
#include "parallel/slice_check.h"
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

/* Rows [start, start + n) of `path` (ncols columns), at most ROWS_PER_READ at a time, in `rounds` reads on every
 * process (collective; n = 0 reads nothing). Node rows go straight to X; element rows through ids to er. */
static PetscErrorCode read_in_rounds(MPI_Comm comm, hid_t file, const char *fname, const char *path, int64_t start, int64_t n, int64_t rounds,
                                     double *X, int64_t *ids, element_rows *er)
{
  PetscFunctionBeginUser;
  for (int64_t k = 0; k < rounds; ++k) {
    const int64_t row = PetscMin(start + k * ROWS_PER_READ, start + n), m = PetscMin((int64_t)ROWS_PER_READ, start + n - row);
    const PetscErrorCode ierr = er ? pbng_h5_collective_rows(file, fname, path, H5T_NATIVE_INT64, er->h->etype->nodes, row, m, ids, 0)
                                   : pbng_h5_collective_rows(file, fname, path, H5T_NATIVE_DOUBLE, 3, row, m, &X[3 * (row - start)], 0);
    PetscCall(agree_on_read(comm, ierr, fname, path));
    if (er) take_element_rows(er, row, m, ids);
  }
  PetscFunctionReturn(0);
}

/* The rows of both datasets, nodes [nb, ne) and elements [eb, ee), read in as many rounds as the largest share. */
static PetscErrorCode read_rows(MPI_Comm comm, hid_t file, const char *fname, const mesh_h5_header *h, int64_t nb, int64_t ne, int64_t eb, int64_t ee,
                                double *X, int32_t *elems, int64_t *bad, char *msg, size_t len)
{
  int64_t rounds[2] = {(ne - nb + ROWS_PER_READ - 1) / ROWS_PER_READ, (ee - eb + ROWS_PER_READ - 1) / ROWS_PER_READ}, *ids;
  element_rows er = {.fname = fname, .h = h, .rows = elems, .first = eb, .bad = INT64_MAX};

  PetscFunctionBeginUser;
  if (comm != MPI_COMM_NULL) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, rounds, 2, MPI_INT64_T, MPI_MAX, comm));
  PetscCall(PetscMalloc1((int64_t)PetscMin(ee - eb, ROWS_PER_READ) * h->etype->nodes + 1, &ids));
  PetscErrorCode ierr = read_in_rounds(comm, file, fname, "/mesh/rest_positions", nb, ne - nb, rounds[0], X, NULL, NULL);
  if (!ierr) ierr = read_in_rounds(comm, file, fname, h->elements, eb, ee - eb, rounds[1], NULL, ids, &er);
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

/* One set's node ids as read, checked and narrowed. */
static PetscErrorCode set_nodes(const char *fname, const char *path, int64_t nnodes, int64_t n, const int64_t *ids, int32_t *nodes)
{
  PetscFunctionBeginUser;
  for (int64_t i = 0; i < n; ++i) {
    PetscCheck(ids[i] >= 0 && ids[i] < nnodes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s: entry %" PRId64 " is node %" PRId64 ", outside 0..%" PRId64,
               fname, path, i, ids[i], nnodes - 1);
    nodes[i] = (int32_t)ids[i];
  }
  PetscFunctionReturn(0);
}

/* The set `name` of /sets added to the mesh. */
static PetscErrorCode read_set(hid_t file, const char *fname, const char *name, pbng_mesh *mesh)
{
  char path[80];
  int64_t dims[2], *ids;
  int32_t *nodes;

  PetscFunctionBeginUser;
  snprintf(path, sizeof(path), "/sets/%s", name);
  PetscCheck(dataset_shape(file, path, H5T_INTEGER, dims) && dims[1] == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: %s is not an integer [K] dataset of node ids", fname, path);
  PetscCall(PetscMalloc2(dims[0] + 1, &ids, dims[0] + 1, &nodes));
  PetscErrorCode ierr = pbng_h5_collective_rows(file, fname, path, H5T_NATIVE_INT64, 1, 0, dims[0], ids, 0);
  if (!ierr) ierr = set_nodes(fname, path, mesh->nnodes, dims[0], ids, nodes);
  if (!ierr) ierr = pbng_mesh_add_node_set(mesh, name, dims[0], nodes);
  PetscCall(PetscFree2(ids, nodes));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* /sets/<name>: every dataset of the group, a named node set. */
static PetscErrorCode read_sets(hid_t file, const char *fname, pbng_mesh *mesh)
{
  H5G_info_t info;
  hid_t group = H5Gopen2(file, "/sets", H5P_DEFAULT);
  PetscErrorCode ierr = 0;

  PetscFunctionBeginUser;
  PetscCheck(group >= 0 && H5Gget_info(group, &info) >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: /sets is not a group", fname);
  for (hsize_t k = 0; k < info.nlinks && !ierr; ++k) {
    char name[64] = "";
    const ssize_t len = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof(name), H5P_DEFAULT);
    if (len > 0 && len < (ssize_t)sizeof(name)) ierr = read_set(file, fname, name, mesh);
    else ierr = too_long_name(fname, (int)sizeof(name) - 1);
  }
  pbng_h5_close(&group);
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
  PetscCheck(!h.has_sets, comm, PETSC_ERR_SUP,
             "%s: node sets (/sets) are not partitioned in parallel yet: -partitioner metis reads them, or use box sets (-fix_box, -bcK_box)", path);
  s->nglobal_nodes = h.nnodes, s->nglobal_elems = h.nelems, s->etype = h.etype, s->nen = h.etype->nodes;
  s->node_begin = h.nnodes * rank / size, s->node_end = h.nnodes * (rank + 1) / size;
  s->elem_begin = h.nelems * rank / size, s->elem_end = h.nelems * (rank + 1) / size;
  PetscCall(PetscStrncpy(s->source, path, sizeof(s->source)));
  PetscCall(PetscMalloc1(3 * (s->node_end - s->node_begin) + 1, &s->X));
  PetscCall(PetscMalloc1((s->elem_end - s->elem_begin) * s->nen + 1, &s->elems));
  PetscCall(read_rows(comm, file, path, &h, s->node_begin, s->node_end, s->elem_begin, s->elem_end, s->X, s->elems, &bad, msg, sizeof(msg)));
  PetscCall(pbng_agree_on_first_error(comm, bad, msg, sizeof(msg), &failed));
  PetscCheck(!failed, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s", msg);
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
