/* The Newton baseline (issue 4): PETSc SNES on the free unknowns of the distributed mesh, the
 * assembled stiffness (src/solvers/assembly.c, element Hessians made PSD per element, as the 12x12
 * matrix or through dP/dF (-newton_projection element | stress), unless -newton_exact_hessian) as Jacobian (rigid-body near-null space for GAMG), the total energy as the
 * line-search objective. One call of iterate is one Newton step (SNESSolve with one iteration), so the
 * frame loop, residual and output are shared with PBNG. Linear solver presets
 * (-newton_preconditioner gamg | hypre | bjacobi_icc, CG in each) set PETSc options that are not
 * given explicitly; every -newton_snes_*, -newton_ksp_*, -newton_pc_* option passes through
 * (Eisenstat-Walker: -newton_snes_ksp_ew). */
#include <petscsnes.h>
#include <string.h>
#include "parallel/dofs.h"
#include "solvers/assembly.h"
#include "solvers/solver.h"

#define NEWTON_DEFAULT_PRECONDITIONER "bjacobi_icc" /* measured best: docs/newton.md */
#define NEWTON_DEFAULT_PROJECTION "stress"         /* -newton_projection, measured best: docs/newton.md */

typedef struct {
  pbng_dof_map map;
  Mat K;
  Vec X, X0; /* the unknowns, and their value at the start of the step */
  SNES snes;
  pbng_hessian_kind hessian;
} newton_data;

/* Sets a PETSc option unless the user gave it. */
static PetscErrorCode default_option(const char *name, const char *value)
{
  PetscBool given;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsHasName(NULL, NULL, name, &given));
  if (!given) PetscCall(PetscOptionsSetValue(NULL, name, value));
  PetscFunctionReturn(0);
}

/* The linear solver presets: CG (the projected stiffness is SPD on the free unknowns) with
 *   gamg        smoothed aggregation AMG, rigid-body near-null space (set in newton_create);
 *   hypre       BoomerAMG, HMIS coarsening with ext+i interpolation (at most 4 per row), one level of
 *               aggressive coarsening, the 3-D strong threshold 0.5 (nodal coarsening measured slower);
 *   bjacobi_icc block Jacobi over ranks, incomplete Cholesky ICC(0) in each block.
 * Relative linear tolerance 1e-3 (Newton's quadratic phase is reached with it, see docs/newton.md). */
static PetscErrorCode apply_preconditioner_preset(const char *preset)
{
  PetscBool pc_given;

  PetscFunctionBeginUser;
  PetscCall(default_option("-newton_ksp_type", "cg"));
  PetscCall(default_option("-newton_ksp_rtol", "1e-3"));
  PetscCall(default_option("-newton_ksp_max_it", "1000"));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-newton_pc_type", &pc_given));
  PetscCheck(!strcmp(preset, "gamg") || !strcmp(preset, "hypre") || !strcmp(preset, "bjacobi_icc"), PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE,
             "-newton_preconditioner: unknown preset \"%s\" (known: gamg, hypre, bjacobi_icc)", preset);
  if (pc_given) PetscFunctionReturn(0); /* an explicit -newton_pc_type replaces the preset's preconditioner */
  if (!strcmp(preset, "gamg")) {
    PetscCall(default_option("-newton_pc_type", "gamg"));
    PetscCall(default_option("-newton_pc_gamg_aggressive_coarsening", "3"));
  } else if (!strcmp(preset, "hypre")) {
    PetscCall(default_option("-newton_pc_type", "hypre"));
    PetscCall(default_option("-newton_pc_hypre_type", "boomeramg"));
    PetscCall(default_option("-newton_pc_hypre_boomeramg_strong_threshold", "0.5"));
    PetscCall(default_option("-newton_pc_hypre_boomeramg_coarsen_type", "HMIS"));
    PetscCall(default_option("-newton_pc_hypre_boomeramg_interp_type", "ext+i"));
    PetscCall(default_option("-newton_pc_hypre_boomeramg_P_max", "4"));
    PetscCall(default_option("-newton_pc_hypre_boomeramg_agg_nl", "1"));
  } else {
    PetscCall(default_option("-newton_pc_type", "bjacobi"));
    PetscCall(default_option("-newton_sub_pc_type", "icc"));
  }
  PetscFunctionReturn(0);
}

/* Owned free positions <- X, then ghosts. */
static PetscErrorCode set_positions(pbng_problem *pb, Vec X)
{
  const PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(X, &a));
  for (int32_t k = 0; k < 3 * pb->dm->nfree; ++k) pb->x[k] = a[k];
  PetscCall(VecRestoreArrayRead(X, &a));
  PetscCall(pbng_problem_update_ghosts(pb));
  PetscFunctionReturn(0);
}

/* SNES residual: -(f_int + f_ext [- inertia]) at X, the gradient of the energy. */
static PetscErrorCode form_function(SNES snes, Vec X, Vec R, void *ctx)
{
  pbng_problem *pb = ctx;
  PetscScalar *r;

  PetscFunctionBeginUser;
  (void)snes;
  PetscCall(set_positions(pb, X));
  PetscCall(VecGetArray(R, &r));
  for (int32_t i = 0; i < pb->dm->nfree; ++i) {
    double f[3];
    pbng_node_force(pb, i, pb->x, f, NULL, 0);
    for (int d = 0; d < 3; ++d) r[3 * i + d] = -f[d];
  }
  PetscCall(VecRestoreArray(R, &r));
  PetscFunctionReturn(0);
}

static PetscErrorCode form_objective(SNES snes, Vec X, PetscReal *energy, void *ctx)
{
  pbng_problem *pb = ctx;
  double residual;

  PetscFunctionBeginUser;
  (void)snes;
  PetscCall(set_positions(pb, X));
  PetscCall(pbng_problem_residual(pb, &residual, energy));
  PetscFunctionReturn(0);
}

static PetscErrorCode form_jacobian(SNES snes, Vec X, Mat J, Mat P, void *ctx)
{
  pbng_solver *s = ctx;
  newton_data *d = s->data;

  PetscFunctionBeginUser;
  (void)snes, (void)J;
  PetscCall(set_positions(s->pb, X));
  PetscCall(pbng_stiffness_assemble(s->pb, &d->map, d->hessian, P));
  PetscFunctionReturn(0);
}

/* GAMG's near-null space: the six rigid-body modes at the rest positions of the free nodes. */
static PetscErrorCode set_rigid_body_near_null_space(const pbng_problem *pb, Mat K, Vec like)
{
  Vec coords;
  MatNullSpace nsp;
  PetscScalar *c;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(like, &coords));
  PetscCall(VecSetBlockSize(coords, 3));
  PetscCall(VecGetArray(coords, &c));
  for (int32_t k = 0; k < 3 * pb->dm->nfree; ++k) c[k] = pb->dm->X[k];
  PetscCall(VecRestoreArray(coords, &c));
  PetscCall(MatNullSpaceCreateRigidBody(coords, &nsp));
  PetscCall(MatSetNearNullSpace(K, nsp));
  PetscCall(MatNullSpaceDestroy(&nsp));
  PetscCall(VecDestroy(&coords));
  PetscFunctionReturn(0);
}

static PetscErrorCode newton_create(pbng_solver *s)
{
  newton_data *d;
  pbng_problem *pb = s->pb;
  PetscBool exact = PETSC_FALSE;
  char preset[32] = NEWTON_DEFAULT_PRECONDITIONER, projection[32] = NEWTON_DEFAULT_PROJECTION;

  PetscFunctionBeginUser;
  PetscCheck(pb->halo, pb->dm->comm, PETSC_ERR_ARG_WRONG, "the Newton solver needs the problem's halo");
  PetscCall(PetscNew(&d));
  s->data = d;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-newton_exact_hessian", &exact, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-newton_projection", projection, sizeof(projection), NULL));
  if (!strcmp(projection, "stress")) d->hessian = PBNG_HESSIAN_PSD_STRESS;
  else if (!strcmp(projection, "element")) d->hessian = PBNG_HESSIAN_PSD_ELEMENT;
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "-newton_projection: unknown \"%s\" (known: stress, element)", projection);
  if (exact) d->hessian = PBNG_HESSIAN_EXACT;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-newton_preconditioner", preset, sizeof(preset), NULL));
  PetscCall(apply_preconditioner_preset(preset));
  PetscCall(pbng_dof_map_create(pb->dm, pb->halo, &d->map));
  PetscCall(pbng_stiffness_create(pb, &d->map, &d->K));
  PetscCall(MatCreateVecs(d->K, &d->X, NULL));
  PetscCall(VecDuplicate(d->X, &d->X0));
  PetscCall(set_rigid_body_near_null_space(pb, d->K, d->X));
  PetscCall(SNESCreate(pb->dm->comm, &d->snes));
  PetscCall(SNESSetOptionsPrefix(d->snes, "newton_"));
  PetscCall(SNESSetFunction(d->snes, NULL, form_function, pb));
  PetscCall(SNESSetObjective(d->snes, form_objective, pb));
  PetscCall(SNESSetJacobian(d->snes, d->K, d->K, form_jacobian, s));
  PetscCall(SNESSetTolerances(d->snes, 0.0, 0.0, 0.0, 1, PETSC_DEFAULT)); /* one step per iterate */
  PetscCall(SNESSetConvergenceTest(d->snes, SNESConvergedSkip, NULL, NULL));
  /* A Krylov solve that stops early (iteration limit, or CG seeing an indefinite preconditioner,
   * as GAMG's Chebyshev smoothers can produce on twisted states) still returns a useful direction:
   * let the energy line search judge it instead of discarding the step. */
  PetscCall(SNESSetMaxLinearSolveFailures(d->snes, PETSC_MAX_INT));
  PetscCall(SNESSetFromOptions(d->snes));
  PetscFunctionReturn(0);
}

static PetscErrorCode newton_begin_frame(pbng_solver *s)
{
  (void)s;
  return 0;
}

static PetscErrorCode add_linear_iterations(pbng_solver *s)
{
  newton_data *d = s->data;
  PetscInt its;

  PetscFunctionBeginUser;
  PetscCall(SNESGetLinearSolveIterations(d->snes, &its));
  s->linear_iterations += its;
  PetscFunctionReturn(0);
}

static PetscErrorCode newton_iterate(pbng_solver *s, int l)
{
  newton_data *d = s->data;
  PetscScalar *a;
  SNESConvergedReason reason;
  char saved[64];

  PetscFunctionBeginUser;
  (void)l;
  PetscCall(VecGetArray(d->X, &a));
  for (int32_t k = 0; k < 3 * s->pb->dm->nfree; ++k) a[k] = s->pb->x[k];
  PetscCall(VecRestoreArray(d->X, &a));
  PetscCall(VecCopy(d->X, d->X0));
  PetscCall(SNESSolve(d->snes, NULL, d->X));
  PetscCall(add_linear_iterations(s));
  PetscCall(SNESGetConvergedReason(d->snes, &reason));
  if (reason == SNES_DIVERGED_LINE_SEARCH) {
    /* Near the solution the energy changes less than its round-off and the energy line search
     * cannot see a decrease: take the full Newton step, from the step's start (the problem's
     * positions now hold the line search's last trial point). */
    SNESLineSearch ls;
    SNESLineSearchType type;
    PetscCall(VecCopy(d->X0, d->X));
    PetscCall(SNESGetLineSearch(d->snes, &ls));
    PetscCall(SNESLineSearchGetType(ls, &type));
    PetscCall(PetscStrncpy(saved, type, sizeof(saved)));
    PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHBASIC));
    PetscCall(SNESSolve(d->snes, NULL, d->X));
    PetscCall(add_linear_iterations(s));
    PetscCall(SNESLineSearchSetType(ls, saved));
  }
  PetscCall(set_positions(s->pb, d->X));
  PetscFunctionReturn(0);
}

static PetscErrorCode newton_destroy(pbng_solver *s)
{
  newton_data *d = s->data;

  PetscFunctionBeginUser;
  if (d) {
    PetscCall(SNESDestroy(&d->snes));
    PetscCall(VecDestroy(&d->X));
    PetscCall(VecDestroy(&d->X0));
    PetscCall(MatDestroy(&d->K));
    PetscCall(pbng_dof_map_destroy(&d->map));
  }
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* No state between iterations: each is one SNESSolve from the problem's positions. */
const pbng_solver_ops pbng_solver_newton_ops = {.name = "newton", .create = newton_create, .begin_frame = newton_begin_frame,
                                                .iterate = newton_iterate, .destroy = newton_destroy};
