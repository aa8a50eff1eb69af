#include "io/result_reader.h"
#include <hdf5.h>
#include "io/h5rows.h"
#include <string.h>

/* A scalar attribute of a file or group; PETSC_FALSE when missing or unreadable. */
static PetscBool read_scalar_attr(hid_t file, const char *name, hid_t type, void *value)
{
  if (H5Aexists(file, name) <= 0) return PETSC_FALSE;
  hid_t attr = H5Aopen(file, name, H5P_DEFAULT);
  herr_t status = attr >= 0 ? H5Aread(attr, type, value) : -1;
  if (attr >= 0) H5Aclose(attr);
  return status >= 0;
}

/* A fixed-length string attribute of the file. */
static PetscBool read_root_string(hid_t file, const char *name, char *value, size_t size)
{
  hid_t attr, type;
  PetscBool ok = PETSC_FALSE;

  memset(value, 0, size);
  if (H5Aexists(file, name) <= 0) return PETSC_FALSE;
  attr = H5Aopen(file, name, H5P_DEFAULT);
  type = H5Aget_type(attr);
  if (H5Tget_class(type) == H5T_STRING && !H5Tis_variable_str(type) && H5Tget_size(type) < size) ok = H5Aread(attr, type, value) >= 0;
  H5Tclose(type);
  H5Aclose(attr);
  return ok;
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
  hid_t fapl, file;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  memset(info, 0, sizeof(*info));
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
  file = H5Fis_hdf5(path) > 0 ? H5Fopen(path, H5F_ACC_RDONLY, fapl) : -1;
  H5Pclose(fapl);
  PetscCheck(file >= 0, comm, PETSC_ERR_FILE_OPEN, "-initial %s: cannot open it as an HDF5 file", path);
  ierr = read_frame(file, comm, path, frame, nglobal, n, rows, rest, x, info);
  H5Fclose(file);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
