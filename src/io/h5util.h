/* HDF5 plumbing shared by every pbng file (results, checkpoints, partitioned meshes, the result
 * reader): HDF5's automatic error printing silenced for a scope and restored after it, the innermost
 * error message, closing any id, opening and creating files (collectively with MPI-IO, or serially),
 * and attributes. Callers word their own errors; these functions return status. */
#ifndef PBNG_IO_H5UTIL_H
#define PBNG_IO_H5UTIL_H

#include <hdf5.h>
#include <mpi.h>
#include <petscsys.h>
#include <stddef.h>

/* HDF5's automatic error handler, saved while it is silenced. */
typedef struct {
  H5E_auto2_t func;
  void *data;
} pbng_h5_quiet_scope;

/* Silences HDF5's automatic error printing and remembers the handler; pbng_h5_restore puts it back
 * (call it on every path out of the scope). */
void pbng_h5_quiet(pbng_h5_quiet_scope *scope);
void pbng_h5_restore(const pbng_h5_quiet_scope *scope);

/* PetscCall(expr) with HDF5's automatic error printing silenced while expr runs (and restored on
 * every path): for the public calls of the file modules, whose errors name the problem themselves. */
#define PBNG_H5_QUIETLY(expr)                                                                                \
  do {                                                                                                       \
    pbng_h5_quiet_scope scope_;                                                                              \
    pbng_h5_quiet(&scope_);                                                                                  \
    const PetscErrorCode ierr_ = (expr);                                                                     \
    pbng_h5_restore(&scope_);                                                                                \
    PetscCall(ierr_);                                                                                        \
  } while (0)

/* The innermost entry of HDF5's error stack (the most specific reason) into buf; clears the stack. */
void pbng_h5_last_error(char *buf, size_t len);

/* Closes an id of any kind (dataset, group, dataspace, datatype, attribute, property list, file) and
 * sets it to -1; a negative id is left alone. */
void pbng_h5_close(hid_t *id);

/* 1 when path is a readable file starting with HDF5's signature (whether HDF5 can open it or not). */
int pbng_h5_has_signature(const char *path);

/* Opens an existing HDF5 file (flags H5F_ACC_RDONLY or H5F_ACC_RDWR), collectively over comm with
 * MPI-IO, or serially when comm is MPI_COMM_NULL; -1 when it is missing or not an HDF5 file. */
hid_t pbng_h5_open(MPI_Comm comm, const char *path, unsigned flags);
/* Creates (truncates) a file, collectively or serially as above; -1 on failure. */
hid_t pbng_h5_create(MPI_Comm comm, const char *path);

/* Attributes. Writers replace an existing attribute of the name and return 0 or -1; rank 0 is a
 * scalar, rank 1 an array of dims[0] values. Strings are fixed-length and null-terminated (NULL is
 * written as ""). */
int pbng_h5_attr_write(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims, const void *value);
int pbng_h5_attr_write_string(hid_t loc, const char *name, const char *value);
/* Readers return 0, or -1 when the attribute is missing or not of the expected shape: n values of
 * `type`; a string (fixed- or variable-length, as other tools write them) into buf of size bytes. */
int pbng_h5_attr_read(hid_t loc, const char *name, hid_t type, int n, void *value);
int pbng_h5_attr_read_string(hid_t loc, const char *name, char *buf, size_t size);

#endif
