#include "io/partfile.h"
#include "io/h5rows.h"
#include "io/h5util.h"
#include "io/mesh_h5.h"
#include "io/weak_rows.h"
#include <hdf5.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PARTFILE_FORMAT "pbng-partition-1"
enum { CHUNK_ROWS = 65536 };

struct pbng_partfile_writer {
  char path[PETSC_MAX_PATH_LEN], partial[PETSC_MAX_PATH_LEN + 16];
  hid_t file;
  int nparts, nsets, next_part;
  int elem_colors;    /* the file has the PBD/XPBD element and weak-constraint colors (/elements/color, /weak/color, nelem_colors) */
  int block_colors;   /* the file has PBNG's weak-constraint block colors (/weak/block_color, nblock_colors) */
  int64_t node_rows, elem_rows, weak_rows, *set_rows; /* rows written so far */
};

static PetscErrorCode h5check(herr_t status, const char *file, const char *what)
{
  PetscFunctionBeginUser;
  PetscCheck(status >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "%s: HDF5 failed to %s", file, what);
  PetscFunctionReturn(0);
}

static PetscErrorCode attr_write(hid_t loc, const char *file, const char *name, hid_t type, const void *value)
{
  PetscFunctionBeginUser;
  PetscCall(h5check(pbng_h5_attr_write(loc, name, type, 0, NULL, value), file, name));
  PetscFunctionReturn(0);
}

static PetscErrorCode attr_string(hid_t loc, const char *file, const char *name, const char *value)
{
  PetscFunctionBeginUser;
  PetscCall(h5check(pbng_h5_attr_write_string(loc, name, value), file, name));
  PetscFunctionReturn(0);
}

/* An extendable dataset of rows of ncols values, created empty. */
static PetscErrorCode create_rows(hid_t file, const char *fname, const char *path, hid_t type, int ncols)
{
  const hsize_t dims[2] = {0, (hsize_t)ncols}, maxdims[2] = {H5S_UNLIMITED, (hsize_t)ncols}, chunk[2] = {CHUNK_ROWS, (hsize_t)ncols};
  hid_t space = H5Screate_simple(2, dims, maxdims), plist = H5Pcreate(H5P_DATASET_CREATE), lcpl = H5Pcreate(H5P_LINK_CREATE), dset;

  PetscFunctionBeginUser;
  H5Pset_chunk(plist, 2, chunk);
  H5Pset_create_intermediate_group(lcpl, 1);
  dset = H5Dcreate2(file, path, type, space, lcpl, plist, H5P_DEFAULT);
  PetscCall(h5check(dset, fname, path));
  H5Dclose(dset);
  H5Pclose(plist);
  H5Pclose(lcpl);
  H5Sclose(space);
  PetscFunctionReturn(0);
}

/* Appends n rows at row `at` (the dataset grows to at + n rows). */
static PetscErrorCode append_rows(hid_t file, const char *fname, const char *path, hid_t type, int ncols, int64_t at, int64_t n,
                                  const void *data)
{
  const hsize_t size[2] = {(hsize_t)(at + n), (hsize_t)ncols}, start[2] = {(hsize_t)at, 0}, count[2] = {(hsize_t)n, (hsize_t)ncols};
  hid_t dset = H5Dopen2(file, path, H5P_DEFAULT), fspace, mspace;

  PetscFunctionBeginUser;
  PetscCall(h5check(dset, fname, path));
  PetscCall(h5check(H5Dset_extent(dset, size), fname, path));
  if (n > 0) {
    fspace = H5Dget_space(dset);
    mspace = H5Screate_simple(2, count, NULL);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    PetscCall(h5check(H5Dwrite(dset, type, mspace, fspace, H5P_DEFAULT, data), fname, path));
    H5Sclose(mspace);
    H5Sclose(fspace);
  }
  H5Dclose(dset);
  PetscFunctionReturn(0);
}

/* Every dataset, empty (the serial writer appends to them, the parallel one sizes them first). */
static PetscErrorCode create_layout(pbng_partfile_writer *w, const pbng_mesh *mesh)
{
  const char *f = w->path;

  PetscFunctionBeginUser;
  PetscCall(create_rows(w->file, f, "/nodes/X", H5T_NATIVE_DOUBLE, 3));
  PetscCall(create_rows(w->file, f, "/nodes/global", H5T_NATIVE_INT64, 1));
  PetscCall(create_rows(w->file, f, "/nodes/owner", H5T_NATIVE_INT32, 1));
  PetscCall(create_rows(w->file, f, "/nodes/color", H5T_NATIVE_INT32, 1));
  PetscCall(create_rows(w->file, f, "/nodes/offset", H5T_NATIVE_INT64, 1));
  PetscCall(create_rows(w->file, f, "/parts/nowned", H5T_NATIVE_INT32, 1));
  PetscCall(create_rows(w->file, f, "/elements/nodes", H5T_NATIVE_INT32, mesh->nen));
  if (mesh->kind) PetscCall(create_rows(w->file, f, "/elements/kind", H5T_NATIVE_UINT8, 1));
  PetscCall(create_rows(w->file, f, "/elements/global", H5T_NATIVE_INT64, 1));
  PetscCall(create_rows(w->file, f, "/elements/offset", H5T_NATIVE_INT64, 1));
  PetscCall(create_rows(w->file, f, "/elements/color", H5T_NATIVE_INT32, 1));
  PetscCall(create_rows(w->file, f, "/weak/color", H5T_NATIVE_INT32, 1));
  PetscCall(create_rows(w->file, f, "/weak/block_color", H5T_NATIVE_INT32, 1));
  PetscCall(create_rows(w->file, f, "/weak/nodes", H5T_NATIVE_INT64, PBNG_WC_MAX_NODES));
  PetscCall(create_rows(w->file, f, "/weak/weights", H5T_NATIVE_DOUBLE, PBNG_WC_MAX_NODES));
  PetscCall(create_rows(w->file, f, "/weak/spring", H5T_NATIVE_DOUBLE, 5));
  PetscCall(create_rows(w->file, f, "/weak/target", H5T_NATIVE_DOUBLE, 3));
  PetscCall(create_rows(w->file, f, "/weak/global", H5T_NATIVE_INT64, 1));
  PetscCall(create_rows(w->file, f, "/weak/offset", H5T_NATIVE_INT64, 1));
  for (int s = 0; s < mesh->nsets; ++s) {
    char path[64];
    hid_t grp;
    snprintf(path, sizeof(path), "/sets/%04d/members", s);
    PetscCall(create_rows(w->file, f, path, H5T_NATIVE_INT32, 1));
    snprintf(path, sizeof(path), "/sets/%04d/offset", s);
    PetscCall(create_rows(w->file, f, path, H5T_NATIVE_INT64, 1));
    snprintf(path, sizeof(path), "/sets/%04d", s);
    grp = H5Gopen2(w->file, path, H5P_DEFAULT);
    PetscCall(attr_string(grp, f, "name", mesh->sets[s].name));
    H5Gclose(grp);
  }
  PetscFunctionReturn(0);
}

/* The serial writer's first row of every offset dataset: 0. */
static PetscErrorCode first_offsets(pbng_partfile_writer *w, const pbng_mesh *mesh)
{
  const char *f = w->path;
  const int64_t zero = 0;

  PetscFunctionBeginUser;
  PetscCall(append_rows(w->file, f, "/nodes/offset", H5T_NATIVE_INT64, 1, 0, 1, &zero));
  PetscCall(append_rows(w->file, f, "/elements/offset", H5T_NATIVE_INT64, 1, 0, 1, &zero));
  PetscCall(append_rows(w->file, f, "/weak/offset", H5T_NATIVE_INT64, 1, 0, 1, &zero));
  for (int s = 0; s < mesh->nsets; ++s) {
    char path[64];
    snprintf(path, sizeof(path), "/sets/%04d/offset", s);
    PetscCall(append_rows(w->file, f, path, H5T_NATIVE_INT64, 1, 0, 1, &zero));
  }
  PetscFunctionReturn(0);
}

/* "<path>.partial" with the root attributes and every dataset, empty; comm: MPI_COMM_NULL (one process) or the
 * processes writing it together; nweak: the mesh's weak constraints. Without constraint colors (cc NULL) the file has
 * none; with them, the block colors, and when elem_colors the PBD/XPBD colors (nelem_colors; the serial writer's files
 * always have both, the parallel writer's the block colors when the mesh has weak constraints). */
static PetscErrorCode create_file(MPI_Comm comm, const char *path, int nparts, int64_t nnodes, int64_t nelems, int64_t nweak, int ncolors,
                                  const pbng_constraint_colors *cc, int elem_colors, const pbng_mesh *mesh, double extent, pbng_partfile_writer **wp)
{
  pbng_partfile_writer *w;
  const int64_t np = nparts, kind = pbng_mesh_layout(mesh), nsets = mesh->nsets;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&w));
  PetscCall(PetscStrncpy(w->path, path, sizeof(w->path)));
  snprintf(w->partial, sizeof(w->partial), "%s.partial", path);
  w->nparts = nparts, w->nsets = mesh->nsets;
  PetscCall(PetscCalloc1(mesh->nsets + 1, &w->set_rows));
  w->file = pbng_h5_create(comm, w->partial);
  PetscCheck(w->file >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot create %s (is its directory there and writable?)", path);
  PetscCall(attr_string(w->file, path, "format", PARTFILE_FORMAT));
  PetscCall(attr_write(w->file, path, "nparts", H5T_NATIVE_INT64, &np));
  PetscCall(attr_write(w->file, path, "nnodes", H5T_NATIVE_INT64, &nnodes));
  PetscCall(attr_write(w->file, path, "nelements", H5T_NATIVE_INT64, &nelems));
  PetscCall(attr_write(w->file, path, "ncolors", H5T_NATIVE_INT, &ncolors));
  PetscCall(attr_write(w->file, path, "element_kind", H5T_NATIVE_INT64, &kind));
  PetscCall(attr_write(w->file, path, "extent", H5T_NATIVE_DOUBLE, &extent));
  PetscCall(attr_write(w->file, path, "nsets", H5T_NATIVE_INT64, &nsets));
  PetscCall(attr_write(w->file, path, "nweak", H5T_NATIVE_INT64, &nweak));
  w->elem_colors = cc && elem_colors, w->block_colors = cc != NULL;
  if (w->elem_colors) {
    PetscCall(attr_write(w->file, path, "nelem_colors", H5T_NATIVE_INT, &cc->nelem_colors));
    PetscCall(attr_write(w->file, path, "nweak_colors", H5T_NATIVE_INT, &cc->nweak_colors));
  }
  if (w->block_colors) PetscCall(attr_write(w->file, path, "nblock_colors", H5T_NATIVE_INT, &cc->nblock_colors));
  PetscCall(attr_string(w->file, path, "source", mesh->source));
  PetscCall(create_layout(w, mesh));
  *wp = w;
  PetscFunctionReturn(0);
}

/* The part's weak constraints as rows: nodes (-1 past nnodes), signed weights, spring k_n, k_t, n, target. */
static PetscErrorCode append_weak(pbng_partfile_writer *w, int p, const pbng_submesh *sub)
{
  const pbng_mesh *m = &sub->mesh;
  const char *f = w->path;
  const int64_t end = w->weak_rows + m->nweak;
  pbng_weak_rows rows;

  PetscFunctionBeginUser;
  PetscCall(pbng_weak_rows_pack(m->nweak, m->weak, NULL, &rows));
  PetscCall(append_rows(w->file, f, "/weak/nodes", H5T_NATIVE_INT64, PBNG_WC_MAX_NODES, w->weak_rows, m->nweak, rows.nodes));
  PetscCall(append_rows(w->file, f, "/weak/weights", H5T_NATIVE_DOUBLE, PBNG_WC_MAX_NODES, w->weak_rows, m->nweak, rows.weights));
  PetscCall(append_rows(w->file, f, "/weak/spring", H5T_NATIVE_DOUBLE, 5, w->weak_rows, m->nweak, rows.spring));
  PetscCall(append_rows(w->file, f, "/weak/target", H5T_NATIVE_DOUBLE, 3, w->weak_rows, m->nweak, rows.target));
  PetscCall(append_rows(w->file, f, "/weak/global", H5T_NATIVE_INT64, 1, w->weak_rows, m->nweak, sub->global_weak));
  PetscCall(append_rows(w->file, f, "/weak/color", H5T_NATIVE_INT32, 1, w->weak_rows, m->nweak, sub->cc.weak));
  PetscCall(append_rows(w->file, f, "/weak/block_color", H5T_NATIVE_INT32, 1, w->weak_rows, m->nweak, sub->cc.block));
  PetscCall(append_rows(w->file, f, "/weak/offset", H5T_NATIVE_INT64, 1, p + 1, 1, &end));
  PetscCall(pbng_weak_rows_free(&rows));
  w->weak_rows = end;
  PetscFunctionReturn(0);
}

static PetscErrorCode append_part(pbng_partfile_writer *w, const pbng_submesh *sub)
{
  const pbng_mesh *m = &sub->mesh;
  const char *f = w->path;
  const int64_t nend = w->node_rows + m->nnodes, eend = w->elem_rows + m->nelems;
  const int32_t nowned = sub->nowned;
  const int p = w->next_part;

  PetscFunctionBeginUser;
  PetscCheck(p < w->nparts && m->nsets == w->nsets, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: unexpected part %d", f, p);
  PetscCall(append_rows(w->file, f, "/nodes/X", H5T_NATIVE_DOUBLE, 3, w->node_rows, m->nnodes, m->X));
  PetscCall(append_rows(w->file, f, "/nodes/global", H5T_NATIVE_INT64, 1, w->node_rows, m->nnodes, sub->global_node));
  PetscCall(append_rows(w->file, f, "/nodes/owner", H5T_NATIVE_INT32, 1, w->node_rows, m->nnodes, sub->owner));
  PetscCall(append_rows(w->file, f, "/nodes/color", H5T_NATIVE_INT32, 1, w->node_rows, m->nnodes, sub->color));
  PetscCall(append_rows(w->file, f, "/nodes/offset", H5T_NATIVE_INT64, 1, p + 1, 1, &nend));
  PetscCall(append_rows(w->file, f, "/parts/nowned", H5T_NATIVE_INT32, 1, p, 1, &nowned));
  PetscCall(append_rows(w->file, f, "/elements/nodes", H5T_NATIVE_INT32, m->nen, w->elem_rows, m->nelems, m->elems));
  if (m->kind) PetscCall(append_rows(w->file, f, "/elements/kind", H5T_NATIVE_UINT8, 1, w->elem_rows, m->nelems, m->kind));
  PetscCall(append_rows(w->file, f, "/elements/global", H5T_NATIVE_INT64, 1, w->elem_rows, m->nelems, sub->global_elem));
  PetscCheck(sub->cc.elem, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: part %d has no constraint colors", f, p);
  PetscCall(append_rows(w->file, f, "/elements/color", H5T_NATIVE_INT32, 1, w->elem_rows, m->nelems, sub->cc.elem));
  PetscCall(append_rows(w->file, f, "/elements/offset", H5T_NATIVE_INT64, 1, p + 1, 1, &eend));
  for (int s = 0; s < m->nsets; ++s) {
    char path[64];
    const int64_t send = w->set_rows[s] + m->sets[s].count;
    snprintf(path, sizeof(path), "/sets/%04d/members", s);
    PetscCall(append_rows(w->file, f, path, H5T_NATIVE_INT32, 1, w->set_rows[s], m->sets[s].count, m->sets[s].nodes));
    snprintf(path, sizeof(path), "/sets/%04d/offset", s);
    PetscCall(append_rows(w->file, f, path, H5T_NATIVE_INT64, 1, p + 1, 1, &send));
    w->set_rows[s] = send;
  }
  PetscCall(append_weak(w, p, sub));
  w->node_rows = nend, w->elem_rows = eend, w->next_part = p + 1;
  PetscFunctionReturn(0);
}

static PetscErrorCode close_file(pbng_partfile_writer **wp, PetscBool success)
{
  pbng_partfile_writer *w = *wp;

  PetscFunctionBeginUser;
  if (!w) PetscFunctionReturn(0);
  const herr_t status = H5Fclose(w->file);
  if (success) {
    PetscCheck(status >= 0 && w->next_part == w->nparts, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "%s: incomplete (%d of %d parts)", w->path,
               w->next_part, w->nparts);
    PetscCheck(rename(w->partial, w->path) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot rename %s to %s", w->partial, w->path);
  } else remove(w->partial);
  PetscCall(PetscFree(w->set_rows));
  PetscCall(PetscFree(*wp));
  PetscFunctionReturn(0);
}

/* The writer's public calls: HDF5's error printing silenced for each (its errors are worded here). */
PetscErrorCode pbng_partfile_create(const char *path, int nparts, int64_t nnodes, int64_t nelems, int ncolors,
                                    const pbng_constraint_colors *cc, const pbng_mesh *mesh, double extent, pbng_partfile_writer **wp)
{
  PetscFunctionBeginUser;
  PBNG_H5_QUIETLY(create_file(MPI_COMM_NULL, path, nparts, nnodes, nelems, mesh->nweak, ncolors, cc, 1, mesh, extent, wp));
  PBNG_H5_QUIETLY(first_offsets(*wp, mesh));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partfile_append(pbng_partfile_writer *w, const pbng_submesh *sub)
{
  PetscFunctionBeginUser;
  PBNG_H5_QUIETLY(append_part(w, sub));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partfile_close(pbng_partfile_writer **wp, PetscBool success)
{
  PetscFunctionBeginUser;
  PBNG_H5_QUIETLY(close_file(wp, success));
  PetscFunctionReturn(0);
}

/* Whether the file begins with the HDF5 signature (pbng writes no user block). */
int pbng_partfile_probe(const char *path, char *why, size_t len)
{
  pbng_h5_quiet_scope quiet;
  int yes = 0;
  char format[64] = "";

  why[0] = 0;
  if (access(path, R_OK) != 0 || !pbng_h5_has_signature(path)) return 0;
  pbng_h5_quiet(&quiet);
  hid_t file = pbng_h5_open(MPI_COMM_NULL, path, H5F_ACC_RDONLY);
  const int opened = file >= 0;
  if (opened) (void)pbng_h5_attr_read_string(file, "format", format, sizeof(format)); /* "" when there is none */
  pbng_h5_close(&file);
  pbng_h5_restore(&quiet);
  if (!opened) snprintf(why, len, "an HDF5 file that HDF5 cannot open (truncated or damaged?)");
  else if (!strcmp(format, PARTFILE_FORMAT)) yes = 1;
  else if (!strncmp(format, "pbng-partition-", 15))
    snprintf(why, len, "a partitioned mesh of format '%s', but this pbng reads '%s': partition the mesh again with this version's pbng-partition",
             format, PARTFILE_FORMAT);
  else if (pbng_mesh_h5_probe(path)) why[0] = 0; /* a mesh (a pbng result's /mesh, pbng-convert's file): for pbng_mesh_h5_read */
  else if (format[0]) snprintf(why, len, "an HDF5 file of format '%s' (a pbng checkpoint?), neither a partitioned mesh nor a mesh (/mesh/rest_positions and /mesh/tetrahedra)", format);
  else snprintf(why, len, "an HDF5 file without a pbng format attribute, neither a partitioned mesh (pbng-partition) nor a mesh (/mesh/rest_positions and /mesh/tetrahedra)");
  return yes;
}

/* --- reading ----------------------------------------------------------------------------------- */

static PetscErrorCode read_attr(hid_t file, const char *fname, const char *name, hid_t type, void *value)
{
  PetscFunctionBeginUser;
  PetscCheck(H5Aexists(file, name) > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: missing attribute %s (not a pbng-partition file?)", fname,
             name);
  PetscCheck(pbng_h5_attr_read(file, name, type, 1, value) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: cannot read attribute %s", fname, name);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_rows(hid_t file, const char *fname, const char *path, hid_t type, int ncols, int64_t start, int64_t n, void *buf)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_h5_collective_rows(file, fname, path, type, ncols, start, n, buf, 0));
  PetscFunctionReturn(0);
}

/* The two offsets of part p in a [P+1] offset dataset. */
static PetscErrorCode read_range(hid_t file, const char *fname, const char *path, int p, int64_t range[2])
{
  PetscFunctionBeginUser;
  PetscCall(read_rows(file, fname, path, H5T_NATIVE_INT64, 1, p, 2, range));
  PetscFunctionReturn(0);
}

/* --- validation of a part read from the file (a damaged file fails here, naming part and dataset) --- */

/* Part p's rows [range[0], range[1]) of the datasets of `what`: an increasing range. */
static PetscErrorCode check_range(const char *fname, int p, const char *what, const int64_t range[2])
{
  PetscFunctionBeginUser;
  PetscCheck(range[0] >= 0 && range[1] >= range[0] && range[1] - range[0] <= INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: part %d: %s offsets %" PRId64 "..%" PRId64 " are not a valid range of rows (damaged file?)", fname, p, what, range[0], range[1]);
  PetscFunctionReturn(0);
}

/* Every one of the n values (int32 or, when wide, int64) lies in [0, bound). */
static PetscErrorCode check_indices(const char *fname, int p, const char *dataset, int64_t n, const void *values, int wide, int64_t bound)
{
  PetscFunctionBeginUser;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = wide ? ((const int64_t *)values)[i] : ((const int32_t *)values)[i];
    PetscCheck(v >= 0 && v < bound, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%s: part %d: %s holds %" PRId64 " (its entry %" PRId64 " of this part), outside 0..%" PRId64 " (damaged file?)", fname, p, dataset, v,
               i, bound - 1);
  }
  PetscFunctionReturn(0);
}

/* Every element row: a known kind (kinds mixed), its nodes in range, -1 after them. */
static PetscErrorCode check_element_rows(const char *fname, int p, const pbng_mesh *m)
{
  PetscFunctionBeginUser;
  for (int64_t e = 0; e < m->nelems; ++e) {
    PetscCheck(!m->kind || m->kind[e] < PBNG_ELEMENT_KIND_COUNT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%s: part %d: /elements/kind holds %d (its entry %" PRId64 " of this part), not a kind 0..%d (damaged file?)", fname, p,
               m->kind ? (int)m->kind[e] : 0, e, PBNG_ELEMENT_KIND_COUNT - 1);
    const int n = pbng_mesh_element_type(m, e)->nodes;
    const int32_t *t = &m->elems[(size_t)m->nen * (size_t)e];
    PetscCheck(n <= m->nen, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: part %d: element %" PRId64 " of this part is a %s in a row of %d nodes (damaged file?)",
               fname, p, e, pbng_mesh_element_type(m, e)->name, m->nen);
    PetscCall(check_indices(fname, p, "/elements/nodes", n, t, 0, m->nnodes));
    for (int a = n; a < m->nen; ++a)
      PetscCheck(t[a] == -1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: part %d: /elements/nodes: element %" PRId64 " of this part (%s) has %d after its %d nodes, not -1 (damaged file?)",
                 fname, p, e, pbng_mesh_element_type(m, e)->name, (int)t[a], n);
  }
  PetscFunctionReturn(0);
}

/* The part's contents are consistent: finite positions, every index in range, the owned nodes first
 * and owned by this part. */
static PetscErrorCode validate_part(const char *fname, int p, int64_t nparts, const pbng_submesh *sub)
{
  const pbng_mesh *m = &sub->mesh;

  PetscFunctionBeginUser;
  PetscCheck(sub->nowned >= 0 && sub->nowned <= m->nnodes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: part %d: /parts/nowned is %d, outside 0..%" PRId64 " (its node count; damaged file?)", fname, p, (int)sub->nowned, m->nnodes);
  for (int64_t i = 0; i < 3 * m->nnodes; ++i)
    PetscCheck(isfinite(m->X[i]), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: part %d: /nodes/X: node %" PRId64 " of this part has a non-finite coordinate",
               fname, p, i / 3);
  PetscCall(check_indices(fname, p, "/nodes/global", m->nnodes, sub->global_node, 1, sub->nglobal_nodes));
  PetscCall(check_indices(fname, p, "/nodes/owner", m->nnodes, sub->owner, 0, nparts));
  PetscCall(check_indices(fname, p, "/nodes/color", m->nnodes, sub->color, 0, sub->ncolors));
  for (int32_t i = 0; i < sub->nowned; ++i)
    PetscCheck(sub->owner[i] == p, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: part %d: /nodes/owner: owned node %d belongs to part %d (damaged file?)",
               fname, p, (int)i, (int)sub->owner[i]);
  PetscCall(check_element_rows(fname, p, m));
  PetscCall(check_indices(fname, p, "/elements/global", m->nelems, sub->global_elem, 1, sub->nglobal_elems));
  for (int s = 0; s < m->nsets; ++s) PetscCall(check_indices(fname, p, m->sets[s].name, m->sets[s].count, m->sets[s].nodes, 0, m->nnodes));
  if (sub->cc.elem) PetscCall(check_indices(fname, p, "/elements/color", m->nelems, sub->cc.elem, 0, sub->cc.nelem_colors));
  PetscFunctionReturn(0);
}

static PetscErrorCode read_sets(hid_t file, const char *fname, int p, int64_t nsets, pbng_submesh *sub)
{
  PetscFunctionBeginUser;
  for (int64_t s = 0; s < nsets; ++s) {
    char path[64], name[64] = "";
    int64_t range[2];
    int32_t *members;
    hid_t grp, attr, type;
    snprintf(path, sizeof(path), "/sets/%04d", (int)s);
    grp = H5Gopen2(file, path, H5P_DEFAULT);
    attr = H5Aopen(grp, "name", H5P_DEFAULT);
    type = H5Aget_type(attr);
    PetscCheck(H5Tget_size(type) <= sizeof(name), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: set name too long", fname);
    H5Aread(attr, type, name);
    H5Tclose(type), H5Aclose(attr), H5Gclose(grp);
    snprintf(path, sizeof(path), "/sets/%04d/offset", (int)s);
    PetscCall(read_range(file, fname, path, p, range));
    PetscCall(check_range(fname, p, path, range));
    PetscCall(PetscMalloc1(range[1] - range[0] + 1, &members));
    snprintf(path, sizeof(path), "/sets/%04d/members", (int)s);
    PetscCall(read_rows(file, fname, path, H5T_NATIVE_INT32, 1, range[0], range[1] - range[0], members));
    PetscCall(pbng_mesh_add_node_set(&sub->mesh, name, range[1] - range[0], members));
    PetscCall(PetscFree(members));
  }
  PetscFunctionReturn(0);
}

/* The part's weak constraints (files written before weak constraints existed have none). */
static PetscErrorCode read_weak(hid_t file, const char *fname, int p, pbng_submesh *sub)
{
  int64_t range[2];
  pbng_weak_rows rows;

  PetscFunctionBeginUser;
  if (H5Aexists(file, "nweak") <= 0) {
    PetscCall(PetscMalloc1(1, &sub->global_weak));
    PetscFunctionReturn(0);
  }
  PetscCall(read_attr(file, fname, "nweak", H5T_NATIVE_INT64, &sub->nglobal_weak));
  PetscCall(read_range(file, fname, "/weak/offset", p, range));
  PetscCall(check_range(fname, p, "/weak", range));
  const int64_t n = range[1] - range[0];
  PetscCall(pbng_weak_rows_alloc(n, &rows));
  PetscCall(PetscMalloc1(n + 1, &sub->global_weak));
  PetscCall(read_rows(file, fname, "/weak/nodes", H5T_NATIVE_INT64, PBNG_WC_MAX_NODES, range[0], n, rows.nodes));
  PetscCall(read_rows(file, fname, "/weak/weights", H5T_NATIVE_DOUBLE, PBNG_WC_MAX_NODES, range[0], n, rows.weights));
  PetscCall(read_rows(file, fname, "/weak/spring", H5T_NATIVE_DOUBLE, 5, range[0], n, rows.spring));
  if (H5Lexists(file, "/weak/target", H5P_DEFAULT) > 0) /* files written before targets existed: 0 */
    PetscCall(read_rows(file, fname, "/weak/target", H5T_NATIVE_DOUBLE, 3, range[0], n, rows.target));
  PetscCall(read_rows(file, fname, "/weak/global", H5T_NATIVE_INT64, 1, range[0], n, sub->global_weak));
  PetscCall(PetscMalloc1(n + 1, &sub->mesh.weak));
  sub->mesh.nweak = n;
  const char *err = pbng_weak_rows_unpack(&rows, sub->mesh.nnodes, sub->mesh.weak);
  PetscCall(pbng_weak_rows_free(&rows));
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: part %d: %s", fname, p, err);
  PetscFunctionReturn(0);
}

/* The PBD/XPBD colors of the part's elements and weak constraints, and PBNG's weak-constraint block colors, when the
 * file has them (the serial writer's files have both; the parallel writer's the block colors when the mesh has weak
 * constraints, the PBD/XPBD colors when asked for). */
static PetscErrorCode read_constraint_colors(hid_t file, const char *fname, int p, int64_t first_elem, pbng_submesh *sub)
{
  int64_t range[2] = {0, 0};
  const int elem = H5Aexists(file, "nelem_colors") > 0, block = H5Aexists(file, "nblock_colors") > 0;

  PetscFunctionBeginUser;
  if (elem || block) PetscCall(read_range(file, fname, "/weak/offset", p, range));
  if (elem) {
    PetscCall(read_attr(file, fname, "nelem_colors", H5T_NATIVE_INT, &sub->cc.nelem_colors));
    PetscCall(read_attr(file, fname, "nweak_colors", H5T_NATIVE_INT, &sub->cc.nweak_colors));
    PetscCall(PetscMalloc1(sub->mesh.nelems, &sub->cc.elem));
    PetscCall(PetscMalloc1(sub->mesh.nweak + 1, &sub->cc.weak));
    PetscCall(read_rows(file, fname, "/elements/color", H5T_NATIVE_INT32, 1, first_elem, sub->mesh.nelems, sub->cc.elem));
    PetscCall(read_rows(file, fname, "/weak/color", H5T_NATIVE_INT32, 1, range[0], sub->mesh.nweak, sub->cc.weak));
  }
  if (block) {
    PetscCall(read_attr(file, fname, "nblock_colors", H5T_NATIVE_INT, &sub->cc.nblock_colors));
    PetscCall(PetscMalloc1(sub->mesh.nweak + 1, &sub->cc.block));
    PetscCall(read_rows(file, fname, "/weak/block_color", H5T_NATIVE_INT32, 1, range[0], sub->mesh.nweak, sub->cc.block));
  }
  PetscFunctionReturn(0);
}

/* This rank's part from the open file (collective reads). */
static PetscErrorCode read_part(hid_t file, MPI_Comm comm, const char *path, pbng_submesh *sub, double *extent, int64_t *nparts_out)
{
  int rank, size, ncolors;
  int64_t nparts, kind, nsets, nodes[2], elems[2];
  int32_t nowned;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(read_attr(file, path, "nparts", H5T_NATIVE_INT64, &nparts));
  PetscCheck(nparts == size, comm, PETSC_ERR_ARG_SIZ, "%s has %" PRId64 " parts but pbng runs on %d ranks: run with mpiexec -n %" PRId64
             " or partition again with pbng-partition -parts %d", path, nparts, size, nparts, size);
  PetscCall(read_attr(file, path, "element_kind", H5T_NATIVE_INT64, &kind));
  PetscCall(read_attr(file, path, "nsets", H5T_NATIVE_INT64, &nsets));
  PetscCall(read_attr(file, path, "ncolors", H5T_NATIVE_INT, &ncolors));
  PetscCall(read_attr(file, path, "nnodes", H5T_NATIVE_INT64, &sub->nglobal_nodes));
  PetscCall(read_attr(file, path, "nelements", H5T_NATIVE_INT64, &sub->nglobal_elems));
  PetscCall(read_attr(file, path, "extent", H5T_NATIVE_DOUBLE, extent));
  PetscCall(read_range(file, path, "/nodes/offset", rank, nodes));
  PetscCall(read_range(file, path, "/elements/offset", rank, elems));
  PetscCall(read_rows(file, path, "/parts/nowned", H5T_NATIVE_INT32, 1, rank, 1, &nowned));
  PetscCall(check_range(path, rank, "/nodes", nodes));
  PetscCall(check_range(path, rank, "/elements", elems));
  PetscCheck(ncolors >= 1 && ncolors <= 64, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: ncolors %d: must be 1..64", path, ncolors);
  PetscCall(pbng_mesh_alloc_layout(&sub->mesh, kind, nodes[1] - nodes[0], elems[1] - elems[0], path));
  snprintf(sub->mesh.source, sizeof(sub->mesh.source), "%s (part %d)", path, rank);
  sub->nowned = nowned, sub->ncolors = ncolors;
  const int64_t n = sub->mesh.nnodes, m = sub->mesh.nelems;
  PetscCall(PetscMalloc4(n, &sub->global_node, m, &sub->global_elem, n, &sub->owner, n, &sub->color));
  PetscCall(read_rows(file, path, "/nodes/X", H5T_NATIVE_DOUBLE, 3, nodes[0], n, sub->mesh.X));
  PetscCall(read_rows(file, path, "/nodes/global", H5T_NATIVE_INT64, 1, nodes[0], n, sub->global_node));
  PetscCall(read_rows(file, path, "/nodes/owner", H5T_NATIVE_INT32, 1, nodes[0], n, sub->owner));
  PetscCall(read_rows(file, path, "/nodes/color", H5T_NATIVE_INT32, 1, nodes[0], n, sub->color));
  PetscCall(read_rows(file, path, "/elements/nodes", H5T_NATIVE_INT32, sub->mesh.nen, elems[0], m, sub->mesh.elems));
  if (sub->mesh.kind) PetscCall(read_rows(file, path, "/elements/kind", H5T_NATIVE_UINT8, 1, elems[0], m, sub->mesh.kind));
  PetscCall(read_rows(file, path, "/elements/global", H5T_NATIVE_INT64, 1, elems[0], m, sub->global_elem));
  PetscCall(read_sets(file, path, rank, nsets, sub));
  PetscCall(read_weak(file, path, rank, sub));
  PetscCall(read_constraint_colors(file, path, rank, elems[0], sub));
  *nparts_out = nparts;
  PetscFunctionReturn(0);
}

static PetscErrorCode read_file(MPI_Comm comm, const char *path, pbng_submesh *sub, double *extent)
{
  int64_t nparts = 0;
  int rank;

  PetscFunctionBeginUser;
  memset(sub, 0, sizeof(*sub));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  hid_t file = pbng_h5_open(comm, path, H5F_ACC_RDONLY);
  PetscCheck(file >= 0, comm, PETSC_ERR_FILE_OPEN, "cannot open partitioned mesh %s", path);
  const PetscErrorCode ierr = read_part(file, comm, path, sub, extent, &nparts);
  pbng_h5_close(&file); /* also after a failed read */
  PetscCall(ierr);
  PetscCall(validate_part(path, rank, nparts, sub));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partfile_read(MPI_Comm comm, const char *path, pbng_submesh *sub, double *extent)
{
  PetscFunctionBeginUser;
  PBNG_H5_QUIETLY(read_file(comm, path, sub, extent));
  PetscFunctionReturn(0);
}

/* --- the parallel writer: every process writes its own parts' rows ------------------------------- */

static PetscErrorCode write_rows(hid_t file, const char *fname, const char *path, hid_t type, int ncols, int64_t start, int64_t n, const void *buf)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_h5_collective_rows(file, fname, path, type, ncols, start, n, (void *)buf, 1));
  PetscFunctionReturn(0);
}

/* A dataset of the layout sized to `rows` rows (collective). */
static PetscErrorCode size_rows(hid_t file, const char *fname, const char *path, int ncols, int64_t rows)
{
  const hsize_t size[2] = {(hsize_t)rows, (hsize_t)ncols};
  hid_t dset = H5Dopen2(file, path, H5P_DEFAULT);

  PetscFunctionBeginUser;
  PetscCall(h5check(dset, fname, path));
  const herr_t status = H5Dset_extent(dset, size);
  H5Dclose(dset);
  PetscCall(h5check(status, fname, path));
  PetscFunctionReturn(0);
}

/* The node and element datasets sized for every part, the offsets for P + 1 rows. */
static PetscErrorCode size_layout(const pbng_partfile_writer *w, int nen, int64_t nodes, int64_t elems)
{
  const char *f = w->path;
  const char *node_sets[] = {"/nodes/global", "/nodes/owner", "/nodes/color"}, *offsets[] = {"/nodes/offset", "/elements/offset", "/weak/offset"};

  PetscFunctionBeginUser;
  PetscCall(size_rows(w->file, f, "/nodes/X", 3, nodes));
  for (int k = 0; k < 3; ++k) PetscCall(size_rows(w->file, f, node_sets[k], 1, nodes));
  PetscCall(size_rows(w->file, f, "/elements/nodes", nen, elems));
  PetscCall(size_rows(w->file, f, "/elements/global", 1, elems));
  if (w->elem_colors) PetscCall(size_rows(w->file, f, "/elements/color", 1, elems));
  for (int k = 0; k < 3; ++k) PetscCall(size_rows(w->file, f, offsets[k], 1, w->nparts + 1));
  PetscCall(size_rows(w->file, f, "/parts/nowned", 1, w->nparts));
  PetscFunctionReturn(0);
}

/* Where this process's rows of n datasets start (the processes' parts come in part order; mine[k]: this process's rows
 * of dataset k) and how many rows all parts have. */
static PetscErrorCode row_starts(MPI_Comm comm, int n, const int64_t *mine, int64_t *start, int64_t *total)
{
  int rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Exscan(mine, start, n, MPI_INT64_T, MPI_SUM, comm));
  if (rank == 0)
    for (int k = 0; k < n; ++k) start[k] = 0; /* MPI_Exscan leaves rank 0's undefined */
  PetscCallMPI(MPI_Allreduce(mine, total, n, MPI_INT64_T, MPI_SUM, comm));
  PetscFunctionReturn(0);
}

/* Rows first .. first + n - 1 of a [P + 1] offset dataset: ends[k] the end of part first + k - 1's rows (the process
 * of part 0 also writes row 0, its ends[0] = 0). */
static PetscErrorCode write_offsets(const pbng_partfile_writer *w, const char *path, int first, int n, const int64_t *ends)
{
  PetscFunctionBeginUser;
  PetscCall(write_rows(w->file, w->path, path, H5T_NATIVE_INT64, 1, first, n, ends));
  PetscFunctionReturn(0);
}

/* Every node set's members of every process's parts at their rows and the sets' offsets, as write_parts writes the
 * nodes (most: the most parts a process has). */
static PetscErrorCode write_set_parts(pbng_partfile_writer *w, MPI_Comm comm, int first, int nlocal, const pbng_submesh *sub, int most)
{
  const int nsets = w->nsets, zero_row = first == 0 && nlocal > 0, at = zero_row ? 0 : first + 1;
  int64_t *mine, *start, *total, *end; /* end[t * (nlocal + 1) + j]: set t's offset row at + j */
  char path[64];

  PetscFunctionBeginUser;
  if (nsets == 0) PetscFunctionReturn(0);
  PetscCall(PetscCalloc4(nsets, &mine, nsets, &start, nsets, &total, (size_t)nsets * (nlocal + 1), &end));
  for (int k = 0; k < nlocal; ++k)
    for (int t = 0; t < nsets; ++t) mine[t] += sub[k].mesh.sets[t].count;
  PetscCall(row_starts(comm, nsets, mine, start, total));
  for (int t = 0; t < nsets; ++t) {
    snprintf(path, sizeof(path), "/sets/%04d/members", t);
    PetscCall(size_rows(w->file, w->path, path, 1, total[t]));
    snprintf(path, sizeof(path), "/sets/%04d/offset", t);
    PetscCall(size_rows(w->file, w->path, path, 1, w->nparts + 1));
  }
  for (int k = 0; k < most; ++k)
    for (int t = 0; t < nsets; ++t) {
      const pbng_node_set *set = k < nlocal ? &sub[k].mesh.sets[t] : NULL;
      const int64_t n = set ? set->count : 0;
      snprintf(path, sizeof(path), "/sets/%04d/members", t);
      PetscCall(write_rows(w->file, w->path, path, H5T_NATIVE_INT32, 1, start[t], n, set ? set->nodes : NULL));
      start[t] += n;
      if (set) end[t * (nlocal + 1) + zero_row + k] = start[t];
    }
  for (int t = 0; t < nsets; ++t) {
    snprintf(path, sizeof(path), "/sets/%04d/offset", t);
    PetscCall(write_offsets(w, path, at, nlocal > 0 ? nlocal + zero_row : 0, &end[t * (nlocal + 1)]));
  }
  PetscCall(PetscFree4(mine, start, total, end));
  PetscFunctionReturn(0);
}

/* Every weak constraint of every process's parts at its rows and the constraints' offsets, as write_parts writes the
 * nodes (most: the most parts a process has): nodes as the part's local indices, signed weights, spring, target,
 * global ids and the colors the file has. */
static PetscErrorCode write_weak_parts(pbng_partfile_writer *w, MPI_Comm comm, int first, int nlocal, const pbng_submesh *sub, int most)
{
  const char *f = w->path;
  const int zero_row = first == 0 && nlocal > 0, at = zero_row ? 0 : first + 1;
  int64_t mine = 0, start, total, *end;

  PetscFunctionBeginUser;
  for (int k = 0; k < nlocal; ++k) mine += sub[k].mesh.nweak;
  PetscCall(row_starts(comm, 1, &mine, &start, &total));
  const char *wide[] = {"/weak/nodes", "/weak/weights"};
  for (int k = 0; k < 2; ++k) PetscCall(size_rows(w->file, f, wide[k], PBNG_WC_MAX_NODES, total));
  PetscCall(size_rows(w->file, f, "/weak/spring", 5, total));
  PetscCall(size_rows(w->file, f, "/weak/target", 3, total));
  PetscCall(size_rows(w->file, f, "/weak/global", 1, total));
  if (w->elem_colors) PetscCall(size_rows(w->file, f, "/weak/color", 1, total));
  if (w->block_colors) PetscCall(size_rows(w->file, f, "/weak/block_color", 1, total));
  PetscCall(PetscCalloc1(nlocal + 1, &end));
  for (int k = 0; k < most; ++k) {
    const pbng_submesh *p = k < nlocal ? &sub[k] : NULL;
    const int64_t n = p ? p->mesh.nweak : 0;
    pbng_weak_rows rows;
    PetscCall(pbng_weak_rows_pack(n, p ? p->mesh.weak : NULL, NULL, &rows));
    PetscCall(write_rows(w->file, f, "/weak/nodes", H5T_NATIVE_INT64, PBNG_WC_MAX_NODES, start, n, rows.nodes));
    PetscCall(write_rows(w->file, f, "/weak/weights", H5T_NATIVE_DOUBLE, PBNG_WC_MAX_NODES, start, n, rows.weights));
    PetscCall(write_rows(w->file, f, "/weak/spring", H5T_NATIVE_DOUBLE, 5, start, n, rows.spring));
    PetscCall(write_rows(w->file, f, "/weak/target", H5T_NATIVE_DOUBLE, 3, start, n, rows.target));
    PetscCall(pbng_weak_rows_free(&rows));
    PetscCall(write_rows(w->file, f, "/weak/global", H5T_NATIVE_INT64, 1, start, n, p ? p->global_weak : NULL));
    if (w->elem_colors) PetscCall(write_rows(w->file, f, "/weak/color", H5T_NATIVE_INT32, 1, start, n, p ? p->cc.weak : NULL));
    if (w->block_colors) PetscCall(write_rows(w->file, f, "/weak/block_color", H5T_NATIVE_INT32, 1, start, n, p ? p->cc.block : NULL));
    start += n;
    if (p) end[zero_row + k] = start;
  }
  PetscCall(write_offsets(w, "/weak/offset", at, nlocal > 0 ? nlocal + zero_row : 0, end));
  PetscCall(PetscFree(end));
  PetscFunctionReturn(0);
}

/* Every process's parts at their rows: one collective write per dataset and per part index (processes with fewer
 * parts write nothing in the last rounds), then the offsets and owned counts. */
static PetscErrorCode write_parts(pbng_partfile_writer *w, MPI_Comm comm, int first, int nlocal, const pbng_submesh *sub, int nen)
{
  const char *f = w->path;
  int64_t start[2], total[2], *node_end, *elem_end;
  int32_t *nowned;
  int most;

  PetscFunctionBeginUser;
  int64_t mine[2] = {0, 0};
  for (int k = 0; k < nlocal; ++k) mine[0] += sub[k].mesh.nnodes, mine[1] += sub[k].mesh.nelems;
  PetscCall(row_starts(comm, 2, mine, start, total));
  PetscCall(size_layout(w, nen, total[0], total[1]));
  PetscCallMPI(MPI_Allreduce(&nlocal, &most, 1, MPI_INT, MPI_MAX, comm));
  const int zero_row = first == 0 && nlocal > 0; /* this process writes the offsets' row 0 */
  PetscCall(PetscCalloc3(nlocal + 1, &node_end, nlocal + 1, &elem_end, nlocal + 1, &nowned));
  for (int k = 0; k < most; ++k) {
    const pbng_mesh *m = k < nlocal ? &sub[k].mesh : NULL;
    const int64_t n = m ? m->nnodes : 0, e = m ? m->nelems : 0;
    PetscCall(write_rows(w->file, f, "/nodes/X", H5T_NATIVE_DOUBLE, 3, start[0], n, m ? m->X : NULL));
    PetscCall(write_rows(w->file, f, "/nodes/global", H5T_NATIVE_INT64, 1, start[0], n, m ? sub[k].global_node : NULL));
    PetscCall(write_rows(w->file, f, "/nodes/owner", H5T_NATIVE_INT32, 1, start[0], n, m ? sub[k].owner : NULL));
    PetscCall(write_rows(w->file, f, "/nodes/color", H5T_NATIVE_INT32, 1, start[0], n, m ? sub[k].color : NULL));
    PetscCall(write_rows(w->file, f, "/elements/nodes", H5T_NATIVE_INT32, nen, start[1], e, m ? m->elems : NULL));
    PetscCall(write_rows(w->file, f, "/elements/global", H5T_NATIVE_INT64, 1, start[1], e, m ? sub[k].global_elem : NULL));
    if (w->elem_colors) PetscCall(write_rows(w->file, f, "/elements/color", H5T_NATIVE_INT32, 1, start[1], e, m ? sub[k].cc.elem : NULL));
    start[0] += n, start[1] += e;
    if (m) node_end[zero_row + k] = start[0], elem_end[zero_row + k] = start[1], nowned[k] = sub[k].nowned;
  }
  const int rows = nlocal + zero_row, at = zero_row ? 0 : first + 1; /* this process's offset rows */
  PetscCall(write_offsets(w, "/nodes/offset", at, nlocal > 0 ? rows : 0, node_end));
  PetscCall(write_offsets(w, "/elements/offset", at, nlocal > 0 ? rows : 0, elem_end));
  PetscCall(write_rows(w->file, f, "/parts/nowned", H5T_NATIVE_INT32, 1, first, nlocal, nowned));
  PetscCall(write_set_parts(w, comm, first, nlocal, sub, most));
  PetscCall(write_weak_parts(w, comm, first, nlocal, sub, most));
  PetscCall(PetscFree3(node_end, elem_end, nowned));
  w->next_part = w->nparts;
  PetscFunctionReturn(0);
}

/* Collective: closes the file; rank 0 renames it into place when every process succeeded, else removes it. */
static PetscErrorCode close_parallel(pbng_partfile_writer **wp, MPI_Comm comm, int success)
{
  pbng_partfile_writer *w = *wp;
  int rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  const int closed = H5Fclose(w->file) >= 0;
  int renamed = 1;
  if (rank == 0 && success && closed) renamed = rename(w->partial, w->path) == 0;
  else if (rank == 0) remove(w->partial);
  PetscCallMPI(MPI_Bcast(&renamed, 1, MPI_INT, 0, comm));
  PetscCheck(!success || (closed && renamed), comm, PETSC_ERR_FILE_WRITE, "cannot close %s or rename it to %s", w->partial, w->path);
  PetscCall(PetscFree(w->set_rows));
  PetscCall(PetscFree(*wp));
  PetscFunctionReturn(0);
}

/* Every process's pieces fit the file: the mesh's node sets, and the constraint colors the file has. */
static PetscErrorCode check_pieces(MPI_Comm comm, const char *path, const pbng_parts *pp, const pbng_mesh *shape, int block_colors)
{
  int matches[3] = {1, 1, 1}; /* every part has the mesh's node sets, its elements' PBD/XPBD colors when the file has them, its block colors */

  PetscFunctionBeginUser;
  PetscCheck(!shape->kind, comm, PETSC_ERR_SUP, "%s: the parallel writer writes meshes of one kind", path);
  for (int k = 0; k < pp->nlocal; ++k) {
    const pbng_submesh *sub = &pp->sub[k];
    matches[0] &= sub->mesh.nsets == shape->nsets, matches[1] &= (sub->cc.elem != NULL) == (pp->nelem_colors > 0);
    matches[2] &= !block_colors || sub->cc.block;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, matches, 3, MPI_INT, MPI_MIN, comm));
  PetscCheck(matches[0], comm, PETSC_ERR_ARG_WRONG, "%s: a part without the %d node sets of the mesh", path, shape->nsets);
  PetscCheck(matches[1], comm, PETSC_ERR_ARG_WRONG, "%s: parts with and without the PBD/XPBD constraint colors of their elements", path);
  PetscCheck(matches[2], comm, PETSC_ERR_ARG_WRONG, "%s: a part without the block colors of its weak constraints", path);
  PetscFunctionReturn(0);
}

static PetscErrorCode write_parallel(MPI_Comm comm, const char *path, const pbng_parts *pp, const pbng_mesh *shape)
{
  pbng_partfile_writer *w = NULL;
  pbng_h5_quiet_scope quiet;
  int failed, any;
  /* the counts the file's attributes give: the PBD/XPBD colors when computed, the block colors with them or with weak
   * constraints (else none: a file of a mesh without weak constraints and without -pbd_colors has no colors) */
  const pbng_constraint_colors cc = {.nelem_colors = pp->nelem_colors, .nweak_colors = pp->nweak_colors, .nblock_colors = pp->nblock_colors};
  const int elem_colors = pp->nelem_colors > 0, block_colors = elem_colors || pp->nweak > 0;

  PetscFunctionBeginUser;
  PetscCall(check_pieces(comm, path, pp, shape, block_colors));
  pbng_h5_quiet(&quiet);
  PetscErrorCode ierr = create_file(comm, path, pp->nparts, pp->nnodes, pp->nelems, pp->nweak, pp->ncolors, block_colors ? &cc : NULL, elem_colors, shape,
                                    pp->extent, &w);
  if (!ierr) ierr = write_parts(w, comm, pp->first, pp->nlocal, pp->sub, shape->nen);
  failed = ierr != 0;
  PetscCallMPI(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm));
  const PetscErrorCode closing = ierr || !w ? 0 : close_parallel(&w, comm, !any);
  if (ierr && w) (void)close_parallel(&w, comm, 0);
  pbng_h5_restore(&quiet);
  PetscCall(ierr);
  PetscCheck(!any, comm, PETSC_ERR_FILE_WRITE, "%s: another process could not write its parts", path);
  PetscCall(closing);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partfile_write_parallel(MPI_Comm comm, const char *path, const pbng_parts *pp)
{
  pbng_mesh shape;

  PetscFunctionBeginUser;
  PetscCall(pbng_parts_shape(pp, &shape));
  const PetscErrorCode ierr = write_parallel(comm, path, pp, &shape);
  PetscCall(pbng_mesh_destroy(&shape));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
