/* The result file's distributed row writes: each rank's rows sorted (copied only when not sorted
 * already), merged into runs of consecutive global indices and written collectively as hyperslab
 * unions in batches, or as point selections when the runs are short (output.c's notes). */
#include "io/output_private.h"
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

/* Number of runs of consecutive values in the sorted list. */
static int64_t count_runs(int64_t n, const int64_t *sorted)
{
  int64_t runs = n > 0;
  for (int64_t i = 1; i < n; ++i) runs += sorted[i] != sorted[i - 1] + 1;
  return runs;
}

/* Row selection plan of one rank: runs of consecutive rows become hyperslab blocks, at most
 * PBNG_OUTPUT_MAX_RUNS per collective write (the cost of a hyperslab union grows faster than linearly
 * with its blocks); rows in short runs (scattered ownership) are selected as points, at most
 * PBNG_OUTPUT_POINT_ROWS rows per write. */
typedef struct {
  PetscBool points;
  int64_t nbatch;
  hsize_t *coords; /* points mode: PBNG_OUTPUT_POINT_ROWS * ncols * rank */
} row_plan;

static PetscErrorCode plan_rows(int64_t n, const int64_t *sorted, int ncols, int rank, row_plan *plan)
{
  const int64_t runs = count_runs(n, sorted);

  PetscFunctionBegin;
  memset(plan, 0, sizeof(*plan));
  plan->points = runs > PBNG_OUTPUT_MAX_RUNS && n < PBNG_OUTPUT_MIN_RUN_LENGTH * runs;
  if (plan->points) {
    plan->nbatch = (n + PBNG_OUTPUT_POINT_ROWS - 1) / PBNG_OUTPUT_POINT_ROWS;
    PetscCall(PetscMalloc1((size_t)PBNG_OUTPUT_POINT_ROWS * (size_t)ncols * (size_t)rank, &plan->coords));
  } else plan->nbatch = (runs + PBNG_OUTPUT_MAX_RUNS - 1) / PBNG_OUTPUT_MAX_RUNS;
  PetscFunctionReturn(0);
}

/* Selects in fspace the next batch of rows from sorted[*pos ..]; advances *pos and returns the number
 * of rows selected. Selects none when *pos == n. */
static PetscErrorCode select_batch(hid_t fspace, const char *path, int rank, int ncols, int64_t n,
                                   const int64_t *sorted, const row_plan *plan, int64_t *pos, int64_t *nrows)
{
  PetscErrorCode ierr = 0;
  int64_t i = *pos;

  PetscFunctionBegin;
  *nrows = 0;
  if (i >= n) {
    H5TRY(H5Sselect_none(fspace), "cannot select in '%s'", path);
    PetscFunctionReturn(0);
  }
  if (plan->points) {
    const int64_t end = PetscMin(n, i + PBNG_OUTPUT_POINT_ROWS);
    size_t k = 0;
    for (int64_t r = i; r < end; ++r)
      for (int c = 0; c < ncols; ++c) {
        plan->coords[k++] = (hsize_t)sorted[r];
        if (rank == 2) plan->coords[k++] = (hsize_t)c;
      }
    H5TRY(H5Sselect_elements(fspace, H5S_SELECT_SET, (size_t)(end - i) * (size_t)ncols, plan->coords),
          "cannot select rows of '%s'", path);
    *nrows = end - i;
    *pos = end;
    PetscFunctionReturn(0);
  }
  for (int r = 0; r < PBNG_OUTPUT_MAX_RUNS && i < n; ++r) {
    int64_t j = i + 1;
    while (j < n && sorted[j] == sorted[j - 1] + 1) ++j;
    hsize_t start[2] = {(hsize_t)sorted[i], 0}, count[2] = {(hsize_t)(j - i), (hsize_t)ncols};
    H5TRY(H5Sselect_hyperslab(fspace, r == 0 ? H5S_SELECT_SET : H5S_SELECT_OR, start, NULL, count, NULL),
          "cannot select rows of '%s'", path);
    *nrows += j - i;
    i = j;
  }
  *pos = i;
cleanup:
  PetscFunctionReturn(ierr);
}

/* The core writer: creates dataset 'path' with N rows of ncols values and writes each rank's rows. */
PetscErrorCode output_write_rows(pbng_output *out, const char *path, hid_t ftype, hid_t mtype, size_t elsize, int64_t N, int ncols,
                                 PetscBool one_d, int64_t n, const int64_t *rows, const void *data)
{
  PetscErrorCode ierr = 0;
  sorted_rows s = {0};
  row_plan plan = {0};
  hid_t dset = -1, fspace = -1, mspace = -1, dxpl = -1;
  const size_t rowbytes = elsize * (size_t)ncols;
  const int rank = (one_d && ncols == 1) ? 1 : 2;
  int64_t nbatch_local, nbatch, pos = 0, done = 0;
  const char dummy[16] = {0};

  PetscFunctionBegin;
  PetscCheck(ncols >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "output: dataset '%s': %d columns", path,
             ncols);
  PetscCheck(n >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "output: dataset '%s': %" PRId64 " local rows",
             path, n);
  PetscCheck(n == 0 || (rows && data), PETSC_COMM_SELF, PETSC_ERR_ARG_NULL,
             "output: dataset '%s': rows or data is NULL", path);
  TRY(sort_rows(n, rows, data, rowbytes, &s));
  TRY(check_rows(out, path, N, n, s.rows));
  TRY(plan_rows(n, s.rows, ncols, rank, &plan));
  nbatch_local = plan.nbatch;
  if (MPI_Allreduce(&nbatch_local, &nbatch, 1, MPI_INT64_T, MPI_MAX, out->comm) != MPI_SUCCESS) {
    ierr = PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_MPI, PETSC_ERROR_INITIAL,
                      "output: dataset '%s': MPI_Allreduce failed", path);
    goto cleanup;
  }
  /* nbatch == 0 only when N == 0 (known to all ranks): an empty dataset has no storage to write */

  TRY(output_create_dataset(out, path, ftype, N, ncols, one_d, &dset));
  H5TRY(fspace = H5Dget_space(dset), "cannot get dataspace of '%s'", path);
  H5TRY(dxpl = H5Pcreate(H5P_DATASET_XFER), "cannot create transfer property list for '%s'", path);
  H5TRY(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "cannot request collective transfer for '%s'", path);
  for (int64_t b = 0; b < nbatch; ++b) {
    int64_t nrows;
    const void *buf;
    TRY(select_batch(fspace, path, rank, ncols, n, s.rows, &plan, &pos, &nrows));
    if (nrows > 0) {
      hsize_t mdims[2] = {(hsize_t)nrows, (hsize_t)ncols};
      H5TRY(mspace = H5Screate_simple(rank, mdims, NULL), "cannot create memory space for '%s'", path);
      buf = s.data + (size_t)done * rowbytes;
    } else {
      hsize_t one = 1;
      H5TRY(mspace = H5Screate_simple(1, &one, NULL), "cannot create memory space for '%s'", path);
      H5TRY(H5Sselect_none(mspace), "cannot select in memory space for '%s'", path);
      buf = dummy;
    }
    H5TRY(H5Dwrite(dset, mtype, mspace, fspace, dxpl, buf), "cannot write dataset '%s' of '%s'", path,
            out->partial);
    pbng_h5_close(&mspace);
    done += nrows;
  }
cleanup:
  pbng_h5_close(&mspace);
  pbng_h5_close(&dxpl);
  pbng_h5_close(&fspace);
  pbng_h5_close(&dset);
  (void)PetscFree(plan.coords);
  {
    PetscErrorCode ierr2 = sorted_rows_free(&s);
    if (!ierr) ierr = ierr2;
  }
  PetscFunctionReturn(ierr);
}
