/* The result file's distributed row writes: each rank's rows sorted (copied only when not sorted
 * already) and written collectively, one hyperslab a rank: its own rows when they are one run on every
 * rank, else the block of rows one exchange sends it (output.c's notes). */
#include "io/output_private.h"
#include "parallel/halo.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t row, idx;
} row_perm;

static int cmp_row_perm(const void *a, const void *b)
{
  const row_perm *x = a, *y = b;
  return (x->row > y->row) - (x->row < y->row);
}

/* Local rows sorted ascending, with the data in the same order (aliases of the input when it was
 * already sorted, else owned copies). */
typedef struct {
  const int64_t *rows;
  const char *data;
  int64_t *rows_own;
  char *data_own;
} sorted_rows;

static PetscBool rows_are_sorted(int64_t n, const int64_t *rows)
{
  for (int64_t i = 1; i < n; ++i)
    if (rows[i] < rows[i - 1]) return PETSC_FALSE;
  return PETSC_TRUE;
}

static PetscErrorCode sort_rows(int64_t n, const int64_t *rows, const void *data, size_t rowbytes,
                                sorted_rows *s)
{
  row_perm *perm;

  PetscFunctionBegin;
  memset(s, 0, sizeof(*s));
  if (rows_are_sorted(n, rows)) {
    s->rows = rows;
    s->data = data;
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc1((size_t)n, &perm));
  for (int64_t i = 0; i < n; ++i) {
    perm[i].row = rows[i];
    perm[i].idx = i;
  }
  qsort(perm, (size_t)n, sizeof(*perm), cmp_row_perm);
  PetscCall(PetscMalloc1((size_t)n, &s->rows_own));
  PetscCall(PetscMalloc1((size_t)n * rowbytes, &s->data_own));
  for (int64_t i = 0; i < n; ++i) {
    s->rows_own[i] = perm[i].row;
    memcpy(s->data_own + (size_t)i * rowbytes, (const char *)data + (size_t)perm[i].idx * rowbytes, rowbytes);
  }
  PetscCall(PetscFree(perm));
  s->rows = s->rows_own;
  s->data = s->data_own;
  PetscFunctionReturn(0);
}

static PetscErrorCode sorted_rows_free(sorted_rows *s)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(s->rows_own));
  PetscCall(PetscFree(s->data_own));
  PetscFunctionReturn(0);
}

/* Collective check of the row lists: every row in 0..N-1, no row given twice on a rank, and the
 * ranks' counts add up to N. The rank holding a bad row names it. */
static PetscErrorCode check_rows(pbng_output *out, const char *dset, int64_t N, int64_t n, const int64_t *sorted)
{
  int64_t local[3] = {n, 0, 0}, global[3];
  int64_t bad = -1, dup = -1;

  PetscFunctionBegin;
  if (n > 0 && (sorted[0] < 0 || sorted[n - 1] >= N)) bad = sorted[0] < 0 ? sorted[0] : sorted[n - 1];
  for (int64_t i = 1; i < n && dup < 0; ++i)
    if (sorted[i] == sorted[i - 1]) dup = sorted[i];
  local[1] = n > 0 && (sorted[0] < 0 || sorted[n - 1] >= N);
  local[2] = dup >= 0;
  PetscCallMPI(MPI_Allreduce(local, global, 3, MPI_INT64_T, MPI_SUM, out->comm));
  PetscCheck(!local[1], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "output: dataset '%s': row %" PRId64 " is outside 0..%" PRId64, dset, bad, N - 1);
  PetscCheck(!local[2], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "output: dataset '%s': row %" PRId64 " given twice",
             dset, dup);
  PetscCheck(!global[1] && !global[2], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
             "output: dataset '%s': another rank gave invalid rows", dset);
  PetscCheck(global[0] == N, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ,
             "output: dataset '%s': the ranks give %" PRId64 " rows in total, expected %" PRId64, dset, global[0], N);
  PetscFunctionReturn(0);
}

/* Creates 'path' (global shape [N] if ncols == 1 and one_d, else [N, ncols]) collectively. */
PetscErrorCode output_create_dataset(pbng_output *out, const char *path, hid_t ftype, int64_t N, int ncols, PetscBool one_d, hid_t *dset)
{
  PetscErrorCode ierr = 0;
  hid_t space = -1, dcpl = -1, lcpl = -1;
  hsize_t dims[2] = {(hsize_t)N, (hsize_t)ncols};
  const int rank = (one_d && ncols == 1) ? 1 : 2;

  PetscFunctionBegin;
  *dset = -1;
  H5TRY(space = H5Screate_simple(rank, dims, NULL), "cannot create dataspace for '%s'", path);
  H5TRY(dcpl = H5Pcreate(H5P_DATASET_CREATE), "cannot create property list for '%s'", path);
  H5TRY(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "cannot set fill time for '%s'", path);
  H5TRY(lcpl = H5Pcreate(H5P_LINK_CREATE), "cannot create property list for '%s'", path);
  H5TRY(H5Pset_create_intermediate_group(lcpl, 1), "cannot set link property for '%s'", path);
  H5TRY(*dset = H5Dcreate2(out->file, path, ftype, space, lcpl, dcpl, H5P_DEFAULT),
          "cannot create dataset '%s' in '%s' (written twice?)", path, out->partial);
cleanup:
  pbng_h5_close(&lcpl);
  pbng_h5_close(&dcpl);
  pbng_h5_close(&space);
  PetscFunctionReturn(ierr);
}

/* Rows [lo + block_begin(hi - lo, P, r), lo + block_begin(hi - lo, P, r + 1)) of a round's rows lo .. hi - 1 are rank
 * r's of P to write: every rank one run. */
static int64_t block_begin(int64_t N, int P, int r) { return N * r / P; }

static int block_owner(int64_t N, int P, int64_t row)
{
  int r = (int)(row * P / N);
  while (r + 1 < P && block_begin(N, P, r + 1) <= row) ++r;
  while (r > 0 && block_begin(N, P, r) > row) --r;
  return r;
}

/* Bytes a rank sends in one round of rows_to_blocks at most (a round's rows are the global rows' share of it): the
 * exchange holds about three copies of them, beside the caller's data. */
#define OUTPUT_ROUND_BYTES ((int64_t)64 << 20)

/* Collective: the n rows of round lo .. hi - 1 (sorted, data in their order) sent to the ranks that write them, this
 * rank's block (block_begin) received into *block in row order (PetscMalloc'd, rowbytes each) as rows *first ..
 * *first + *count - 1. Writes of many runs a rank (a METIS partition's nodes on 2 ranks: thousands) cost HDF5's
 * hyperslab unions or point selections tens of ms each; one exchange and one run a rank cost a copy. A row that two
 * ranks give is an error on every rank. */
static PetscErrorCode rows_to_blocks(pbng_output *out, const char *path, int64_t lo, int64_t hi, int64_t n, const int64_t *rows, const char *data,
                                     size_t rowbytes, char **block, int64_t *first, int64_t *count)
{
  const size_t item = sizeof(int64_t) + rowbytes;
  int size, *dest;
  char *send, *recv;
  int64_t nrecv, twice = -1, first_twice;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(out->comm, &size));
  const int64_t begin = lo + block_begin(hi - lo, size, out->rank), end = lo + block_begin(hi - lo, size, out->rank + 1);
  PetscCall(PetscMalloc2(n * item + 1, &send, n + 1, &dest));
  for (int64_t i = 0; i < n; ++i) {
    memcpy(send + i * item, &rows[i], sizeof(int64_t));
    memcpy(send + i * item + sizeof(int64_t), data + i * rowbytes, rowbytes);
    dest[i] = block_owner(hi - lo, size, rows[i] - lo);
  }
  PetscCall(pbng_send_items_to(out->comm, item, n, dest, send, &nrecv, (void **)&recv));
  PetscCall(PetscFree2(send, dest));
  PetscCall(PetscMalloc1((end - begin) * rowbytes + 1, block));
  for (int64_t k = 0; k < nrecv; ++k) {
    int64_t row;
    memcpy(&row, recv + k * item, sizeof(int64_t));
    memcpy(*block + (row - begin) * rowbytes, recv + k * item + sizeof(int64_t), rowbytes);
  }
  if (nrecv != end - begin) { /* the ranks' counts add up to N (check_rows): some row came twice */
    char *seen;
    PetscCall(PetscCalloc1(end - begin + 1, &seen));
    for (int64_t k = 0; k < nrecv && twice < 0; ++k) {
      int64_t row;
      memcpy(&row, recv + k * item, sizeof(int64_t));
      if (seen[row - begin]++) twice = row;
    }
    PetscCall(PetscFree(seen));
  }
  PetscCall(PetscFree(recv));
  if (twice < 0) twice = INT64_MAX;
  PetscCallMPI(MPI_Allreduce(&twice, &first_twice, 1, MPI_INT64_T, MPI_MIN, out->comm));
  if (first_twice != INT64_MAX) PetscCall(PetscFree(*block));
  PetscCheck(first_twice == INT64_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "output: dataset '%s': row %" PRId64 " given by two ranks", path,
             first_twice);
  *first = begin, *count = end - begin;
  PetscFunctionReturn(0);
}

/* Collective: count rows from row first of buf (count 0: none) written to dset as one hyperslab a rank. */
static PetscErrorCode write_block(pbng_output *out, const char *path, hid_t dset, hid_t mtype, int rank, int ncols, int64_t first, int64_t count,
                                  const void *buf)
{
  PetscErrorCode ierr = 0;
  hid_t fspace = -1, mspace = -1, dxpl = -1;
  const char dummy[16] = {0};

  PetscFunctionBegin;
  H5TRY(fspace = H5Dget_space(dset), "cannot get dataspace of '%s'", path);
  H5TRY(dxpl = H5Pcreate(H5P_DATASET_XFER), "cannot create transfer property list for '%s'", path);
  H5TRY(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "cannot request collective transfer for '%s'", path);
  if (count > 0) {
    hsize_t start[2] = {(hsize_t)first, 0}, dims[2] = {(hsize_t)count, (hsize_t)ncols};
    H5TRY(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, dims, NULL), "cannot select rows of '%s'", path);
    H5TRY(mspace = H5Screate_simple(rank, dims, NULL), "cannot create memory space for '%s'", path);
  } else {
    const hsize_t one = 1;
    H5TRY(H5Sselect_none(fspace), "cannot select in '%s'", path);
    H5TRY(mspace = H5Screate_simple(1, &one, NULL), "cannot create memory space for '%s'", path);
    H5TRY(H5Sselect_none(mspace), "cannot select in memory space for '%s'", path);
  }
  H5TRY(H5Dwrite(dset, mtype, mspace, fspace, dxpl, count > 0 ? buf : (const void *)dummy), "cannot write dataset '%s' of '%s'", path, out->partial);
cleanup:
  pbng_h5_close(&mspace);
  pbng_h5_close(&dxpl);
  pbng_h5_close(&fspace);
  PetscFunctionReturn(ierr);
}

/* Collective: the sorted rows written in rounds of consecutive global rows, each rank's share of a round at most
 * OUTPUT_ROUND_BYTES, each round's rows exchanged into one block a rank (rows_to_blocks) and written. */
static PetscErrorCode write_in_blocks(pbng_output *out, const char *path, hid_t dset, hid_t mtype, int rank, int ncols, int64_t N, int64_t n,
                                      const int64_t *rows, const char *data, size_t rowbytes)
{
  const int64_t mine = (int64_t)(n * (sizeof(int64_t) + rowbytes) / OUTPUT_ROUND_BYTES) + 1;
  int64_t rounds, at = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(&mine, &rounds, 1, MPI_INT64_T, MPI_MAX, out->comm));
  for (int64_t k = 0; k < rounds; ++k) {
    const int64_t lo = N * k / rounds, hi = N * (k + 1) / rounds;
    int64_t end = at, first = 0, count = 0;
    char *block;
    while (end < n && rows[end] < hi) ++end; /* this rank's rows of the round */
    PetscCall(rows_to_blocks(out, path, lo, hi, end - at, rows + at, data + at * rowbytes, rowbytes, &block, &first, &count));
    PetscErrorCode ierr = write_block(out, path, dset, mtype, rank, ncols, first, count, block);
    PetscCall(PetscFree(block));
    PetscCall(ierr);
    at = end;
  }
  PetscFunctionReturn(0);
}

/* The core writer: creates dataset 'path' with N rows of ncols values and writes each rank's rows, every rank one
 * hyperslab: its own rows when they are one run on every rank, else (write_in_blocks) the blocks of rows an exchange
 * sends it. */
PetscErrorCode output_write_rows(pbng_output *out, const char *path, hid_t ftype, hid_t mtype, size_t elsize, int64_t N, int ncols,
                                 PetscBool one_d, int64_t n, const int64_t *rows, const void *data)
{
  PetscErrorCode ierr = 0;
  sorted_rows s = {0};
  hid_t dset = -1;
  const size_t rowbytes = elsize * (size_t)ncols;
  const int rank = (one_d && ncols == 1) ? 1 : 2;

  PetscFunctionBegin;
  PetscCheck(ncols >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "output: dataset '%s': %d columns", path,
             ncols);
  PetscCheck(n >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "output: dataset '%s': %" PRId64 " local rows",
             path, n);
  PetscCheck(n == 0 || (rows && data), PETSC_COMM_SELF, PETSC_ERR_ARG_NULL,
             "output: dataset '%s': rows or data is NULL", path);
  TRY(sort_rows(n, rows, data, rowbytes, &s));
  TRY(check_rows(out, path, N, n, s.rows));
  int one_run = n == 0 || s.rows[n - 1] - s.rows[0] == n - 1, every_one_run; /* sorted, no row twice: one run */
  if (MPI_Allreduce(&one_run, &every_one_run, 1, MPI_INT, MPI_LAND, out->comm) != MPI_SUCCESS) {
    ierr = PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_MPI, PETSC_ERROR_INITIAL,
                      "output: dataset '%s': MPI_Allreduce failed", path);
    goto cleanup;
  }
  TRY(output_create_dataset(out, path, ftype, N, ncols, one_d, &dset));
  if (N == 0) goto cleanup; /* an empty dataset has no storage to write (N is the same on all ranks) */
  if (every_one_run) TRY(write_block(out, path, dset, mtype, rank, ncols, n > 0 ? s.rows[0] : 0, n, s.data));
  else TRY(write_in_blocks(out, path, dset, mtype, rank, ncols, N, n, s.rows, s.data, rowbytes));
cleanup:
  pbng_h5_close(&dset);
  {
    PetscErrorCode ierr2 = sorted_rows_free(&s);
    if (!ierr) ierr = ierr2;
  }
  PetscFunctionReturn(ierr);
}
