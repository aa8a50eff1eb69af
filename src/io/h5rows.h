/* Rows of tables: a float64 table's rows by global row index (point selection, any order), independently
 * per rank: what a restarted or continued run reads of an earlier file; and a contiguous range of rows read or
 * written collectively (partitioned meshes, HDF5 mesh slices). */
#ifndef PBNG_IO_H5ROWS_H
#define PBNG_IO_H5ROWS_H

#include <hdf5.h>
#include <petscsys.h>
#include <stdint.h>

/* Rows rows[0..n) of the [nglobal, ncols] (or [nglobal] when ncols == 1) float64 dataset `path` of an
 * open file into buf[n][ncols]. Errors start with "<option> <fname>:" (e.g. "-restart ckpt.h5: ..."). */
PetscErrorCode pbng_h5_read_rows(hid_t file, const char *option, const char *fname, const char *path, int64_t nglobal, int ncols, int64_t n,
                                 const int64_t *rows, double *buf);

/* Rows [start, start + n) of the dataset `path` of ncols columns, read or written (write) collectively when the file was
 * opened with MPI-IO (else plainly) in memory type `type`: every process calls, n = 0 selects nothing. Errors name fname and the dataset. */
PetscErrorCode pbng_h5_collective_rows(hid_t file, const char *fname, const char *path, hid_t type, int ncols, int64_t start, int64_t n, void *buf,
                                       int write);

#endif
