#include "methods/pbng/level.h"
#include <math.h>
#include <petscdmshell.h>
#include <string.h>
#include "parallel/reduce.h"

PetscErrorCode pbng_level_create(pbng_problem *pb, const pbng_sweep_options *opt, int index, pbng_level *lev)
{
  char name[64];

  PetscFunctionBeginUser;
  memset(lev, 0, sizeof(*lev));
  PetscCheck(pb->halo, pb->dm->comm, PETSC_ERR_ARG_WRONG, "a PBNG level needs the problem's halo");
  lev->pb = pb;
  lev->index = index;
  PetscCall(pbng_dof_map_create(pb->dm, pb->halo, &lev->map));
  if (pb->contacts) { /* room for the contact ghosts' unknowns (pbng_level_refresh_contacts) */
    PetscCall(PetscRealloc(sizeof(int64_t) * (size_t)(pb->dm->nlocal + pb->contacts->ghost_capacity + 1), &lev->map.node_dof));
    lev->contact_version = -1;
  }
  PetscCall(pbng_sweeper_create(pb, opt, &lev->sweeper));
  lev->stage = -1;
  lev->work.event = -1;
  if (index >= 0) {
    snprintf(name, sizeof(name), "PBNG level %d", index);
    PetscCall(PetscLogStageRegister(name, &lev->stage));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_destroy(pbng_level *lev)
{
  PetscFunctionBeginUser;
  PetscCheck(!lev->home, lev->pb->dm->comm, PETSC_ERR_ORDER, "destroy the level's home vector before the level");
  PetscCall(PetscFree(lev->home_save));
  PetscCall(MatDestroy(&lev->K));
  PetscCall(pbng_sweeper_destroy(&lev->sweeper));
  PetscCall(pbng_dof_map_destroy(&lev->map));
  memset(lev, 0, sizeof(*lev));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_create_vec(const pbng_level *lev, Vec *v)
{
  PetscFunctionBeginUser;
  PetscCall(VecCreate(lev->pb->dm->comm, v));
  PetscCall(VecSetSizes(*v, 3 * (PetscInt)lev->pb->dm->nfree, 3 * (PetscInt)lev->map.nglobal));
  PetscCall(VecSetBlockSize(*v, 3));
  PetscCall(VecSetType(*v, VECSTANDARD));
  PetscFunctionReturn(0);
}

/* The owned free nodes' positions (they come first) from `from` to `to`; none on a rank without a part of the level
 * (docs/multilevel.md#levels-on-fewer-ranks), whose vectors' arrays may be NULL. */
static void copy_free_positions(double *to, const double *from, const pbng_level *lev)
{
  if (lev->pb->dm->nfree > 0) memcpy(to, from, sizeof(double) * 3 * (size_t)lev->pb->dm->nfree);
}

/* Destroying home forgets it (a PETSc destroy hook: the level must not displace a vector that is gone).
 * Values moved aside into home_save come back; a scratch vector may be gone already (an error path:
 * the positions then hold the last trial point). */
static PetscErrorCode forget_home(void *ctx)
{
  pbng_level *lev = ctx;

  PetscFunctionBeginUser;
  if (lev->home_aside && lev->home_aside == lev->home_save) copy_free_positions(lev->pb->x, lev->home_save, lev);
  lev->home = NULL, lev->home_aside = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_create_home_vec(pbng_level *lev, Vec *v)
{
  const pbng_problem *pb = lev->pb;
  PetscMPIInt size;
  PetscContainer hook;

  PetscFunctionBeginUser;
  PetscCheck(!lev->home, pb->dm->comm, PETSC_ERR_ARG_WRONGSTATE, "the level has a home vector already");
  PetscCallMPI(MPI_Comm_size(pb->dm->comm, &size));
  if (size == 1) PetscCall(VecCreateSeqWithArray(pb->dm->comm, 3, 3 * (PetscInt)pb->dm->nfree, pb->x, v));
  else PetscCall(VecCreateMPIWithArray(pb->dm->comm, 3, 3 * (PetscInt)pb->dm->nfree, 3 * (PetscInt)lev->map.nglobal, pb->x, v));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &hook));
  PetscCall(PetscContainerSetPointer(hook, lev));
  PetscCall(PetscContainerSetUserDestroy(hook, forget_home));
  PetscCall(PetscObjectCompose((PetscObject)*v, "pbng_level_home", (PetscObject)hook));
  PetscCall(PetscContainerDestroy(&hook));
  lev->home = *v;
  PetscFunctionReturn(0);
}

/* home's values go to `to` (home_save when NULL) and home's storage with them. */
static PetscErrorCode move_home_aside(pbng_level *lev, double *to)
{
  const size_t n = 3 * (size_t)lev->pb->dm->nfree;

  PetscFunctionBeginUser;
  if (!lev->home || lev->home_aside) PetscFunctionReturn(0);
  if (!to) {
    if (!lev->home_save) PetscCall(PetscMalloc1(n + 1, &lev->home_save));
    to = lev->home_save;
  }
  copy_free_positions(to, lev->pb->x, lev);
  PetscCall(VecPlaceArray(lev->home, to));
  lev->home_aside = to;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_displace_home(pbng_level *lev, Vec scratch)
{
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCheck(scratch != lev->home, lev->pb->dm->comm, PETSC_ERR_ARG_IDN, "home cannot be its own scratch");
  PetscCall(VecGetArray(scratch, &a)); /* the storage stays scratch's; home borrows it until loaded next */
  PetscCall(move_home_aside(lev, a));
  PetscCall(VecRestoreArray(scratch, &a));
  PetscFunctionReturn(0);
}

/* home's values back into the positions and its storage with them. */
static PetscErrorCode bring_home_back(pbng_level *lev)
{
  PetscFunctionBeginUser;
  if (!lev->home_aside) PetscFunctionReturn(0);
  copy_free_positions(lev->pb->x, lev->home_aside, lev);
  PetscCall(VecResetArray(lev->home));
  lev->home_aside = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_load(pbng_level *lev, Vec X)
{
  const PetscScalar *a;

  PetscFunctionBeginUser;
  if (X == lev->home) PetscCall(bring_home_back(lev)); /* home's storage is the positions */
  else {
    PetscCall(move_home_aside(lev, NULL));
    PetscCall(VecGetArrayRead(X, &a));
    copy_free_positions(lev->pb->x, a, lev);
    PetscCall(VecRestoreArrayRead(X, &a));
  }
  PetscCall(pbng_problem_update_ghosts(lev->pb));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_store(const pbng_level *lev, Vec X)
{
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecGetArray(X, &a));
  if (a != lev->pb->x) copy_free_positions(a, lev->pb->x, lev);
  PetscCall(VecRestoreArray(X, &a));
  PetscFunctionReturn(0);
}

/* The problem's positions <- X + alpha D (owned free nodes; ghosts exchanged): a point along a direction
 * without a trial vector. */
static PetscErrorCode load_along(pbng_level *lev, Vec X, PetscReal alpha, Vec D)
{
  const PetscScalar *x, *d;
  double *p = lev->pb->x;
  const int64_t n = 3 * (int64_t)lev->pb->dm->nfree;

  PetscFunctionBeginUser;
  PetscCall(move_home_aside(lev, NULL)); /* home's values are about to be overwritten (nothing to do if displaced) */
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArrayRead(D, &d));
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < n; ++k) p[k] = x[k] + alpha * d[k];
  PetscCall(VecRestoreArrayRead(D, &d));
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(pbng_problem_update_ghosts(lev->pb));
  PetscFunctionReturn(0);
}

/* Every callback runs inside the level's log stage and adds its wall time and its communication to the level's. */
typedef pbng_work_mark level_mark;

static PetscErrorCode enter(pbng_level *lev, level_mark *m)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_work_begin(&lev->work, m));
  if (lev->stage >= 0) PetscCall(PetscLogStagePush(lev->stage));
  PetscFunctionReturn(0);
}

static PetscErrorCode leave(pbng_level *lev, const level_mark *m)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_work_end(&lev->work, m));
  if (lev->stage >= 0) PetscCall(PetscLogStagePop());
  PetscFunctionReturn(0);
}

/* F(x) = -(f_int + f_ext [- inertia]), the gradient of the energy. */
static PetscErrorCode level_function(SNES snes, Vec X, Vec F, void *ctx)
{
  pbng_level *lev = ctx;
  const pbng_problem *pb = lev->pb;
  PetscScalar *r;
  level_mark mark;

  PetscFunctionBeginUser;
  (void)snes;
  PetscCall(enter(lev, &mark));
  PetscCall(pbng_level_load(lev, X));
  PetscCall(pbng_problem_ring_forces(pb));
  PetscCall(VecGetArray(F, &r));
#pragma omp parallel for schedule(static)
  for (int32_t i = 0; i < pb->dm->nfree; ++i) {
    double f[3];
    pbng_node_force(pb, i, pb->x, f, NULL, 0);
    pbng_problem_add_ring_force(pb, i, f);
    for (int d = 0; d < 3; ++d) r[3 * i + d] = -f[d];
  }
  PetscCall(VecRestoreArray(F, &r));
  lev->functions++;
  PetscCall(leave(lev, &mark));
  PetscFunctionReturn(0);
}

/* PBNG sweeps on F(x) = B: the SNESNGS's sweep count (1 when called by another solver type). */
static PetscErrorCode level_ngs(SNES snes, Vec X, Vec B, void *ctx)
{
  pbng_level *lev = ctx;
  PetscInt sweeps = 1;
  PetscBool is_ngs;
  const PetscScalar *b = NULL;
  level_mark mark;

  PetscFunctionBeginUser;
  PetscCall(enter(lev, &mark));
  PetscCall(PetscObjectTypeCompare((PetscObject)snes, SNESNGS, &is_ngs));
  if (is_ngs) PetscCall(SNESNGSGetSweeps(snes, &sweeps));
  PetscCall(pbng_level_load(lev, X));
  if (B) PetscCall(VecGetArrayRead(B, &b));
  pbng_sweeper_restart(&lev->sweeper);
  for (PetscInt k = 0; k < sweeps; ++k) PetscCall(pbng_sweeper_iterate(&lev->sweeper, (int)k, b));
  if (B) PetscCall(VecRestoreArrayRead(B, &b));
  PetscCall(pbng_level_store(lev, X));
  lev->sweeps += sweeps;
  PetscCall(leave(lev, &mark));
  PetscFunctionReturn(0);
}

/* E(x) - b.x at the problem's positions, b the SNES's right-hand side (PETSc 3.18 leaves b out of
 * the objective). */
static PetscErrorCode objective_here(pbng_level *lev, SNES snes, PetscReal *obj)
{
  Vec B;
  const PetscScalar *b = NULL;

  PetscFunctionBeginUser;
  PetscCall(SNESGetRhs(snes, &B));
  if (B) PetscCall(VecGetArrayRead(B, &b));
  PetscCall(pbng_problem_energy(lev->pb, b, obj));
  if (B) PetscCall(VecRestoreArrayRead(B, &b));
  lev->objectives++;
  PetscFunctionReturn(0);
}

static PetscErrorCode level_objective(SNES snes, Vec X, PetscReal *obj, void *ctx)
{
  pbng_level *lev = ctx;
  level_mark mark;

  PetscFunctionBeginUser;
  PetscCall(enter(lev, &mark));
  PetscCall(pbng_level_load(lev, X));
  PetscCall(objective_here(lev, snes, obj));
  PetscCall(leave(lev, &mark));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_objective_along(pbng_level *lev, SNES snes, Vec X, PetscReal alpha, Vec D, PetscReal *obj)
{
  level_mark mark;

  PetscFunctionBeginUser;
  PetscCall(enter(lev, &mark));
  PetscCall(load_along(lev, X, alpha, D));
  PetscCall(objective_here(lev, snes, obj));
  PetscCall(leave(lev, &mark));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_objective_and_slope(pbng_level *lev, SNES snes, Vec X, Vec F, Vec D, PetscReal *obj, PetscReal *slope)
{
  const int32_t n = 3 * lev->pb->dm->nfree;
  const PetscScalar *b = NULL, *f, *d;
  pbng_exact_sum sum[2];
  double value[2];
  level_mark mark;
  Vec B;

  PetscFunctionBeginUser;
  PetscCall(enter(lev, &mark));
  PetscCall(pbng_level_load(lev, X));
  PetscCall(SNESGetRhs(snes, &B));
  if (B) PetscCall(VecGetArrayRead(B, &b));
  pbng_problem_energy_local(lev->pb, b, &sum[0]); /* E(x) - b.x: objective_here's, not reduced */
  if (B) PetscCall(VecRestoreArrayRead(B, &b));
  PetscCall(VecGetArrayRead(F, &f));
  PetscCall(VecGetArrayRead(D, &d));
  pbng_exact_sum_zero(&sum[1]);
  for (int32_t k = 0; k < n; k += 3) pbng_exact_sum_add(&sum[1], f[k] * d[k] + f[k + 1] * d[k + 1] + f[k + 2] * d[k + 2]);
  PetscCall(VecRestoreArrayRead(D, &d));
  PetscCall(VecRestoreArrayRead(F, &f));
  PetscCall(pbng_exact_sums_allreduce(lev->pb->dm->comm, 2, sum, value));
  *obj = value[0], *slope = value[1];
  lev->objectives++;
  PetscCall(leave(lev, &mark));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_slope_along(pbng_level *lev, SNES snes, Vec X, PetscReal alpha, Vec D, PetscReal *slope)
{
  const pbng_problem *pb = lev->pb;
  const int32_t nfree = pb->dm->nfree;
  Vec B;
  const PetscScalar *b = NULL, *d;
  pbng_exact_sum sum;
  level_mark mark;

  PetscFunctionBeginUser;
  PetscCall(enter(lev, &mark));
  PetscCall(load_along(lev, X, alpha, D));
  PetscCall(pbng_problem_ring_forces(pb));
  PetscCall(SNESGetRhs(snes, &B));
  if (B) PetscCall(VecGetArrayRead(B, &b));
  PetscCall(VecGetArrayRead(D, &d));
  pbng_exact_sum_zero(&sum);
#pragma omp parallel
  {
    pbng_exact_sum mine;
    pbng_exact_sum_zero(&mine);
#pragma omp for schedule(static) nowait
    for (int32_t i = 0; i < nfree; ++i) { /* (F_i - b_i).d_i with F_i = -f_i */
      double f[3], term = 0.0;
      pbng_node_force(pb, i, pb->x, f, NULL, 0);
      pbng_problem_add_ring_force(pb, i, f);
      for (int k = 0; k < 3; ++k) term -= (f[k] + (b ? b[3 * i + k] : 0.0)) * d[3 * i + k];
      pbng_exact_sum_add(&mine, term);
    }
#pragma omp critical(pbng_slope_sum)
    pbng_exact_sum_merge(&sum, &mine);
  }
  PetscCall(VecRestoreArrayRead(D, &d));
  if (B) PetscCall(VecRestoreArrayRead(B, &b));
  PetscCall(pbng_exact_sum_allreduce(pb->dm->comm, &sum, slope)); /* NaN at a point where a force is not finite */
  lev->functions++;
  PetscCall(leave(lev, &mark));
  PetscFunctionReturn(0);
}

static PetscErrorCode level_jacobian(SNES snes, Vec X, Mat J, Mat P, void *ctx)
{
  pbng_level *lev = ctx;
  level_mark mark;

  PetscFunctionBeginUser;
  (void)snes, (void)J;
  if (lev->K_keep && lev->K_current) PetscFunctionReturn(0); /* P's state unchanged: the PC keeps its factorisation */
  PetscCall(enter(lev, &mark));
  PetscCall(pbng_level_load(lev, X));
  PetscCall(pbng_stiffness_assemble(lev->pb, &lev->map, lev->hessian, P));
  lev->K_current = 1;
  lev->jacobians++;
  PetscCall(leave(lev, &mark));
  PetscFunctionReturn(0);
}

/* The DMShell's vectors, made on demand (the DM keeps no template vector of its own). */
static PetscErrorCode create_global_vector(DM dm, Vec *v)
{
  pbng_level *lev;

  PetscFunctionBeginUser;
  PetscCall(DMShellGetContext(dm, &lev));
  PetscCall(pbng_level_create_vec(lev, v));
  PetscCall(VecSetDM(*v, dm));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_set_callbacks(pbng_level *lev, SNES snes)
{
  DM dm;

  PetscFunctionBeginUser;
  PetscCall(SNESGetDM(snes, &dm)); /* a DMShell: it carries the callbacks and the vector layout */
  PetscCall(DMShellSetContext(dm, lev));
  PetscCall(DMShellSetCreateGlobalVector(dm, create_global_vector));
  PetscCall(SNESSetFunction(snes, NULL, level_function, lev));
  PetscCall(SNESSetNGS(snes, level_ngs, lev));
  PetscCall(SNESSetObjective(snes, level_objective, lev));
  if (lev->K) PetscCall(SNESSetJacobian(snes, lev->K, lev->K, level_jacobian, lev));
  PetscFunctionReturn(0);
}

/* The level's matrix for its Hessian kind (lev->hessian): preallocated for its couplings, with the rigid-body modes,
 * marked SPD for the projected kinds, positive definite with the prescribed rows, so that a Cholesky factorisation
 * needs no pivoting (MUMPS then factors without it: pivots chosen on round-off made the coarse solve partition
 * dependent). */
static PetscErrorCode create_level_matrix(pbng_level *lev)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_stiffness_create(lev->pb, &lev->map, &lev->K));
  lev->K_current = 0;
  if (lev->K_linear_modes) PetscCall(pbng_stiffness_set_linear_modes(lev->pb, lev->K));
  else PetscCall(pbng_stiffness_set_rigid_body_modes(lev->pb, lev->K));
  PetscCall(MatSetOption(lev->K, MAT_SPD, lev->hessian != PBNG_HESSIAN_EXACT ? PETSC_TRUE : PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* The contact ghosts' global unknowns from their owners (the dynamic halo carries them as positions). */
static PetscErrorCode contact_ghost_dofs(pbng_level *lev)
{
  const pbng_dmesh *dm = lev->pb->dm;
  pbng_contacts *ct = lev->pb->contacts;
  double *v;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(3 * ((size_t)dm->nlocal + ct->ghost_capacity) + 1, &v));
  for (int32_t i = 0; i < dm->nowned; ++i) v[3 * (int64_t)i] = (double)lev->map.node_dof[i];
  PetscCall(pbng_contacts_exchange(ct, -1, v));
  for (int32_t g = 0; g < ct->nghost; ++g) lev->map.node_dof[dm->nlocal + g] = (int64_t)v[3 * ((int64_t)dm->nlocal + g)];
  PetscCall(PetscFree(v));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_refresh_contacts(pbng_level *lev, SNES snes)
{
  const pbng_contacts *ct = lev->pb->contacts;

  PetscFunctionBeginUser;
  if (!ct || lev->contact_version == ct->version) PetscFunctionReturn(0);
  lev->contact_version = ct->version;
  if (!lev->K) PetscFunctionReturn(0); /* the contact ghosts' unknowns serve the matrix only */
  PetscCall(contact_ghost_dofs(lev));
  PetscCall(MatDestroy(&lev->K)); /* the couplings changed: a matrix preallocated for them */
  PetscCall(create_level_matrix(lev));
  PetscCall(SNESSetJacobian(snes, lev->K, lev->K, level_jacobian, lev));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_level_set_jacobian(pbng_level *lev, pbng_hessian_kind kind, SNES snes)
{
  PetscFunctionBeginUser;
  PetscCheck(lev->K || lev->map.node_dof, lev->pb->dm->comm, PETSC_ERR_ARG_WRONGSTATE, "level %d has no numbering of its nodes left to assemble a matrix with",
             lev->index);
  lev->hessian = kind;
  if (!lev->K) PetscCall(create_level_matrix(lev));
  PetscCall(SNESSetJacobian(snes, lev->K, lev->K, level_jacobian, lev));
  PetscFunctionReturn(0);
}
