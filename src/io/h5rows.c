#include "io/h5rows.h"

PetscErrorCode pbng_h5_read_rows(hid_t file, const char *option, const char *fname, const char *path, int64_t nglobal, int ncols, int64_t n,
                                 const int64_t *rows, double *buf)
{
  hid_t dset, fspace, mspace;
  hsize_t dims[2] = {0, 1}, *coord;
  const hsize_t count = (hsize_t)(ncols * n);
  herr_t status;

  PetscFunctionBeginUser;
  dset = H5Lexists(file, path, H5P_DEFAULT) > 0 ? H5Dopen2(file, path, H5P_DEFAULT) : -1;
  PetscCheck(dset >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s %s: no dataset %s", option, fname, path);
  fspace = H5Dget_space(dset);
  const int rank = H5Sget_simple_extent_ndims(fspace);
  H5Sget_simple_extent_dims(fspace, dims, NULL);
  if (!(rank == 2 || (rank == 1 && ncols == 1)) || dims[0] != (hsize_t)nglobal || (rank == 2 && dims[1] != (hsize_t)ncols)) {
    H5Sclose(fspace), H5Dclose(dset);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s %s: %s is not [%" PRId64 ", %d]", option, fname, path, nglobal, ncols);
  }
  PetscCall(PetscMalloc1(2 * count + 2, &coord));
  for (int64_t k = 0; k < n; ++k)
    for (int d = 0; d < ncols; ++d) {
      coord[rank * (ncols * k + d)] = (hsize_t)rows[k];
      if (rank == 2) coord[2 * (ncols * k + d) + 1] = (hsize_t)d;
    }
  mspace = H5Screate_simple(1, count ? &count : (const hsize_t[]){1}, NULL);
  if (n > 0) H5Sselect_elements(fspace, H5S_SELECT_SET, count, coord);
  else H5Sselect_none(fspace), H5Sselect_none(mspace);
  status = H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, buf);
  PetscCall(PetscFree(coord));
  H5Sclose(mspace), H5Sclose(fspace), H5Dclose(dset);
  PetscCheck(status >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s %s: cannot read %s", option, fname, path);
  PetscFunctionReturn(0);
}

/* Whether the file was opened with MPI-IO (collectively). */
static int opened_with_mpio(hid_t file)
{
  hid_t fapl = H5Fget_access_plist(file);
  const int mpio = fapl >= 0 && H5Pget_driver(fapl) == H5FD_MPIO;
  if (fapl >= 0) H5Pclose(fapl);
  return mpio;
}

PetscErrorCode pbng_h5_collective_rows(hid_t file, const char *fname, const char *path, hid_t type, int ncols, int64_t start, int64_t n, void *buf,
                                       int write)
{
  const hsize_t off[2] = {(hsize_t)start, 0}, count[2] = {(hsize_t)n, (hsize_t)ncols};
  hid_t dset = H5Dopen2(file, path, H5P_DEFAULT), fspace, mspace, dxpl = H5Pcreate(H5P_DATASET_XFER);

  PetscFunctionBeginUser;
  PetscCheck(dset >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: missing dataset %s", fname, path);
  fspace = H5Dget_space(dset);
  mspace = H5Screate_simple(2, count, NULL);
  if (n > 0) H5Sselect_hyperslab(fspace, H5S_SELECT_SET, off, NULL, count, NULL);
  else H5Sselect_none(fspace), H5Sselect_none(mspace);
  if (opened_with_mpio(file)) H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE); /* else a serial file: a plain read */
  const herr_t status = write ? H5Dwrite(dset, type, mspace, fspace, dxpl, buf) : H5Dread(dset, type, mspace, fspace, dxpl, buf);
  /* after a failure on this rank alone the handles stay open: closing the dataset would wait for the other ranks */
  PetscCheck(status >= 0, PETSC_COMM_SELF, write ? PETSC_ERR_FILE_WRITE : PETSC_ERR_FILE_READ, "%s: cannot %s %s", fname, write ? "write" : "read",
             path);
  H5Pclose(dxpl);
  H5Sclose(mspace);
  H5Sclose(fspace);
  H5Dclose(dset);
  PetscFunctionReturn(0);
}
