#include "io/result_reader.h"
#include <hdf5.h>
#include "io/h5rows.h"
#include "io/h5util.h"
#include <math.h>
#include <string.h>

/* A scalar attribute of a file or group; PETSC_FALSE when missing or unreadable. */
static PetscBool read_scalar_attr(hid_t loc, const char *name, hid_t type, void *value)
{
  return pbng_h5_attr_read(loc, name, type, 1, value) == 0 ? PETSC_TRUE : PETSC_FALSE;
}

/* A string attribute of the file. */
static PetscBool read_root_string(hid_t file, const char *name, char *value, size_t size)
{
  return pbng_h5_attr_read_string(file, name, value, size) == 0 ? PETSC_TRUE : PETSC_FALSE;
}

/* Root attributes: format, node count, frames written (every rank reads the same values). */
static PetscErrorCode check_header(hid_t file, MPI_Comm comm, const char *path, int64_t nglobal, int *frame, pbng_result_frame *info)
{
  char format[32];
  int nframes = 0;
  hid_t dset;
  hsize_t dims[2] = {0, 0};

  PetscFunctionBeginUser;
  PetscCheck(read_root_string(file, "format", format, sizeof(format)) && !strcmp(format, "pbng-1"), comm, PETSC_ERR_FILE_UNEXPECTED,
             "-initial %s: not a pbng result file (format attribute is not pbng-1)", path);
  PetscCheck(read_scalar_attr(file, "frames_written", H5T_NATIVE_INT, &nframes) && nframes > 0, comm, PETSC_ERR_FILE_UNEXPECTED,
             "-initial %s: the file holds no frames", path);
  PetscCheck(read_root_string(file, "mode", info->mode, sizeof(info->mode)), comm, PETSC_ERR_FILE_UNEXPECTED, "-initial %s: no mode attribute", path);
  if (*frame < 0) *frame = nframes - 1;
  PetscCheck(*frame < nframes, comm, PETSC_ERR_ARG_OUTOFRANGE, "-initial_frame %d: %s holds frames 0..%d", *frame, path, nframes - 1);
  dset = H5Dopen2(file, "/mesh/rest_positions", H5P_DEFAULT);
  PetscCheck(dset >= 0, comm, PETSC_ERR_FILE_UNEXPECTED, "-initial %s: no /mesh/rest_positions", path);
  hid_t space = H5Dget_space(dset);
  H5Sget_simple_extent_dims(space, dims, NULL);
  H5Sclose(space), H5Dclose(dset);
  PetscCheck(dims[0] == (hsize_t)nglobal, comm, PETSC_ERR_ARG_SIZ, "-initial %s: made for a mesh of %llu nodes, this one has %" PRId64, path,
             (unsigned long long)dims[0], nglobal);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_frame_time(hid_t file, MPI_Comm comm, const char *path, const char *group, double *time)
{
  hid_t g = H5Lexists(file, group, H5P_DEFAULT) > 0 ? H5Gopen2(file, group, H5P_DEFAULT) : -1;
  PetscBool ok = PETSC_FALSE;

  PetscFunctionBeginUser;
  if (g >= 0) {
    ok = read_scalar_attr(g, "time", H5T_NATIVE_DOUBLE, time);
    H5Gclose(g);
  }
  PetscCheck(ok, comm, PETSC_ERR_FILE_UNEXPECTED, "-initial %s: no %s with a time attribute", path, group);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_frame(hid_t file, MPI_Comm comm, const char *path, int frame, int64_t nglobal, int64_t n, const int64_t *rows,
                                 const double *rest, double *x, pbng_result_frame *info)
{
  char group[64], dataset[80];
  double *stored_rest;
  int mismatch = 0, any;

  PetscFunctionBeginUser;
  PetscCall(check_header(file, comm, path, nglobal, &frame, info));
  snprintf(group, sizeof(group), "/frames/%06d", frame);
  snprintf(dataset, sizeof(dataset), "%s/positions", group);
  PetscCall(read_frame_time(file, comm, path, group, &info->time));
  info->frame = frame;
  PetscCall(PetscMalloc1(3 * n + 1, &stored_rest));
  PetscCall(pbng_h5_read_rows(file, "-initial", path, "/mesh/rest_positions", nglobal, 3, n, rows, stored_rest));
  for (int64_t k = 0; k < 3 * n; ++k) mismatch |= stored_rest[k] != rest[k];
  PetscCall(PetscFree(stored_rest));
  PetscCallMPI(MPI_Allreduce(&mismatch, &any, 1, MPI_INT, MPI_LOR, comm));
  PetscCheck(!any, comm, PETSC_ERR_ARG_INCOMP, "-initial %s: its rest positions differ from this run's mesh (a result of another mesh?)", path);
  PetscCall(pbng_h5_read_rows(file, "-initial", path, dataset, nglobal, 3, n, rows, x));
  for (int64_t k = 0; k < 3 * n; ++k) mismatch |= !isfinite(x[k]);
  PetscCallMPI(MPI_Allreduce(&mismatch, &any, 1, MPI_INT, MPI_LOR, comm));
  PetscCheck(!any, comm, PETSC_ERR_FP, "-initial %s: %s holds non-finite positions", path, dataset);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_result_read_frame(MPI_Comm comm, const char *path, int frame, int64_t nglobal, int64_t n, const int64_t *rows,
                                      const double *rest, double *x, pbng_result_frame *info)
{
  PetscErrorCode ierr = 0;
  pbng_h5_quiet_scope quiet;

  PetscFunctionBeginUser;
  memset(info, 0, sizeof(*info));
  pbng_h5_quiet(&quiet);
  hid_t file = pbng_h5_open(comm, path, H5F_ACC_RDONLY);
  const int opened = file >= 0;
  if (opened) ierr = read_frame(file, comm, path, frame, nglobal, n, rows, rest, x, info);
  pbng_h5_close(&file);
  pbng_h5_restore(&quiet);
  PetscCheck(opened, comm, PETSC_ERR_FILE_OPEN, "-initial %s: cannot open it as an HDF5 file", path);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_result_read_frame_field(MPI_Comm comm, const char *path, int frame, const char *name, int64_t nglobal, int ncols, int64_t n,
                                            const int64_t *rows, double *buf)
{
  pbng_h5_quiet_scope quiet;
  char dataset[96];
  int bad = 0, any;

  PetscFunctionBeginUser;
  snprintf(dataset, sizeof(dataset), "/frames/%06d/%s", frame, name);
  pbng_h5_quiet(&quiet);
  hid_t file = pbng_h5_open(comm, path, H5F_ACC_RDONLY);
  if (file < 0 || pbng_h5_read_rows(file, "-initial", path, dataset, nglobal, ncols, n, rows, buf) != 0) bad = 1;
  pbng_h5_close(&file);
  pbng_h5_restore(&quiet);
  for (int64_t k = 0; !bad && k < n * ncols; ++k) bad = !isfinite(buf[k]);
  PetscCallMPI(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, comm));
  PetscCheck(!any, comm, PETSC_ERR_FILE_UNEXPECTED, "-initial %s: %s is missing, malformed or not finite (a run with -plasticity continues from a result of one)",
             path, dataset);
  PetscFunctionReturn(0);
}
