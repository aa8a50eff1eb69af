/* Reading rows of a float64 table by global row index (point selection, any order), independently
 * per rank: what a restarted or continued run reads of an earlier file. */
#ifndef PBNG_IO_H5ROWS_H
#define PBNG_IO_H5ROWS_H

#include <hdf5.h>
#include <petscsys.h>
#include <stdint.h>

/* Rows rows[0..n) of the [nglobal, ncols] (or [nglobal] when ncols == 1) float64 dataset `path` of an
 * open file into buf[n][ncols]. Errors start with "<option> <fname>:" (e.g. "-restart ckpt.h5: ..."). */
PetscErrorCode pbng_h5_read_rows(hid_t file, const char *option, const char *fname, const char *path, int64_t nglobal, int ncols, int64_t n,
                                 const int64_t *rows, double *buf);

#endif
