#include "parallel/ordered_product.h"
#include <petscsf.h>
#include <string.h>
#include "parallel/halo.h"

/* One product's rows: each local row's terms in increasing global id of their column's node, the
 * columns gathered from their owners into xg (bs values per gathered column). */
typedef struct {
  PetscInt m;        /* local rows */
  PetscInt *start;   /* [m + 1] */
  PetscInt *slot;    /* [nnz]: the column's place in xg (bs values from bs * slot) */
  PetscScalar *val;  /* [nnz] */
  VecScatter gather; /* a column-layout vector of bs values per node -> xg */
  Vec xg;
} ordered_rows;

typedef struct {
  int bs;
  ordered_rows forward, transpose; /* A's rows; A^T's rows */
  pbng_work_meter *meter;          /* or NULL */
} ordered_product;

/* A row's terms sorted by their columns' ids (insertion sort: rows are short). */
static void sort_row(PetscInt n, PetscInt *slot, PetscScalar *val, const int64_t *id_of_slot)
{
  for (PetscInt k = 1; k < n; ++k) {
    const PetscInt s = slot[k];
    const PetscScalar v = val[k];
    PetscInt j = k;
    for (; j > 0 && id_of_slot[slot[j - 1]] > id_of_slot[s]; --j) slot[j] = slot[j - 1], val[j] = val[j - 1];
    slot[j] = s, val[j] = v;
  }
}

/* A matrix's local rows: their entries' global columns and values (CSR; rows_create takes them over). */
typedef struct {
  PetscInt m;
  PetscInt *start; /* [m + 1] */
  PetscInt *col;   /* [nnz] */
  PetscScalar *val;
} local_rows;

/* A's local rows. */
static PetscErrorCode local_rows_of(Mat A, local_rows *a)
{
  PetscInt rs, re, nnz = 0;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  a->m = re - rs;
  PetscCall(PetscMalloc1(a->m + 1, &a->start));
  a->start[0] = 0;
  for (PetscInt r = rs; r < re; ++r) {
    PetscInt nc;
    PetscCall(MatGetRow(A, r, &nc, NULL, NULL));
    a->start[r - rs + 1] = (nnz += nc);
    PetscCall(MatRestoreRow(A, r, &nc, NULL, NULL));
  }
  PetscCall(PetscMalloc1(nnz + 1, &a->col));
  PetscCall(PetscMalloc1(nnz + 1, &a->val));
  for (PetscInt r = rs; r < re; ++r) {
    PetscInt nc;
    const PetscInt *c;
    const PetscScalar *v;
    PetscCall(MatGetRow(A, r, &nc, &c, &v));
    if (nc > 0) { /* an empty row may come with no arrays */
      memcpy(&a->col[a->start[r - rs]], c, sizeof(PetscInt) * nc);
      memcpy(&a->val[a->start[r - rs]], v, sizeof(PetscScalar) * nc);
    }
    PetscCall(MatRestoreRow(A, r, &nc, &c, &v));
  }
  PetscFunctionReturn(0);
}

/* The local rows of A^T (A's local columns) from A's local rows a: each entry sent to its column's owner (one exchange,
 * the entries grouped by owner here: 16 bytes an entry, sent, received, once each; PETSc's MatTranspose of a parallel
 * AIJ matrix took ten times as long on 2 ranks as on 1). Within a row the entries come in any order: rows_create orders
 * them. */
static PetscErrorCode transposed_rows(Mat A, const local_rows *a, local_rows *t)
{
  typedef struct {
    PetscInt row, col;
    PetscScalar val;
  } entry;
  PetscLayout rmap, cmap;
  PetscInt rs, cs, ce, nnz = a->start[a->m];
  PetscMPIInt size, *owner;
  entry *send, *recv;
  int *count, *rcount, *rdispl;
  int64_t *at;

  PetscFunctionBeginUser;
  PetscCall(MatGetLayouts(A, &rmap, &cmap));
  PetscCall(PetscLayoutGetRange(rmap, &rs, NULL));
  PetscCall(PetscLayoutGetRange(cmap, &cs, &ce));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(PetscCalloc2(size, &count, size + 1, &at));
  PetscCall(PetscMalloc1(nnz + 1, &owner));
  for (PetscInt k = 0; k < nnz; ++k) {
    PetscCall(PetscLayoutFindOwner(cmap, a->col[k], &owner[k]));
    ++count[owner[k]];
  }
  for (int r = 0; r < size; ++r) at[r + 1] = at[r] + count[r];
  PetscCall(PetscMalloc1(nnz + 1, &send));
  for (PetscInt r = 0; r < a->m; ++r)
    for (PetscInt k = a->start[r]; k < a->start[r + 1]; ++k) send[at[owner[k]]++] = (entry){.row = rs + r, .col = a->col[k], .val = a->val[k]};
  PetscCall(PetscFree(owner));
  PetscCall(pbng_exchange_items(PetscObjectComm((PetscObject)A), sizeof(entry), count, send, &rcount, &rdispl, (void **)&recv));
  PetscCall(PetscFree(send));
  PetscCall(PetscFree2(count, at));
  const int64_t nrecv = rdispl[size];
  PetscCall(PetscFree(rcount));
  PetscCall(PetscFree(rdispl));
  t->m = ce - cs;
  PetscCall(PetscCalloc1(t->m + 1, &t->start));
  PetscCall(PetscMalloc1(nrecv + 1, &t->col));
  PetscCall(PetscMalloc1(nrecv + 1, &t->val));
  for (int64_t k = 0; k < nrecv; ++k) t->start[recv[k].col - cs + 1]++;
  for (PetscInt r = 0; r < t->m; ++r) t->start[r + 1] += t->start[r];
  for (int64_t k = 0; k < nrecv; ++k) { /* by row, each row's in the order received */
    const PetscInt row = t->start[recv[k].col - cs]++;
    t->col[row] = recv[k].row, t->val[row] = recv[k].val;
  }
  for (PetscInt r = t->m; r > 0; --r) t->start[r] = t->start[r - 1];
  t->start[0] = 0;
  PetscCall(PetscFree(recv));
  PetscFunctionReturn(0);
}

/* The ids of the gathered columns: col_ids (this rank's n columns) of every needed global column. */
static PetscErrorCode gathered_ids(MPI_Comm comm, PetscInt n, const int64_t *col_ids, PetscInt nneeded, const PetscInt *needed, int64_t *ids)
{
  Vec mine, theirs;
  VecScatter sc;
  IS is;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecCreateMPI(comm, n, PETSC_DETERMINE, &mine));
  PetscCall(VecGetArray(mine, &a));
  for (PetscInt k = 0; k < n; ++k) a[k] = (PetscScalar)col_ids[k]; /* exact below 2^53 */
  PetscCall(VecRestoreArray(mine, &a));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, nneeded, &theirs));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nneeded, needed, PETSC_USE_POINTER, &is));
  PetscCall(VecScatterCreate(mine, is, theirs, NULL, &sc));
  PetscCall(VecScatterBegin(sc, mine, theirs, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, mine, theirs, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetArray(theirs, &a));
  for (PetscInt k = 0; k < nneeded; ++k) ids[k] = (int64_t)a[k];
  PetscCall(VecRestoreArray(theirs, &a));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(ISDestroy(&is));
  PetscCall(VecDestroy(&theirs));
  PetscCall(VecDestroy(&mine));
  PetscFunctionReturn(0);
}

/* The scatter of bs values per needed column from a vector of the columns' layout (n local columns, times bs) into xg. */
static PetscErrorCode create_gather(MPI_Comm comm, PetscInt n, int bs, PetscInt nneeded, const PetscInt *needed, ordered_rows *t)
{
  PetscInt *idx;
  Vec layout;
  IS is;

  PetscFunctionBeginUser;
  PetscCall(VecCreateMPI(comm, bs * n, PETSC_DETERMINE, &layout));
  PetscCall(PetscMalloc1(bs * nneeded + 1, &idx));
  for (PetscInt k = 0; k < nneeded; ++k)
    for (int c = 0; c < bs; ++c) idx[bs * k + c] = bs * needed[k] + c;
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, bs * nneeded, idx, PETSC_OWN_POINTER, &is));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, bs * nneeded, &t->xg));
  PetscCall(VecScatterCreate(layout, is, t->xg, NULL, &t->gather));
  PetscCall(ISDestroy(&is));
  PetscCall(VecDestroy(&layout));
  PetscFunctionReturn(0);
}

/* t from the local rows a (taken over), of columns in a layout of n local columns named by col_ids (collective). */
static PetscErrorCode rows_create(MPI_Comm comm, local_rows *a, PetscInt n, int bs, const int64_t *col_ids, ordered_rows *t)
{
  const PetscInt nnz = a->start[a->m];
  PetscInt nneeded, *needed;
  int64_t *ids;

  PetscFunctionBeginUser;
  t->m = a->m, t->start = a->start, t->val = a->val;
  PetscCall(PetscMalloc1(nnz + 1, &t->slot));
  PetscCall(PetscMalloc1(nnz + 1, &needed));
  if (nnz > 0) memcpy(needed, a->col, sizeof(PetscInt) * nnz);
  nneeded = nnz;
  PetscCall(PetscSortRemoveDupsInt(&nneeded, needed));
  for (PetscInt k = 0; k < nnz; ++k) PetscCall(PetscFindInt(a->col[k], nneeded, needed, &t->slot[k]));
  PetscCall(PetscFree(a->col));
  PetscCall(PetscMalloc1(nneeded + 1, &ids));
  PetscCall(gathered_ids(comm, n, col_ids, nneeded, needed, ids));
  for (PetscInt r = 0; r < t->m; ++r) sort_row(t->start[r + 1] - t->start[r], &t->slot[t->start[r]], &t->val[t->start[r]], ids);
  PetscCall(create_gather(comm, n, bs, nneeded, needed, t));
  PetscCall(PetscFree(ids));
  PetscCall(PetscFree(needed));
  PetscFunctionReturn(0);
}

static PetscErrorCode rows_destroy(ordered_rows *t)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(t->start));
  PetscCall(PetscFree(t->slot));
  PetscCall(PetscFree(t->val));
  PetscCall(VecScatterDestroy(&t->gather));
  PetscCall(VecDestroy(&t->xg));
  PetscFunctionReturn(0);
}

/* y = w + (rows) x, or y = (rows) x when w is NULL; each entry's terms in the rows' order. */
static PetscErrorCode rows_apply(ordered_rows *t, int bs, Vec x, Vec w, Vec y)
{
  const PetscScalar *xg, *wa = NULL;
  PetscScalar *ya;

  PetscFunctionBeginUser;
  PetscCall(VecScatterBegin(t->gather, x, t->xg, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(t->gather, x, t->xg, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetArrayRead(t->xg, &xg));
  if (w && w != y) PetscCall(VecGetArrayRead(w, &wa));
  PetscCall(VecGetArray(y, &ya));
  if (w == y) wa = ya;
#pragma omp parallel for schedule(static)
  for (PetscInt r = 0; r < t->m; ++r)
    for (int c = 0; c < bs; ++c) {
      PetscScalar s = 0.0;
      for (PetscInt k = t->start[r]; k < t->start[r + 1]; ++k) s += t->val[k] * xg[bs * t->slot[k] + c];
      ya[bs * r + c] = wa ? wa[bs * r + c] + s : s;
    }
  PetscCall(VecRestoreArray(y, &ya));
  if (w && w != y) PetscCall(VecRestoreArrayRead(w, &wa));
  PetscCall(VecRestoreArrayRead(t->xg, &xg));
  PetscFunctionReturn(0);
}

/* y = w + (A or A^T) x, w NULL: none. */
static PetscErrorCode product_apply(Mat S, int transpose, Vec x, Vec w, Vec y)
{
  ordered_product *p;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(S, &p));
  pbng_work_mark mark;
  if (p->meter) PetscCall(pbng_work_begin(p->meter, &mark));
  PetscCall(rows_apply(transpose ? &p->transpose : &p->forward, p->bs, x, w, y));
  if (p->meter) PetscCall(pbng_work_end(p->meter, &mark));
  PetscFunctionReturn(0);
}

static PetscErrorCode product_mult(Mat S, Vec x, Vec y) { return product_apply(S, 0, x, NULL, y); }
static PetscErrorCode product_mult_add(Mat S, Vec x, Vec w, Vec y) { return product_apply(S, 0, x, w, y); }
static PetscErrorCode product_mult_transpose(Mat S, Vec x, Vec y) { return product_apply(S, 1, x, NULL, y); }
static PetscErrorCode product_mult_transpose_add(Mat S, Vec x, Vec w, Vec y) { return product_apply(S, 1, x, w, y); }

static PetscErrorCode product_destroy(Mat S)
{
  ordered_product *p;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(S, &p));
  PetscCall(rows_destroy(&p->forward));
  PetscCall(rows_destroy(&p->transpose));
  PetscCall(PetscFree(p));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_ordered_product_create(Mat A, int bs, const int64_t *row_ids, const int64_t *col_ids, Mat *shell)
{
  ordered_product *p;
  PetscInt m, n;
  local_rows a, at;
  MPI_Comm comm = PetscObjectComm((PetscObject)A);

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&p));
  p->bs = bs;
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(local_rows_of(A, &a));
  PetscCall(transposed_rows(A, &a, &at));
  PetscCall(rows_create(comm, &a, n, bs, col_ids, &p->forward));
  PetscCall(rows_create(comm, &at, m, bs, row_ids, &p->transpose));
  PetscCall(MatCreateShell(PetscObjectComm((PetscObject)A), bs * m, bs * n, PETSC_DETERMINE, PETSC_DETERMINE, p, shell));
  PetscCall(MatShellSetOperation(*shell, MATOP_MULT, (void (*)(void))product_mult));
  PetscCall(MatShellSetOperation(*shell, MATOP_MULT_ADD, (void (*)(void))product_mult_add));
  PetscCall(MatShellSetOperation(*shell, MATOP_MULT_TRANSPOSE, (void (*)(void))product_mult_transpose));
  PetscCall(MatShellSetOperation(*shell, MATOP_MULT_TRANSPOSE_ADD, (void (*)(void))product_mult_transpose_add));
  PetscCall(MatShellSetOperation(*shell, MATOP_DESTROY, (void (*)(void))product_destroy));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_ordered_product_set_meter(Mat shell, pbng_work_meter *meter)
{
  ordered_product *p;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(shell, &p));
  p->meter = meter;
  PetscFunctionReturn(0);
}
