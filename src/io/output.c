/* HDF5 result file + XDMF companion; see output.h for the layout and the contract. This module: the
 * file's life cycle and the public API; row writes: output_rows.c; XDMF: output_xdmf.c; HDF5
 * plumbing: h5util.c.
 *
 * Implementation notes
 *  - The file is opened with the MPI-IO driver on the communicator given to pbng_output_open; every
 *    HDF5 call that changes the file (creating groups, datasets, attributes) is made by all ranks with
 *    the same arguments, raw data is written with collective transfers.
 *  - Each rank gives its own rows. Rows are sorted locally (a copy of the rank's rows is made only
 *    when they are not already sorted); when every rank's rows are one run of consecutive global
 *    indices, each rank writes its run as one hyperslab, else one exchange sends every row to the
 *    rank whose block of N / P consecutive rows holds it and each rank writes its block (a partition's
 *    thousands of runs a rank made HDF5's hyperslab unions and point selections cost tens of ms a
 *    dataset on 2 ranks). One collective H5Dwrite a dataset (ranks with nothing select none).
 *    Empty datasets are created but not written.
 *  - HDF5's automatic error printing is switched off for the duration of each public call (and the
 *    previous handler restored afterwards); HDF5 failures become PETSc errors naming the object and
 *    carrying HDF5's innermost error description.
 *  - Frame attributes are stored on the frame group /frames/NNNNNN and, identically, on its
 *    positions dataset, so readers may look at either. */
#include "io/output_private.h"
#include "core/grow.h"
#include "core/sorted_ids.h"

#include <errno.h>
#include <hdf5.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------------ */
/* Attributes (collective: every rank calls with the same values)                                   */

static PetscErrorCode attr_write(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims,
                                 const void *value)
{
  PetscErrorCode ierr = 0;

  PetscFunctionBegin;
  H5TRY(pbng_h5_attr_write(loc, name, type, rank, dims, value), "cannot write attribute '%s'", name);
cleanup:
  PetscFunctionReturn(ierr);
}

static PetscErrorCode attr_double(hid_t loc, const char *name, double v)
{
  PetscFunctionBegin;
  PetscCall(attr_write(loc, name, H5T_NATIVE_DOUBLE, 0, NULL, &v));
  PetscFunctionReturn(0);
}

static PetscErrorCode attr_int(hid_t loc, const char *name, int v)
{
  PetscFunctionBegin;
  PetscCall(attr_write(loc, name, H5T_NATIVE_INT, 0, NULL, &v));
  PetscFunctionReturn(0);
}

/* Fixed-length, null-terminated ASCII string of size strlen+1. NULL is written as "". */
static PetscErrorCode attr_string(hid_t loc, const char *name, const char *value)
{
  PetscErrorCode ierr = 0;

  PetscFunctionBegin;
  H5TRY(pbng_h5_attr_write_string(loc, name, value), "cannot write attribute '%s'", name);
cleanup:
  PetscFunctionReturn(ierr);
}

static PetscErrorCode write_frame_attrs(hid_t loc, const pbng_frame_info *f)
{
  PetscFunctionBegin;
  PetscCall(attr_double(loc, "time", f->time));
  PetscCall(attr_int(loc, "iterations", f->iterations));
  PetscCall(attr_double(loc, "residual", f->residual));
  PetscCall(attr_double(loc, "relative_residual", f->relative_residual));
  PetscCall(attr_double(loc, "seconds", f->seconds));
  PetscCall(attr_double(loc, "energy", f->energy));
  PetscCall(attr_int(loc, "converged", f->converged));
  PetscFunctionReturn(0);
}

/* "rest_positions" -> "/mesh/rest_positions"; absolute paths are kept. */
static PetscErrorCode mesh_path(const char *dataset, char *buf, size_t len)
{
  int k;

  PetscFunctionBegin;
  PetscCheck(dataset && dataset[0], PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: empty dataset name");
  k = dataset[0] == '/' ? snprintf(buf, len, "%s", dataset) : snprintf(buf, len, "/mesh/%s", dataset);
  PetscCheck(k > 0 && (size_t)k < len, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "output: dataset name '%s' too long",
             dataset);
  PetscFunctionReturn(0);
}

/* Remembers a dataset for the XDMF, once per path: a node dataset of /mesh, or a frame field (per_frame; its
 * path is its name), of node or element (cell) rows, with the same columns and type in every frame holding
 * it; *index: its entry. A field recalled from a resumed file (recalled: its rows' kind guessed from their
 * count) takes the shape a later write gives it. */
static PetscErrorCode remember_field(pbng_output *out, const char *path, int ncols, int is_int, int per_frame, int cell, PetscBool recalled,
                                     int *index)
{
  output_field *d;
  const char *base = strrchr(path, '/');

  PetscFunctionBegin;
  for (int k = 0; k < out->nfields; ++k) {
    d = &out->fields[k];
    if (strcmp(d->path, path)) continue;
    *index = k;
    if (d->ncols == ncols && d->is_int == is_int && d->per_frame == per_frame && d->cell == cell) PetscFunctionReturn(0);
    PetscCheck(d->recalled && !recalled && d->per_frame == per_frame, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
               "output: '%s': dataset '%s' written with %d column(s) of %s per %s, earlier with %d of %s per %s", out->path, path, ncols,
               is_int ? "int32" : "float64", cell ? "element" : "node", d->ncols, d->is_int ? "int32" : "float64", d->cell ? "element" : "node");
    d->ncols = ncols, d->is_int = is_int, d->cell = cell, d->recalled = 0;
    PetscFunctionReturn(0);
  }
  PetscCheck(!per_frame || out->nframe_fields < PBNG_OUTPUT_MAX_FRAME_FIELDS, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "output: '%s': frame field '%s': at most %d frame fields", out->path, path, PBNG_OUTPUT_MAX_FRAME_FIELDS);
  PetscCall(pbng_grow(&out->fields, sizeof(*out->fields), out->nfields + 1, &out->capfields));
  *index = out->nfields;
  d = &out->fields[out->nfields++];
  base = base ? base + 1 : path;
  snprintf(d->path, sizeof d->path, "%s", path);
  snprintf(d->name, sizeof d->name, "%s", strcmp(base, "rest_positions") == 0 ? "rest_position" : base);
  d->ncols = ncols;
  d->is_int = is_int;
  d->per_frame = per_frame;
  d->cell = cell;
  d->recalled = recalled;
  d->slot = per_frame ? out->nframe_fields++ : -1;
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------------ */
/* Open                                                                                             */

/* Rank 0's view of whether 'path' can be created; reason is empty when it can. */
static void check_creatable(const char *path, char *reason, size_t len)
{
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  struct stat st;

  reason[0] = '\0';
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == path) snprintf(dir, sizeof dir, "/");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  if (!slash || slash[1] == '\0') {
    if (slash) snprintf(reason, len, "the path names a directory, not a file");
    else if (!path[0]) snprintf(reason, len, "the path is empty");
    if (reason[0]) return;
  }
  if (stat(dir, &st) != 0) {
    if (errno == ENOENT) snprintf(reason, len, "directory '%.400s' does not exist", dir);
    else if (errno == ENOTDIR) snprintf(reason, len, "a component of '%.400s' is not a directory", dir);
    else snprintf(reason, len, "cannot access directory '%.400s' (%.60s)", dir, strerror(errno));
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(reason, len, "'%.400s' is not a directory", dir);
    return;
  }
  if (access(dir, W_OK | X_OK) != 0) {
    snprintf(reason, len, "directory '%.400s' is not writable (%.60s)", dir, strerror(errno));
    return;
  }
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(reason, len, "'%.400s' is a directory", path);
}

/* The bytes a result of nnodes, nelems and frames needs, with a margin: its data (rest positions,
 * connectivity, color and partition, one position array per frame and the frame fields of doubles the
 * info announces), fixed nodes (at most one entry per node) and HDF5 metadata (measured: 8-16 KiB in all
 * and about 2.2 KiB per frame; 64 KiB and 4 KiB allowed; weak-constraint tables are not counted). An upper
 * bound matters: HDF5 1.10 crashes at exit when the limit is crossed only as the file is closed (setting
 * its final size), so such a limit must be refused before the run, not met in it. */
static double file_bytes_needed(const pbng_output *out, const pbng_output_info *info)
{
  const double nnodes = (double)out->nnodes, cells = out->xdmf_cells ? (double)out->xdmf_ncells * out->xdmf_nodes : 0.0;
  const double frames = info->frames, per_frame = nnodes * (3.0 + info->frame_node_doubles) + (double)out->nelems * info->frame_cell_doubles;
  const double data = nnodes * (24.0 + 4.0 + 4.0) + 8.0 * ((double)out->nelems * out->nodes_per_element + cells) + frames * per_frame * 8.0;
  const double fixed_nodes = nnodes * 8.0;
  const double metadata = 65536.0 + 4096.0 * frames;
  return data + fixed_nodes + metadata;
}

/* Rank 0: a file-size limit (ulimit -f, a batch system's limit) below what the file may need fails
 * before any work rather than with an I/O error in the last frames. */
static void check_file_size_limit(double needed, char *reason, size_t len)
{
  struct rlimit lim;
  if (getrlimit(RLIMIT_FSIZE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return;
  if ((double)lim.rlim_cur < needed)
    snprintf(reason, len, "the file-size limit (ulimit -f) is %.0f bytes, below the %.0f bytes the file may need (data, fixed nodes and metadata): raise the limit or write fewer frames",
             (double)lim.rlim_cur, needed);
}

static PetscErrorCode derive_names(pbng_output *out, const char *path)
{
  size_t len = strlen(path);
  const size_t extra = 16;

  PetscFunctionBegin;
  PetscCall(PetscStrallocpy(path, &out->path));
  PetscCall(PetscMalloc1(len + extra, &out->partial));
  PetscCall(PetscMalloc1(len + extra, &out->xdmf));
  PetscCall(PetscMalloc1(len + extra + 8, &out->xdmf_partial));
  snprintf(out->partial, len + extra, "%s.partial", path);
  if (len > 3 && strcmp(path + len - 3, ".h5") == 0) snprintf(out->xdmf, len + extra, "%.*s.xdmf", (int)(len - 3), path);
  else snprintf(out->xdmf, len + extra, "%s.xdmf", path);
  snprintf(out->xdmf_partial, len + extra + 8, "%s.partial", out->xdmf);
  PetscFunctionReturn(0);
}

static PetscErrorCode create_file(pbng_output *out)
{
  PetscErrorCode ierr = 0;
  hid_t fapl = -1;

  PetscFunctionBegin;
  H5TRY(fapl = H5Pcreate(H5P_FILE_ACCESS), "cannot create file access property list for '%s'", out->path);
  H5TRY(H5Pset_fapl_mpio(fapl, out->comm, MPI_INFO_NULL), "cannot select the MPI-IO driver for '%s'", out->path);
  H5TRY(H5Pset_coll_metadata_write(fapl, 1), "cannot request collective metadata writes for '%s'", out->path);
  H5TRY(out->file = H5Fcreate(out->partial, H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
          "cannot create output file '%s' (as '%s')", out->path, out->partial);
  H5TRY(out->mesh = H5Gcreate2(out->file, "/mesh", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
          "cannot create group /mesh in '%s'", out->partial);
  H5TRY(out->frames = H5Gcreate2(out->file, "/frames", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
          "cannot create group /frames in '%s'", out->partial);
cleanup:
  pbng_h5_close(&fapl);
  PetscFunctionReturn(ierr);
}

/* The sheet terms' material (core/sheet_material.h) as root attributes: sheet_membrane_C [3, 3] (Voigt, on
 * (E_xx, E_yy, 2 E_xy) in each triangle's weft/warp frame), sheet_thickness, sheet_bending_stiffness,
 * sheet_weft [3] and sheet_density (volumetric: a triangle's mass is density x thickness x area). */
static PetscErrorCode write_sheet_attrs(hid_t root, const pbng_sheet_material *m)
{
  const hsize_t three = 3, three_by_three[2] = {3, 3};

  PetscFunctionBegin;
  PetscCall(attr_write(root, "sheet_membrane_C", H5T_NATIVE_DOUBLE, 2, three_by_three, &m->membrane.C[0][0]));
  PetscCall(attr_double(root, "sheet_thickness", m->membrane.thickness));
  PetscCall(attr_double(root, "sheet_bending_stiffness", m->bending_stiffness));
  PetscCall(attr_write(root, "sheet_weft", H5T_NATIVE_DOUBLE, 1, &three, m->weft));
  PetscCall(attr_double(root, "sheet_density", m->density));
  PetscFunctionReturn(0);
}

/* The cloth6 stencils' energy (-sheet_model cloth6, core/cloth6.h): sheet_model "cloth6" and sheet_cloth6 [5] =
 * (k_weft, k_warp, k_shear, beta, k_bend). */
static PetscErrorCode write_cloth6_attrs(hid_t root, const pbng_cloth6_material *c)
{
  const hsize_t five = 5;
  const double v[5] = {c->k_weft, c->k_warp, c->k_shear, c->stiffening, c->k_bend};

  PetscFunctionBegin;
  PetscCall(attr_string(root, "sheet_model", "cloth6"));
  PetscCall(attr_write(root, "sheet_cloth6", H5T_NATIVE_DOUBLE, 1, &five, v));
  PetscFunctionReturn(0);
}

/* The contact local step's attributes: pd_contact 0/1 and, when on, its thickness xi, dhat, the rest exclusion, eps, kappa and the
 * obstacles as rows (kind, 6 parameters; kinds as pbng_obstacle_kind). */
static PetscErrorCode write_pd_contact_attrs(hid_t root, const pbng_output_pd *o)
{
  PetscFunctionBegin;
  PetscCall(attr_int(root, "pd_contact", o->contact));
  if (!o->contact) PetscFunctionReturn(0);
  PetscCall(attr_double(root, "pd_contact_thickness", o->contact_thickness));
  PetscCall(attr_double(root, "pd_contact_dhat", o->contact_dhat));
  PetscCall(attr_double(root, "pd_contact_rest_exclusion", o->contact_rest_exclusion));
  PetscCall(attr_double(root, "pd_contact_eps", o->contact_eps));
  PetscCall(attr_double(root, "pd_contact_kappa", o->contact_kappa));
  if (o->nobstacles > 0) {
    double(*rows)[7];
    const hsize_t dims[2] = {(hsize_t)o->nobstacles, 7};
    PetscCall(PetscMalloc1(o->nobstacles, &rows));
    for (int k = 0; k < o->nobstacles; ++k) {
      rows[k][0] = (double)o->obstacle[k].kind;
      for (int j = 0; j < 6; ++j) rows[k][1 + j] = o->obstacle[k].p[j];
    }
    const PetscErrorCode ierr = attr_write(root, "pd_obstacles", H5T_NATIVE_DOUBLE, 2, dims, &rows[0][0]);
    PetscCall(PetscFree(rows));
    PetscCall(ierr);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode write_peridynamic_attrs(hid_t root, const pbng_output_pd *o)
{
  PetscFunctionBegin;
  PetscCall(attr_string(root, "sheet_model", "peridynamic"));
  PetscCall(attr_string(root, "pd_material", o->material));
  PetscCall(attr_double(root, "pd_s0", o->s0));
  PetscCall(attr_double(root, "pd_s1", o->s1));
  PetscCall(attr_double(root, "pd_kb", o->k_b));
  PetscCall(attr_double(root, "pd_thickness", o->thickness));
  PetscCall(write_pd_contact_attrs(root, o));
  PetscFunctionReturn(0);
}

static PetscErrorCode write_root_attrs(pbng_output *out, const pbng_output_info *info)
{
  PetscErrorCode ierr = 0;
  hid_t root = -1;
  hsize_t three = 3;

  PetscFunctionBegin;
  H5TRY(root = H5Gopen2(out->file, "/", H5P_DEFAULT), "cannot open the root group of '%s'", out->partial);
  TRY(attr_string(root, "format", info->format ? info->format : "pbng-1"));
  TRY(attr_string(root, "element", out->mixed ? "mixed" : out->element->name));
  TRY(attr_string(root, "material", info->material));
  TRY(attr_double(root, "youngs_modulus", info->youngs_modulus));
  TRY(attr_double(root, "poisson_ratio", info->poisson_ratio));
  TRY(attr_double(root, "density", info->density));
  TRY(attr_write(root, "gravity", H5T_NATIVE_DOUBLE, 1, &three, info->gravity));
  TRY(attr_string(root, "solver", info->solver));
  TRY(attr_string(root, "mode", info->mode));
  TRY(attr_string(root, "command_line", info->command_line));
  TRY(attr_int(root, "frames_written", 0));
  if (info->sheet) TRY(write_sheet_attrs(root, info->sheet));
  if (info->sheet && out->element && out->element->kind == PBNG_ELEMENT_CLOTH6) TRY(write_cloth6_attrs(root, &info->sheet->cloth6));
  if (info->pd) TRY(write_peridynamic_attrs(root, info->pd));
cleanup:
  pbng_h5_close(&root);
  PetscFunctionReturn(ierr);
}

static PetscErrorCode output_free(pbng_output **out);
static PetscErrorCode close_handles(pbng_output *out);

/* Kind t's cells in the XDMF topology: its own cell where XDMF has one that ParaView reads (in a Mixed
 * topology: pbng_element_xdmf_id >= 0; else an XDMF TopologyType), otherwise its linear sub-cells; none
 * for a kind with neither (the bending stencil bend4: a coupling of two triangles drawn by the tri3
 * cells, not a cell of its own). */
static void xdmf_form_init(const pbng_element_type *t, PetscBool mixed, xdmf_form *f)
{
  const PetscBool own = mixed ? pbng_element_xdmf_id(t) >= 0 : t->xdmf_topology != NULL;
  int sub[PBNG_MAX_SUBCELLS][PBNG_MAX_SUBCELL_NODES];

  f->count = own ? 0 : pbng_element_linear_subcells(t, &f->cell, sub);
  for (int k = 0; k < f->count; ++k)
    for (int j = 0; j < f->cell->nodes; ++j) f->node[k][j] = sub[k][j];
  if (f->count > 0) return;
  f->cell = t;
  f->count = own ? 1 : 0;
  for (int j = 0; j < t->nodes; ++j) f->node[0][j] = t->xdmf_order ? t->xdmf_order[j] : j;
}

/* The values an element of form f takes in a Mixed topology: each cell's type id and nodes. */
static int64_t mixed_values(const xdmf_form *f)
{
  return (int64_t)f->count * (1 + f->cell->nodes);
}

/* Every kind's form in this file's topology (out->mixed: a Mixed one). */
static void xdmf_forms_init(pbng_output *out)
{
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k) xdmf_form_init(pbng_element_type_get((pbng_element_kind)k), out->mixed, &out->form[k]);
}

/* One kind's datasets: /mesh/tetrahedra or /mesh/elements, and /mesh/xdmf_cells where XDMF needs
 * another node order or linear sub-cells. */
static void set_kind_layout(pbng_output *out, const pbng_output_info *info)
{
  const xdmf_form *f;

  out->element = info->element ? info->element : pbng_element_type_get(PBNG_ELEMENT_TET4);
  out->nodes_per_element = out->element->nodes;
  out->elements_path = out->element->kind == PBNG_ELEMENT_TET4 ? "/mesh/tetrahedra" : "/mesh/elements";
  xdmf_forms_init(out);
  f = &out->form[out->element->kind];
  out->xdmf_cells = (PetscBool)(f->cell != out->element || out->element->xdmf_order);
  out->xdmf_ncells = f->count * out->nelems;
  out->xdmf_elements = out->xdmf_ncells;
  out->xdmf_nodes = f->cell->nodes;
  snprintf(out->topology, sizeof out->topology, "%s", f->count ? f->cell->xdmf_topology : "");
  out->cell_per_element = f->count == 1;
}

/* Kinds mixed: /mesh/elements with padded rows, /mesh/element_types, and the Mixed XDMF topology's
 * one-column /mesh/xdmf_cells, sized from the kinds' counts. */
static void set_mixed_layout(pbng_output *out, const pbng_output_info *info)
{
  out->mixed = PETSC_TRUE;
  out->nodes_per_element = info->mixed_nen;
  out->elements_path = "/mesh/elements";
  out->xdmf_cells = PETSC_TRUE;
  out->xdmf_nodes = 1;
  xdmf_forms_init(out);
  out->cell_per_element = PETSC_TRUE;
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k) {
    out->xdmf_elements += info->kind_count[k] * out->form[k].count;
    out->xdmf_ncells += info->kind_count[k] * mixed_values(&out->form[k]);
    if (info->kind_count[k] > 0 && out->form[k].count != 1) out->cell_per_element = PETSC_FALSE;
  }
  snprintf(out->topology, sizeof out->topology, "Mixed");
}

/* A new output object (no file yet) on a duplicate of comm. */
static PetscErrorCode output_new(MPI_Comm comm, const pbng_output_info *info, int64_t nnodes, int64_t nelems, pbng_output **outp)
{
  pbng_output *out;

  PetscFunctionBegin;
  PetscCall(PetscNew(&out));
  out->file = out->mesh = out->frames = -1;
  out->nnodes = nnodes;
  out->nelems = nelems;
  if (info->mixed_nen > 0) set_mixed_layout(out, info);
  else set_kind_layout(out, info);
  out->no_xdmf = info->no_xdmf;
  PetscCallMPI(MPI_Comm_dup(comm, &out->comm));
  PetscCallMPI(MPI_Comm_rank(out->comm, &out->rank));
  PetscCallMPI(MPI_Comm_size(out->comm, &out->size));
  *outp = out;
  PetscFunctionReturn(0);
}

static PetscErrorCode output_open(MPI_Comm comm, const char *path, const pbng_output_info *info, int64_t nnodes,
                                  int64_t nelems, pbng_output **outp)
{
  pbng_output *out;
  char reason[PBNG_OUTPUT_MSG];
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCheck(outp, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output pointer");
  *outp = NULL;
  PetscCheck(path && info, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL path or info");
  PetscCheck(nnodes >= 0 && nelems >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "output: negative node or element count for '%s'", path);
  PetscCall(output_new(comm, info, nnodes, nelems, &out));
  ierr = derive_names(out, path);
  if (!ierr) {
    if (out->rank == 0) check_creatable(path, reason, sizeof reason);
    if (out->rank == 0 && !reason[0] && info->frames > 0)
      check_file_size_limit(file_bytes_needed(out, info), reason, sizeof reason);
    if (MPI_Bcast(reason, (int)sizeof reason, MPI_CHAR, 0, out->comm) != MPI_SUCCESS) ierr = PETSC_ERR_MPI;
  }
  if (!ierr && reason[0]) {
    PetscCall(output_free(&out));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot create output file '%s': %s", path, reason);
  }
  if (!ierr) ierr = create_file(out);
  if (!ierr) ierr = write_root_attrs(out, info);
  if (ierr) {
    (void)close_handles(out);
    if (out->rank == 0) (void)remove(out->partial);
    (void)output_free(&out);
    PetscCall(ierr);
  }
  *outp = out;
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------------ */
/* Frames, fixed nodes                                                                              */

static PetscErrorCode output_write_fixed_nodes(pbng_output *out, int64_t nlocal, const int64_t *nodes)
{
  PetscErrorCode ierr = 0;
  int *counts = NULL, *displs = NULL, nl;
  int64_t *all = NULL, K = 0, bad = -1, anybad;
  hid_t dset = -1, fspace = -1, mspace = -1, dxpl = -1;
  const char *path = "/mesh/fixed_nodes";
  hsize_t one = 1;

  PetscFunctionBegin;
  PetscCheck(nlocal >= 0 && nlocal < INT32_MAX && (nlocal == 0 || nodes), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
             "output: dataset '%s': bad local list (%" PRId64 " entries)", path, nlocal);
  {
    int64_t flag = 0;
    for (int64_t i = 0; i < nlocal && !flag; ++i)
      if (nodes[i] < 0 || nodes[i] >= out->nnodes) {
        flag = 1;
        bad = nodes[i];
      }
    PetscCallMPI(MPI_Allreduce(&flag, &anybad, 1, MPI_INT64_T, MPI_MAX, out->comm));
    PetscCheck(!flag, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "output: dataset '%s': node %" PRId64 " is outside 0..%" PRId64, path, bad, out->nnodes - 1);
    PetscCheck(!anybad, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "output: dataset '%s': another rank gave nodes outside 0..%" PRId64, path, out->nnodes - 1);
  }
  nl = (int)nlocal;
  if (out->rank == 0) {
    PetscCall(PetscMalloc2(out->size, &counts, out->size, &displs));
  }
  PetscCallMPI(MPI_Gather(&nl, 1, MPI_INT, counts, 1, MPI_INT, 0, out->comm));
  if (out->rank == 0) {
    int64_t total = 0;
    for (int r = 0; r < out->size; ++r) {
      displs[r] = (int)total;
      total += counts[r];
    }
    PetscCheck(total < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "output: dataset '%s' too large", path);
    PetscCall(PetscMalloc1((size_t)total + 1, &all));
    K = total;
  }
  PetscCallMPI(MPI_Gatherv(nodes, nl, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, out->comm));
  if (out->rank == 0) {
    int64_t k = 0;
    qsort(all, (size_t)K, sizeof(int64_t), pbng_compare_int64);
    for (int64_t i = 0; i < K; ++i)
      if (k == 0 || all[i] != all[k - 1]) all[k++] = all[i];
    K = k;
  }
  PetscCallMPI(MPI_Bcast(&K, 1, MPI_INT64_T, 0, out->comm));

  TRY(output_create_dataset(out, path, H5T_STD_I64LE, K, 1, PETSC_TRUE, &dset));
  if (K == 0) goto cleanup; /* an empty dataset has no storage to write (K is the same on all ranks) */
  H5TRY(fspace = H5Dget_space(dset), "cannot get dataspace of '%s'", path);
  if (out->rank == 0 && K > 0) {
    hsize_t kk = (hsize_t)K;
    H5TRY(H5Sselect_all(fspace), "cannot select in '%s'", path);
    H5TRY(mspace = H5Screate_simple(1, &kk, NULL), "cannot create memory space for '%s'", path);
  } else {
    H5TRY(H5Sselect_none(fspace), "cannot select in '%s'", path);
    H5TRY(mspace = H5Screate_simple(1, &one, NULL), "cannot create memory space for '%s'", path);
    H5TRY(H5Sselect_none(mspace), "cannot select in memory space for '%s'", path);
  }
  H5TRY(dxpl = H5Pcreate(H5P_DATASET_XFER), "cannot create transfer property list for '%s'", path);
  H5TRY(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "cannot request collective transfer for '%s'", path);
  {
    int64_t dummy = 0;
    H5TRY(H5Dwrite(dset, H5T_NATIVE_INT64, mspace, fspace, dxpl, all ? (const void *)all : (const void *)&dummy),
            "cannot write dataset '%s' of '%s'", path, out->partial);
  }
cleanup:
  pbng_h5_close(&dxpl);
  pbng_h5_close(&mspace);
  pbng_h5_close(&fspace);
  pbng_h5_close(&dset);
  (void)PetscFree(all);
  if (counts) (void)PetscFree2(counts, displs);
  PetscFunctionReturn(ierr);
}

static PetscErrorCode output_write_frame(pbng_output *out, int frame, int64_t nlocal, const int64_t *rows,
                                         const double *positions, const pbng_frame_info *finfo)
{
  PetscErrorCode ierr = 0;
  char gname[32], dname[48];
  hid_t grp = -1, dset = -1, root = -1;

  PetscFunctionBegin;
  PetscCheck(frame >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "output: frame index %d is negative", frame);
  PetscCheck(finfo, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: frame %d: NULL frame info", frame);
  for (int i = 0; i < out->nframes; ++i)
    PetscCheck(out->framelist[i].index != frame, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
               "output: frame %d written twice to '%s'", frame, out->partial);
  snprintf(gname, sizeof gname, "/frames/%06d", frame);
  snprintf(dname, sizeof dname, "%s/positions", gname);
  H5TRY(grp = H5Gcreate2(out->file, gname, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create group '%s'",
          gname);
  TRY(output_write_rows(out, dname, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double), out->nnodes, 3, PETSC_FALSE,
                 nlocal, rows, positions));
  TRY(write_frame_attrs(grp, finfo));
  H5TRY(dset = H5Dopen2(out->file, dname, H5P_DEFAULT), "cannot open dataset '%s'", dname);
  TRY(write_frame_attrs(dset, finfo));
  TRY(pbng_grow(&out->framelist, sizeof(*out->framelist), out->nframes + 1, &out->capframes));
  out->framelist[out->nframes++] = (frame_entry){.index = frame, .time = finfo->time};
  H5TRY(root = H5Gopen2(out->file, "/", H5P_DEFAULT), "cannot open the root group of '%s'", out->partial);
  TRY(attr_int(root, "frames_written", out->nframes));
cleanup:
  pbng_h5_close(&root);
  pbng_h5_close(&dset);
  pbng_h5_close(&grp);
  PetscFunctionReturn(ierr);
}

/* ------------------------------------------------------------------------------------------------ */
/* Close, XDMF                                                                                      */

/* Rank 0: XDMF, then rename both into place. */
static void finalize_files(const pbng_output *out, char *reason, size_t len)
{
  reason[0] = '\0';
  if (!out->no_xdmf && output_write_xdmf(out, reason, len)) return;
  if (rename(out->partial, out->path) != 0) {
    snprintf(reason, len, "cannot rename '%s' to '%s': %s", out->partial, out->path, strerror(errno));
    return;
  }
  if (!out->no_xdmf && rename(out->xdmf_partial, out->xdmf) != 0)
    snprintf(reason, len, "cannot rename '%s' to '%s': %s", out->xdmf_partial, out->xdmf, strerror(errno));
}

/* Closes every HDF5 object of the file, then the file. Collective. */
static PetscErrorCode close_handles(pbng_output *out)
{
  PetscErrorCode ierr = 0;

  PetscFunctionBegin;
  pbng_h5_close(&out->mesh);
  pbng_h5_close(&out->frames);
  if (out->file >= 0) {
    ssize_t n = H5Fget_obj_count(out->file, H5F_OBJ_LOCAL | H5F_OBJ_DATASET | H5F_OBJ_GROUP | H5F_OBJ_DATATYPE |
                                                H5F_OBJ_ATTR);
    if (n > 0) {
      hid_t *ids;
      PetscCall(PetscMalloc1((size_t)n, &ids));
      n = H5Fget_obj_ids(out->file, H5F_OBJ_LOCAL | H5F_OBJ_DATASET | H5F_OBJ_GROUP | H5F_OBJ_DATATYPE |
                                        H5F_OBJ_ATTR,
                         (size_t)n, ids);
      for (ssize_t i = 0; i < n; ++i) pbng_h5_close(&ids[i]);
      PetscCall(PetscFree(ids));
    }
    H5TRY(H5Fclose(out->file), "cannot close '%s'", out->partial);
  }
cleanup:
  out->file = -1;
  PetscFunctionReturn(ierr);
}

static PetscErrorCode output_free(pbng_output **out)
{
  PetscFunctionBegin;
  if (!*out) PetscFunctionReturn(0);
  if ((*out)->comm != MPI_COMM_NULL && (*out)->comm != 0) PetscCallMPI(MPI_Comm_free(&(*out)->comm));
  PetscCall(PetscFree((*out)->path));
  PetscCall(PetscFree((*out)->partial));
  PetscCall(PetscFree((*out)->xdmf));
  PetscCall(PetscFree((*out)->xdmf_partial));
  PetscCall(PetscFree((*out)->fields));
  PetscCall(PetscFree((*out)->framelist));
  PetscCall(PetscFree(*out));
  PetscFunctionReturn(0);
}

static PetscErrorCode output_close(pbng_output **outp, PetscBool success)
{
  pbng_output *out;
  PetscErrorCode ierr = 0;
  char reason[PBNG_OUTPUT_MSG] = "";

  PetscFunctionBegin;
  if (!outp || !*outp) PetscFunctionReturn(0);
  out = *outp;
  if (success) {
    hid_t root = H5Gopen2(out->file, "/", H5P_DEFAULT);
    if (root < 0) {
      pbng_h5_last_error(reason, PBNG_OUTPUT_MSG);
      ierr = PETSC_ERR_LIB;
    } else {
      ierr = attr_int(root, "frames_written", out->nframes);
      pbng_h5_close(&root);
    }
    if (!ierr) ierr = close_handles(out);
    else (void)close_handles(out);
    if (!ierr) {
      PetscCallMPI(MPI_Barrier(out->comm));
      if (out->rank == 0) finalize_files(out, reason, sizeof reason);
      PetscCallMPI(MPI_Bcast(reason, (int)sizeof reason, MPI_CHAR, 0, out->comm));
      PetscCallMPI(MPI_Barrier(out->comm));
      if (reason[0]) ierr = PETSC_ERR_FILE_WRITE;
    }
  } else {
    (void)close_handles(out);
    PetscCallMPI(MPI_Barrier(out->comm));
    if (out->rank == 0) {
      (void)remove(out->partial);
      (void)remove(out->xdmf_partial);
    }
    PetscCallMPI(MPI_Barrier(out->comm));
  }
  {
    char path[PETSC_MAX_PATH_LEN];
    snprintf(path, sizeof path, "%s", out->path);
    PetscCall(output_free(outp));
    *outp = NULL;
    PetscCheck(!reason[0], PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "output: cannot finish '%s': %s", path, reason);
    PetscCheck(!ierr, PETSC_COMM_SELF, ierr, "output: cannot finish '%s' (left as '%s.partial')", path, path);
  }
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------------ */
/* Root attributes, suspend and resume                                                              */

static PetscErrorCode root_attr(pbng_output *out, const char *name, int n, const double *values, const char *text)
{
  PetscErrorCode ierr = 0;
  hid_t root = -1;
  const hsize_t dims = (hsize_t)n;

  PetscFunctionBegin;
  H5TRY(root = H5Gopen2(out->file, "/", H5P_DEFAULT), "cannot open the root group of '%s'", out->partial);
  if (text) TRY(attr_string(root, name, text));
  else TRY(attr_write(root, name, H5T_NATIVE_DOUBLE, 1, &dims, values));
cleanup:
  pbng_h5_close(&root);
  PetscFunctionReturn(ierr);
}

static PetscErrorCode output_suspend(pbng_output **outp)
{
  pbng_output *out = *outp;
  PetscErrorCode ierr = 0;
  hid_t root = -1;

  PetscFunctionBegin;
  H5TRY(root = H5Gopen2(out->file, "/", H5P_DEFAULT), "cannot open the root group of '%s'", out->partial);
  TRY(attr_int(root, "frames_written", out->nframes));
cleanup:
  pbng_h5_close(&root);
  {
    PetscErrorCode ierr2 = close_handles(out);
    if (!ierr) ierr = ierr2;
  }
  PetscCall(output_free(outp));
  PetscFunctionReturn(ierr);
}

/* Dataset lengths along the first dimension (0 when missing), and the number of columns. */
static hsize_t dataset_rows(hid_t loc, const char *path, int *ncols, int *is_int)
{
  hsize_t dims[2] = {0, 1};
  if (H5Lexists(loc, path, H5P_DEFAULT) <= 0) return 0;
  hid_t dset = H5Dopen2(loc, path, H5P_DEFAULT), space = H5Dget_space(dset), type = H5Dget_type(dset);
  const int rank = H5Sget_simple_extent_ndims(space);
  H5Sget_simple_extent_dims(space, dims, NULL);
  if (ncols) *ncols = rank == 2 ? (int)dims[1] : 1;
  if (is_int) *is_int = H5Tget_class(type) == H5T_INTEGER;
  H5Tclose(type), H5Sclose(space), H5Dclose(dset);
  return rank >= 1 ? dims[0] : 0;
}

/* The node datasets of /mesh (for the XDMF), as output_open's writers would have remembered them. */
static PetscErrorCode recall_node_datasets(pbng_output *out)
{
  static const char *const names[] = {"rest_positions", "color", "partition", "bound", "node_loads", "handle_stiffness"};

  PetscFunctionBegin;
  for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); ++j) {
    char path[96];
    int ncols = 0, is_int = 0, k;
    snprintf(path, sizeof path, "/mesh/%s", names[j]);
    if (dataset_rows(out->file, path, &ncols, &is_int) == (hsize_t)out->nnodes) PetscCall(remember_field(out, path, ncols, is_int, 0, 0, PETSC_FALSE, &k));
  }
  out->have_elements = dataset_rows(out->file, out->elements_path, NULL, NULL) == (hsize_t)out->nelems &&
                       (!out->xdmf_cells || dataset_rows(out->file, "/mesh/xdmf_cells", NULL, NULL) == (hsize_t)out->xdmf_ncells);
  PetscFunctionReturn(0);
}

/* A kept frame's fields (resume): every dataset of its group but positions (not the contacts group),
 * remembered for the XDMF as a node field when it has N rows (unless it also has M and a cell attribute's
 * columns a node attribute cannot have), else as a cell field when it has M; others are left out. A guess
 * only where N = M: the field's next write settles it (remember_field). */
static PetscErrorCode recall_frame_fields(pbng_output *out, hid_t grp, const char *gname, frame_entry *fr)
{
  PetscErrorCode ierr = 0;
  H5G_info_t info;
  hid_t obj = -1;

  PetscFunctionBegin;
  H5TRY(H5Gget_info(grp, &info), "cannot list '%s'", gname);
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    char name[64], path[128];
    int ncols = 1, is_int = 0, k;
    ssize_t len;
    H5TRY(len = H5Lget_name_by_idx(grp, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT), "cannot list '%s'", gname);
    if ((size_t)len >= sizeof name || !strcmp(name, "positions")) continue;
    H5TRY(obj = H5Oopen(grp, name, H5P_DEFAULT), "cannot open '%s/%s'", gname, name);
    const H5I_type_t type = H5Iget_type(obj);
    pbng_h5_close(&obj);
    if (type != H5I_DATASET) continue;
    snprintf(path, sizeof path, "%s/%s", gname, name);
    const hsize_t rows = dataset_rows(out->file, path, &ncols, &is_int);
    const int node = rows == (hsize_t)out->nnodes && (rows != (hsize_t)out->nelems || ncols == 1 || ncols == 3);
    if (!node && rows != (hsize_t)out->nelems) continue;
    TRY(remember_field(out, name, ncols, is_int, 1, !node, PETSC_TRUE, &k));
    fr->fields |= (uint64_t)1 << out->fields[k].slot;
  }
cleanup:
  pbng_h5_close(&obj);
  PetscFunctionReturn(ierr);
}

/* Frames 0..keep-1 (each must be there) into the frame list, with their fields; later ones deleted. */
static PetscErrorCode recall_frames(pbng_output *out, int keep)
{
  PetscErrorCode ierr = 0;
  hid_t grp = -1, attr = -1, root = -1;

  PetscFunctionBegin;
  for (int k = 0;; ++k) {
    char gname[32];
    snprintf(gname, sizeof gname, "/frames/%06d", k);
    if (H5Lexists(out->file, gname, H5P_DEFAULT) <= 0) {
      PetscCheck(k >= keep, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "output: '%s' holds frames 0..%d, not the %d to continue from",
                 out->partial, k - 1, keep);
      break;
    }
    if (k >= keep) {
      H5TRY(H5Ldelete(out->file, gname, H5P_DEFAULT), "cannot delete '%s' from '%s'", gname, out->partial);
      continue;
    }
    double time = 0;
    H5TRY(grp = H5Gopen2(out->file, gname, H5P_DEFAULT), "cannot open '%s'", gname);
    H5TRY(attr = H5Aopen(grp, "time", H5P_DEFAULT), "'%s' has no time attribute", gname);
    H5TRY(H5Aread(attr, H5T_NATIVE_DOUBLE, &time), "cannot read the time of '%s'", gname);
    pbng_h5_close(&attr);
    TRY(pbng_grow(&out->framelist, sizeof(*out->framelist), out->nframes + 1, &out->capframes));
    out->framelist[out->nframes] = (frame_entry){.index = k, .time = time};
    TRY(recall_frame_fields(out, grp, gname, &out->framelist[out->nframes++]));
    pbng_h5_close(&grp);
  }
  H5TRY(root = H5Gopen2(out->file, "/", H5P_DEFAULT), "cannot open the root group of '%s'", out->partial);
  TRY(attr_int(root, "frames_written", out->nframes));
cleanup:
  pbng_h5_close(&attr), pbng_h5_close(&grp), pbng_h5_close(&root);
  PetscFunctionReturn(ierr);
}

static PetscErrorCode output_resume(MPI_Comm comm, const char *path, const pbng_output_info *info, int64_t nnodes, int64_t nelems,
                                    int keep_frames, pbng_output **outp)
{
  pbng_output *out;
  PetscErrorCode ierr = 0;
  hid_t fapl = -1;

  PetscFunctionBegin;
  *outp = NULL;
  PetscCall(output_new(comm, info, nnodes, nelems, &out));
  TRY(derive_names(out, path));
  H5TRY(fapl = H5Pcreate(H5P_FILE_ACCESS), "cannot create file access property list for '%s'", path);
  H5TRY(H5Pset_fapl_mpio(fapl, out->comm, MPI_INFO_NULL), "cannot select the MPI-IO driver for '%s'", path);
  H5TRY(out->file = H5Fis_hdf5(out->partial) > 0 ? H5Fopen(out->partial, H5F_ACC_RDWR, fapl) : -1,
          "cannot reopen '%s' to continue the run (missing or damaged)", out->partial);
  H5TRY(out->mesh = H5Gopen2(out->file, "/mesh", H5P_DEFAULT), "'%s' has no /mesh", out->partial);
  H5TRY(out->frames = H5Gopen2(out->file, "/frames", H5P_DEFAULT), "'%s' has no /frames", out->partial);
  PetscCheck(dataset_rows(out->file, "/mesh/rest_positions", NULL, NULL) == (hsize_t)nnodes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "output: '%s' is not a result of this mesh (%" PRId64 " nodes)", out->partial, nnodes);
  TRY(recall_node_datasets(out));
  TRY(recall_frames(out, keep_frames));
cleanup:
  pbng_h5_close(&fapl);
  if (ierr) {
    (void)close_handles(out);
    (void)output_free(&out);
    PetscCall(ierr);
  }
  *outp = out;
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------------ */
/* Public API: each call silences HDF5's error printing for its duration (PBNG_H5_QUIETLY).         */

PetscErrorCode pbng_output_open(MPI_Comm comm, const char *path, const pbng_output_info *info, int64_t nnodes,
                                int64_t nelems, pbng_output **out)
{
  PetscFunctionBegin;
  PBNG_H5_QUIETLY(output_open(comm, path, info, nnodes, nelems, out));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_write_nodes_double(pbng_output *out, const char *dataset, int ncols, int64_t nlocal,
                                              const int64_t *rows, const double *data)
{
  char path[96];
  int k;

  PetscFunctionBegin;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output");
  PetscCall(mesh_path(dataset, path, sizeof path));
  PBNG_H5_QUIETLY(output_write_rows(out, path, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, sizeof(double), out->nnodes, ncols,
                        PETSC_TRUE, nlocal, rows, data));
  PetscCall(remember_field(out, path, ncols, 0, 0, 0, PETSC_FALSE, &k));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_write_nodes_int32(pbng_output *out, const char *dataset, int64_t nlocal,
                                             const int64_t *rows, const int32_t *data)
{
  char path[96];
  int k;

  PetscFunctionBegin;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output");
  PetscCall(mesh_path(dataset, path, sizeof path));
  PBNG_H5_QUIETLY(output_write_rows(out, path, H5T_STD_I32LE, H5T_NATIVE_INT32, sizeof(int32_t), out->nnodes, 1, PETSC_TRUE,
                        nlocal, rows, data));
  PetscCall(remember_field(out, path, 1, 1, 0, 0, PETSC_FALSE, &k));
  PetscFunctionReturn(0);
}

/* /frames/NNNNNN/<name> of frame `frame` (written before: it is in the frame list), N node rows or M element
 * rows (cell) of ncols int32 or float64 values ([N] or [M] for one column), remembered for the XDMF as a
 * field of that frame. */
static PetscErrorCode write_frame_field(pbng_output *out, int frame, const char *name, int cell, int is_int, int ncols, int64_t nlocal,
                                        const int64_t *rows, const void *data)
{
  char path[96];
  frame_entry *fr = NULL;
  int k;

  PetscFunctionBegin;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output");
  PetscCheck(name && name[0] && !strchr(name, '/') && strlen(name) < 48, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "output: frame dataset name '%s'",
             name ? name : "");
  for (int i = 0; i < out->nframes; ++i)
    if (out->framelist[i].index == frame) fr = &out->framelist[i];
  PetscCheck(fr, PETSC_COMM_SELF, PETSC_ERR_ORDER, "output: '%s': field '%s' of frame %d, whose positions are not written yet", out->path, name,
             frame);
  PetscCall(remember_field(out, name, ncols, is_int, 1, cell, PETSC_FALSE, &k)); /* path = the name: composed per frame */
  snprintf(path, sizeof path, "/frames/%06d/%s", frame, name);
  PBNG_H5_QUIETLY(output_write_rows(out, path, is_int ? H5T_STD_I32LE : H5T_IEEE_F64LE, is_int ? H5T_NATIVE_INT32 : H5T_NATIVE_DOUBLE,
                                    is_int ? sizeof(int32_t) : sizeof(double), cell ? out->nelems : out->nnodes, ncols, PETSC_TRUE, nlocal, rows,
                                    data));
  fr->fields |= (uint64_t)1 << out->fields[k].slot;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_write_frame_nodes_int32(pbng_output *out, int frame, const char *name, int64_t nlocal, const int64_t *rows,
                                                  const int32_t *data)
{
  PetscFunctionBegin;
  PetscCall(write_frame_field(out, frame, name, 0, 1, 1, nlocal, rows, data));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_write_frame_nodes_double(pbng_output *out, int frame, const char *name, int ncols, int64_t nlocal,
                                                    const int64_t *rows, const double *data)
{
  PetscFunctionBegin;
  PetscCall(write_frame_field(out, frame, name, 0, 0, ncols, nlocal, rows, data));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_write_frame_cells_double(pbng_output *out, int frame, const char *name, int ncols, int64_t nlocal,
                                                    const int64_t *rows, const double *data)
{
  PetscFunctionBegin;
  PetscCall(write_frame_field(out, frame, name, 1, 0, ncols, nlocal, rows, data));
  PetscFunctionReturn(0);
}

/* /mesh/xdmf_cells: each element's cells in XDMF's form (rows count e + k, out->form). */
static PetscErrorCode write_xdmf_cells(pbng_output *out, int64_t nlocal, const int64_t *rows, const int64_t *connectivity)
{
  const xdmf_form *f = &out->form[out->element->kind];
  const int nen = out->nodes_per_element, per = f->count, ncols = out->xdmf_nodes;
  int64_t *cells, *cell_rows;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(nlocal * per * ncols + 1, &cells, nlocal * per + 1, &cell_rows));
  for (int64_t e = 0; e < nlocal; ++e)
    for (int k = 0; k < per; ++k) {
      int64_t *c = &cells[(e * per + k) * ncols];
      cell_rows[e * per + k] = rows[e] * per + k;
      for (int j = 0; j < ncols; ++j) c[j] = connectivity[e * nen + f->node[k][j]];
    }
  PBNG_H5_QUIETLY(output_write_rows(out, "/mesh/xdmf_cells", H5T_STD_I64LE, H5T_NATIVE_INT64, sizeof(int64_t), out->xdmf_ncells, ncols,
                                    PETSC_FALSE, nlocal * per, cell_rows, cells));
  PetscCall(PetscFree2(cells, cell_rows));
  PetscFunctionReturn(0);
}

/* Sorting local elements by global row. */
static int compare_row_index(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Kinds mixed: where each of this rank's elements starts in the Mixed topology's values (every rank
 * learns every element's kind: M bytes, reduced once). */
static PetscErrorCode mixed_cell_offsets(pbng_output *out, int64_t nlocal, const int64_t *rows, const uint8_t *kinds, int64_t *offset)
{
  uint8_t *all; /* kind + 1 of every element */
  int64_t *pairs, at = 0; /* (global row, local index) */

  PetscFunctionBegin;
  PetscCheck(out->nelems <= INT_MAX, out->comm, PETSC_ERR_SUP, "output: '%s': %lld elements of mixed kinds (at most %d in one file)", out->path,
             (long long)out->nelems, INT_MAX);
  PetscCall(PetscCalloc1(out->nelems + 1, &all));
  PetscCall(PetscMalloc1(2 * nlocal + 1, &pairs));
  for (int64_t e = 0; e < nlocal; ++e) all[rows[e]] = (uint8_t)(kinds[e] + 1), pairs[2 * e] = rows[e], pairs[2 * e + 1] = e;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, all, (int)out->nelems, MPI_UINT8_T, MPI_MAX, out->comm));
  qsort(pairs, (size_t)nlocal, 2 * sizeof(int64_t), compare_row_index);
  for (int64_t g = 0, p = 0; g < out->nelems; ++g) {
    if (p < nlocal && pairs[2 * p] == g) offset[pairs[2 * p + 1]] = at, ++p;
    at += mixed_values(&out->form[all[g] - 1]);
  }
  PetscCall(PetscFree(pairs));
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* Kinds mixed: /mesh/element_types (each kind's Gmsh type id; -1, the table's gmsh_type, for pbng's own
 * bend4 that Gmsh has no type for) and /mesh/xdmf_cells in XDMF's Mixed form, each
 * cell its XDMF type id and its nodes in XDMF's order (out->form: tet20 and hex27 as linear
 * sub-cells, bend4 as none), written value by value at its global position. */
static PetscErrorCode write_mixed_cells(pbng_output *out, int64_t nlocal, const int64_t *rows, const int64_t *connectivity,
                                        const uint8_t *kinds)
{
  const int nen = out->nodes_per_element;
  int32_t *types;
  int64_t *offset, *values, *at, n = 0, nvalues = 0;

  PetscFunctionBegin;
  for (int64_t e = 0; e < nlocal; ++e) nvalues += mixed_values(&out->form[kinds[e]]);
  PetscCall(PetscMalloc2(nlocal + 1, &types, nlocal + 1, &offset));
  PetscCall(PetscMalloc2(nvalues + 1, &values, nvalues + 1, &at));
  PetscCall(mixed_cell_offsets(out, nlocal, rows, kinds, offset));
  for (int64_t e = 0; e < nlocal; ++e) {
    const xdmf_form *f = &out->form[kinds[e]];
    const int64_t *c = &connectivity[e * nen];
    const int id = pbng_element_xdmf_id(f->cell);
    int64_t pos = offset[e];
    types[e] = pbng_element_type_get((pbng_element_kind)kinds[e])->gmsh_type;
    for (int k = 0; k < f->count; ++k) {
      at[n] = pos++, values[n++] = id;
      for (int j = 0; j < f->cell->nodes; ++j) at[n] = pos++, values[n++] = c[f->node[k][j]];
    }
  }
  PBNG_H5_QUIETLY(output_write_rows(out, "/mesh/element_types", H5T_STD_I32LE, H5T_NATIVE_INT32, sizeof(int32_t), out->nelems, 1, PETSC_TRUE,
                                    nlocal, rows, types));
  PBNG_H5_QUIETLY(output_write_rows(out, "/mesh/xdmf_cells", H5T_STD_I64LE, H5T_NATIVE_INT64, sizeof(int64_t), out->xdmf_ncells, 1, PETSC_TRUE,
                                    n, at, values));
  PetscCall(PetscFree2(values, at));
  PetscCall(PetscFree2(types, offset));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_write_elements(pbng_output *out, int64_t nlocal, const int64_t *rows,
                                          const int64_t *connectivity, const uint8_t *kinds)
{
  PetscFunctionBegin;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output");
  PetscCheck(!out->mixed == !kinds, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "output: '%s': element kinds %s", out->path,
             out->mixed ? "missing for a mesh mixing kinds" : "given for a mesh of one kind");
  PBNG_H5_QUIETLY(output_write_rows(out, out->elements_path, H5T_STD_I64LE, H5T_NATIVE_INT64, sizeof(int64_t), out->nelems,
                        out->nodes_per_element, PETSC_FALSE, nlocal, rows, connectivity));
  if (out->mixed) PetscCall(write_mixed_cells(out, nlocal, rows, connectivity, kinds));
  else if (out->xdmf_cells) PetscCall(write_xdmf_cells(out, nlocal, rows, connectivity));
  out->have_elements = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_write_table(pbng_output *out, const char *path, pbng_output_type type, int64_t N, int ncols,
                                       int64_t nlocal, const int64_t *rows, const void *data)
{
  const int is_int = type == PBNG_OUTPUT_INT64;

  PetscFunctionBegin;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output");
  PBNG_H5_QUIETLY(output_write_rows(out, path, is_int ? H5T_STD_I64LE : H5T_IEEE_F64LE, is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, 8, N, ncols,
                        PETSC_FALSE, nlocal, rows, data));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_write_fixed_nodes(pbng_output *out, int64_t nlocal, const int64_t *global_nodes)
{
  PetscFunctionBegin;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output");
  PBNG_H5_QUIETLY(output_write_fixed_nodes(out, nlocal, global_nodes));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_write_frame(pbng_output *out, int frame, int64_t nlocal, const int64_t *rows,
                                       const double *positions, const pbng_frame_info *finfo)
{
  PetscFunctionBegin;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output");
  PBNG_H5_QUIETLY(output_write_frame(out, frame, nlocal, rows, positions, finfo));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_close(pbng_output **out, PetscBool success)
{
  PetscFunctionBegin;
  PBNG_H5_QUIETLY(output_close(out, success));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_root_doubles(pbng_output *out, const char *name, int n, const double *values)
{
  PetscFunctionBegin;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output");
  PBNG_H5_QUIETLY(root_attr(out, name, n, values, NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_root_string(pbng_output *out, const char *name, const char *value)
{
  PetscFunctionBegin;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output");
  PBNG_H5_QUIETLY(root_attr(out, name, 0, NULL, value ? value : ""));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_flush(pbng_output *out)
{
  PetscFunctionBegin;
  PetscCheck(out, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "output: NULL output");
  PetscCheck(H5Fflush(out->file, H5F_SCOPE_GLOBAL) >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "output: cannot flush '%s'", out->partial);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_suspend(pbng_output **out)
{
  PetscFunctionBegin;
  if (!out || !*out) PetscFunctionReturn(0);
  PBNG_H5_QUIETLY(output_suspend(out));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_output_resume(MPI_Comm comm, const char *path, const pbng_output_info *info, int64_t nnodes, int64_t nelems,
                                  int keep_frames, pbng_output **out)
{
  PetscFunctionBegin;
  PBNG_H5_QUIETLY(output_resume(comm, path, info, nnodes, nelems, keep_frames, out));
  PetscFunctionReturn(0);
}
