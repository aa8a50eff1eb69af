#include "parallel/ordered_factor.h"
#include "core/sorted_ids.h"
#include <inttypes.h>
#include <stdlib.h>

typedef struct {
  int bs;
  PetscInt nmine;       /* this rank's unknowns */
  PetscInt *place;      /* [nmine]: each one's place in the input's numbering */
  IS all;               /* every unknown's PETSc index, in the input's numbering (on every rank) */
  Mat sub;              /* the whole matrix in that numbering (sequential, on every rank) */
  PetscObjectState nonzero_state; /* the pattern sub was made with */
  PetscObjectId made_from;        /* and the matrix (an id: a new matrix may take a destroyed one's address) */
  KSP inner;            /* preonly + Cholesky on sub */
  VecScatter gather;    /* a parallel vector -> whole, in the input's numbering */
  Vec whole_b, whole_x;
  pbng_work_meter *meter; /* the setups' and solves' time and communication, or NULL */
} ordered_factor;

/* all and place from every rank's ids (collective). */
static PetscErrorCode number_in_input_order(MPI_Comm comm, ordered_factor *f, int64_t n, const int64_t *ids, PetscInt first)
{
  PetscMPIInt size, rank;
  int *counts, *displs;
  int64_t *all_ids, total = 0, mine_first = 0;
  pbng_id_local *keys; /* each node's id and PETSc node index (unknowns bs local .. bs local + bs - 1) */
  PetscInt *idx;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscMalloc2(size, &counts, size + 1, &displs));
  int mine = (int)n;
  PetscCallMPI(MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, comm));
  displs[0] = 0;
  for (int r = 0; r < size; ++r) displs[r + 1] = displs[r] + counts[r];
  total = displs[size];
  PetscCallMPI(MPI_Exscan(&n, &mine_first, 1, MPI_INT64_T, MPI_SUM, comm));
  if (rank == 0) mine_first = 0;
  PetscCheck(mine_first == first, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "ordered factor: rank %d's nodes start at %" PetscInt_FMT ", not %" PRId64, rank,
             first, mine_first);
  PetscCall(PetscMalloc2(total + 1, &all_ids, total + 1, &keys));
  PetscCallMPI(MPI_Allgatherv(ids, mine, MPI_INT64_T, all_ids, counts, displs, MPI_INT64_T, comm));
  for (int64_t k = 0; k < total; ++k) keys[k].id = all_ids[k], keys[k].local = (int32_t)k; /* ranks' nodes in rank order: PETSc's numbering */
  qsort(keys, (size_t)total, sizeof(pbng_id_local), pbng_compare_id_local);
  const int bs = f->bs;
  PetscCall(PetscMalloc1(bs * total + 1, &idx));
  f->nmine = bs * (PetscInt)n;
  PetscCall(PetscMalloc1(f->nmine + 1, &f->place));
  for (int64_t k = 0; k < total; ++k) {
    for (int c = 0; c < bs; ++c) idx[bs * k + c] = bs * (PetscInt)keys[k].local + c;
    if ((PetscInt)keys[k].local >= first && (PetscInt)keys[k].local < first + n)
      for (int c = 0; c < bs; ++c) f->place[bs * ((PetscInt)keys[k].local - first) + c] = (PetscInt)(bs * k + c);
  }
  /* a rank without unknowns (a coarsest level on fewer ranks, docs/multilevel.md#levels-on-fewer-ranks) asks for nothing:
   * the matrix goes only to the ranks that hold the level, not to every rank */
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, n > 0 ? (PetscInt)(bs * total) : 0, idx, PETSC_OWN_POINTER, &f->all));
  PetscCall(PetscFree2(all_ids, keys));
  PetscCall(PetscFree2(counts, displs));
  PetscFunctionReturn(0);
}

/* The whole matrix in the input's numbering, and its factorisation (on every rank). */
static PetscErrorCode ordered_factor_setup(PC pc)
{
  ordered_factor *f;
  Mat A, *subs;
  PetscObjectState state;
  PetscBool set, spd;
  pbng_work_mark mark;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &f));
  if (f->meter) PetscCall(pbng_work_begin(f->meter, &mark));
  PetscCall(PCGetOperators(pc, NULL, &A));
  PetscObjectId id;
  PetscCall(MatGetNonzeroState(A, &state));
  PetscCall(PetscObjectGetId((PetscObject)A, &id));
  const PetscBool reuse = f->sub && f->made_from == id && f->nonzero_state == state;
  if (!reuse) PetscCall(MatDestroy(&f->sub));
  subs = &f->sub;
  PetscCall(MatCreateSubMatrices(A, 1, &f->all, &f->all, reuse ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, &subs));
  if (!reuse) {
    f->sub = subs[0];
    PetscCall(PetscFree(subs)); /* the array only */
  }
  f->made_from = id, f->nonzero_state = state;
  PetscCall(MatIsSPDKnown(A, &set, &spd));
  if (set) PetscCall(MatSetOption(f->sub, MAT_SPD, spd)); /* MUMPS's Cholesky without pivoting (pbng_level's matrices) */
  if (!f->gather) {
    Vec b;
    PetscCall(MatCreateVecs(A, NULL, &b));
    PetscCall(MatCreateVecs(f->sub, &f->whole_x, &f->whole_b));
    PetscCall(VecScatterCreate(b, f->all, f->whole_b, NULL, &f->gather));
    PetscCall(VecDestroy(&b));
  }
  if (f->nmine > 0) { /* the others have nothing to factor */
    PetscCall(KSPSetOperators(f->inner, f->sub, f->sub));
    PetscCall(KSPSetUp(f->inner));
  }
  if (f->meter) PetscCall(pbng_work_end(f->meter, &mark));
  PetscFunctionReturn(0);
}

static PetscErrorCode ordered_factor_apply(PC pc, Vec b, Vec x)
{
  ordered_factor *f;
  const PetscScalar *w;
  PetscScalar *xa;
  pbng_work_mark mark;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &f));
  if (f->meter) PetscCall(pbng_work_begin(f->meter, &mark));
  PetscCall(VecScatterBegin(f->gather, b, f->whole_b, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(f->gather, b, f->whole_b, INSERT_VALUES, SCATTER_FORWARD));
  if (f->nmine > 0) PetscCall(KSPSolve(f->inner, f->whole_b, f->whole_x));
  PetscCall(VecGetArrayRead(f->whole_x, &w));
  PetscCall(VecGetArray(x, &xa));
  for (PetscInt k = 0; k < f->nmine; ++k) xa[k] = w[f->place[k]];
  PetscCall(VecRestoreArray(x, &xa));
  PetscCall(VecRestoreArrayRead(f->whole_x, &w));
  if (f->meter) PetscCall(pbng_work_end(f->meter, &mark));
  PetscFunctionReturn(0);
}

static PetscErrorCode ordered_factor_destroy(PC pc)
{
  ordered_factor *f;

  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &f));
  PetscCall(PetscFree(f->place));
  PetscCall(ISDestroy(&f->all));
  PetscCall(MatDestroy(&f->sub));
  PetscCall(KSPDestroy(&f->inner));
  PetscCall(VecScatterDestroy(&f->gather));
  PetscCall(VecDestroy(&f->whole_b));
  PetscCall(VecDestroy(&f->whole_x));
  PetscCall(PetscFree(f));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_ordered_factor_set(PC pc, int bs, int64_t first, int64_t n, const int64_t *ids, pbng_work_meter *meter)
{
  ordered_factor *f;
  PC inner_pc;
  const char *prefix;
  PetscBool mumps;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&f));
  f->bs = bs, f->meter = meter;
  PetscCall(number_in_input_order(PetscObjectComm((PetscObject)pc), f, n, ids, (PetscInt)first));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &f->inner));
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(KSPSetOptionsPrefix(f->inner, prefix));
  PetscCall(KSPAppendOptionsPrefix(f->inner, "ordered_"));
  PetscCall(KSPSetType(f->inner, KSPPREONLY));
  PetscCall(KSPGetPC(f->inner, &inner_pc));
  PetscCall(PCSetType(inner_pc, PCCHOLESKY));
  PetscCall(PetscHasExternalPackage("mumps", &mumps));
  if (mumps) PetscCall(PCFactorSetMatSolverType(inner_pc, MATSOLVERMUMPS)); /* PETSc's own: 4.8 s against 0.28 s on 5K unknowns */
  else PetscCall(PCFactorSetMatOrderingType(inner_pc, MATORDERINGND));
  PetscCall(KSPSetFromOptions(f->inner));
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PCShellSetContext(pc, f));
  PetscCall(PCShellSetName(pc, "ordered Cholesky (the whole matrix on every rank, in the input's numbering)"));
  PetscCall(PCShellSetSetUp(pc, ordered_factor_setup));
  PetscCall(PCShellSetApply(pc, ordered_factor_apply));
  PetscCall(PCShellSetDestroy(pc, ordered_factor_destroy));
  PetscFunctionReturn(0);
}
