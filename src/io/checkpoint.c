#include "io/checkpoint.h"
#include <hdf5.h>
#include <string.h>
#include "io/h5rows.h"
#include "io/h5util.h"
#include "io/output.h"

#define CKPT_FORMAT "pbng-checkpoint-2" /* 2: the frame loop's judgement state in the counters */

static const char *group_of(pbng_field_kind kind)
{
  return kind == PBNG_FIELD_NODES ? "nodes" : kind == PBNG_FIELD_ELEMENTS ? "elements" : "weak";
}

/* Global count, local item -> global row, and the items this rank owns (writes) of a field kind. */
static void field_rows(const pbng_dmesh *dm, pbng_field_kind kind, int64_t *nglobal, const int64_t **rows, int64_t *nowned)
{
  if (kind == PBNG_FIELD_NODES) *nglobal = dm->nglobal_nodes, *rows = dm->global_node, *nowned = dm->nowned;
  else if (kind == PBNG_FIELD_ELEMENTS) *nglobal = dm->nglobal_elems, *rows = dm->global_elem, *nowned = dm->nowned_elems;
  else *nglobal = dm->nglobal_weak, *rows = dm->global_weak, *nowned = dm->nowned_weak;
}

static PetscErrorCode write_field(pbng_output *out, const pbng_dmesh *dm, const pbng_state_field *f)
{
  char path[96];
  int64_t nglobal, nowned;
  const int64_t *rows;
  double *padded;

  PetscFunctionBeginUser;
  if (f->kind == PBNG_FIELD_SCALARS) {
    snprintf(path, sizeof(path), "scalar_%s", f->name);
    PetscCall(pbng_output_root_doubles(out, path, f->ncomp, f->data));
    PetscFunctionReturn(0);
  }
  field_rows(dm, f->kind, &nglobal, &rows, &nowned);
  if (nglobal == 0) PetscFunctionReturn(0);
  snprintf(path, sizeof(path), "/%s/%s", group_of(f->kind), f->name);
  /* every owned item gets a row (zeros past nwrite, e.g. held nodes of a free-node field) */
  PetscCall(PetscCalloc1(nowned * f->ncomp + 1, &padded));
  PetscCall(PetscArraycpy(padded, f->data, f->nwrite * f->ncomp));
  PetscCall(pbng_output_write_table(out, path, PBNG_OUTPUT_DOUBLE, nglobal, f->ncomp, nowned, rows, padded));
  PetscCall(PetscFree(padded));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_checkpoint_write(const pbng_dmesh *dm, const char *path, const pbng_checkpoint_counters *counters, const char *config,
                                     const char *command_line, int nfields, const pbng_state_field *fields)
{
  const pbng_output_info info = {.material = "", .solver = "", .mode = "", .command_line = command_line, .format = CKPT_FORMAT,
                                 .no_xdmf = PETSC_TRUE};
  pbng_output *out;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(pbng_output_open(dm->comm, path, &info, dm->nglobal_nodes, dm->nglobal_elems, &out));
  ierr = pbng_output_root_doubles(out, "counters", PBNG_CKPT_NCOUNTERS, (const double *)counters);
  if (!ierr) ierr = pbng_output_root_string(out, "config", config);
  for (int k = 0; k < nfields && !ierr; ++k) ierr = write_field(out, dm, &fields[k]);
  if (ierr) {
    (void)pbng_output_close(&out, PETSC_FALSE); /* an earlier checkpoint under this name is left as it was */
    PetscCall(ierr);
  }
  PetscCall(pbng_output_close(&out, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* --- reading ----------------------------------------------------------------------------------- */

/* The node count of /nodes/positions against this run's mesh. */
static PetscErrorCode check_sizes(hid_t file, MPI_Comm comm, const char *path, const pbng_dmesh *dm)
{
  PetscFunctionBeginUser;
  hid_t x = H5Lexists(file, "/nodes/positions", H5P_DEFAULT) > 0 ? H5Dopen2(file, "/nodes/positions", H5P_DEFAULT) : -1;
  hid_t space = x >= 0 ? H5Dget_space(x) : -1;
  hsize_t dims[2] = {0, 0};
  if (space >= 0) H5Sget_simple_extent_dims(space, dims, NULL);
  if (space >= 0) H5Sclose(space);
  if (x >= 0) H5Dclose(x);
  PetscCheck(dims[0] == (hsize_t)dm->nglobal_nodes, comm, PETSC_ERR_ARG_INCOMP,
             "-restart %s: written for a mesh of %llu nodes, this run has %" PRId64, path, (unsigned long long)dims[0], dm->nglobal_nodes);
  PetscFunctionReturn(0);
}

/* The checkpoint's format, counters and configuration, and its node count against the run's. */
static PetscErrorCode read_header(hid_t file, const pbng_dmesh *dm, const char *path, pbng_checkpoint_counters *counters, char *stored, size_t size,
                                  char format[32], int *is_ckpt, int *have)
{
  PetscFunctionBeginUser;
  if (pbng_h5_attr_read_string(file, "format", format, 32) != 0) format[0] = 0;
  *is_ckpt = !strcmp(format, CKPT_FORMAT);
  *have = *is_ckpt && pbng_h5_attr_read(file, "counters", H5T_NATIVE_DOUBLE, PBNG_CKPT_NCOUNTERS, (double *)counters) == 0 &&
          pbng_h5_attr_read_string(file, "config", stored, size) == 0;
  if (*have) PetscCall(check_sizes(file, dm->comm, path, dm));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_checkpoint_read_counters(const pbng_dmesh *dm, const char *path, const char *config, pbng_checkpoint_counters *counters)
{
  char stored[8192], format[32] = "";
  int is_ckpt = 0, have = 0;
  PetscErrorCode ierr = 0;
  pbng_h5_quiet_scope quiet;

  PetscFunctionBeginUser;
  pbng_h5_quiet(&quiet);
  hid_t file = pbng_h5_open(dm->comm, path, H5F_ACC_RDONLY);
  const int opened = file >= 0;
  if (opened) ierr = read_header(file, dm, path, counters, stored, sizeof(stored), format, &is_ckpt, &have);
  pbng_h5_close(&file);
  pbng_h5_restore(&quiet);
  PetscCheck(opened, dm->comm, PETSC_ERR_FILE_OPEN, "-restart %s: cannot open it as an HDF5 file", path);
  PetscCheck(is_ckpt || strncmp(format, "pbng-checkpoint-", 16), dm->comm, PETSC_ERR_FILE_UNEXPECTED,
             "-restart %s: written by another version of pbng (format %s; this pbng reads " CKPT_FORMAT "): restart it with that version", path, format);
  PetscCheck(is_ckpt, dm->comm, PETSC_ERR_FILE_UNEXPECTED, "-restart %s: not a pbng checkpoint (format is not " CKPT_FORMAT ")", path);
  PetscCheck(have, dm->comm, PETSC_ERR_FILE_UNEXPECTED, "-restart %s: incomplete checkpoint (no counters or config)", path);
  PetscCall(ierr);
  PetscCheck(!strcmp(stored, config), dm->comm, PETSC_ERR_ARG_INCOMP,
             "-restart %s: the run's options differ from the checkpoint's:\n  checkpoint: %s\n  this run:   %s", path, stored, config);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_checkpoint_read_fields(const pbng_dmesh *dm, const char *path, int nfields, pbng_state_field *fields)
{
  hid_t file;
  pbng_h5_quiet_scope quiet;
  PetscErrorCode ierr = 0;
  int bad = 0, any;

  PetscFunctionBeginUser;
  pbng_h5_quiet(&quiet);
  file = pbng_h5_open(dm->comm, path, H5F_ACC_RDONLY);
  const int opened = file >= 0;
  for (int k = 0; opened && k < nfields && !ierr; ++k) {
    pbng_state_field *f = &fields[k];
    char name[96];
    if (f->kind == PBNG_FIELD_SCALARS) {
      snprintf(name, sizeof(name), "scalar_%s", f->name);
      if (pbng_h5_attr_read(file, name, H5T_NATIVE_DOUBLE, f->ncomp, f->data) != 0) ierr = PETSC_ERR_FILE_UNEXPECTED;
      continue;
    }
    int64_t nglobal, nowned;
    const int64_t *rows;
    field_rows(dm, f->kind, &nglobal, &rows, &nowned);
    if (nglobal == 0) continue;
    snprintf(name, sizeof(name), "/%s/%s", group_of(f->kind), f->name);
    ierr = pbng_h5_read_rows(file, "-restart", path, name, nglobal, f->ncomp, f->nread, rows, f->data);
  }
  pbng_h5_close(&file);
  pbng_h5_restore(&quiet);
  PetscCheck(opened, dm->comm, PETSC_ERR_FILE_OPEN, "-restart %s: cannot open it as an HDF5 file", path);
  bad = ierr != 0;
  PetscCallMPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, dm->comm));
  PetscCheck(!any, dm->comm, PETSC_ERR_FILE_UNEXPECTED, "-restart %s: a state field is missing or malformed (written by another solver?)", path);
  PetscFunctionReturn(0);
}
