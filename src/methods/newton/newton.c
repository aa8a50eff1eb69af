/* The Newton baseline (issue 4): PETSc SNES on the free unknowns of the distributed mesh, the
 * assembled stiffness (src/problem/assembly.c, element Hessians made PSD per element, as the 12x12
 * matrix or through dP/dF (-newton_projection element | stress), unless -newton_exact_hessian) as Jacobian (rigid-body near-null space for GAMG), the total energy as the
 * line-search objective. One call of iterate is one Newton step (SNESSolve with one iteration), so the
 * frame loop, residual and output are shared with PBNG. Linear solver presets
 * (-newton_preconditioner gamg | hypre | bjacobi_icc, CG in each) set PETSc options that are not
 * given explicitly; every -newton_snes_*, -newton_ksp_*, -newton_pc_* option passes through
 * (Eisenstat-Walker: -newton_snes_ksp_ew). */
#include <petscsnes.h>
#include <stdio.h>
#include <string.h>
#include "methods/pbng/level.h"
#include "methods/solver.h"

#define NEWTON_DEFAULT_PRECONDITIONER "bjacobi_icc" /* measured best: docs/newton.md */
#define NEWTON_DEFAULT_PROJECTION "stress"         /* -newton_projection, measured best: docs/newton.md */

typedef struct {
  pbng_level level; /* the problem as an SNES: function, objective (energy), Jacobian, and PBNG's NGS (-newton_npc) */
  Vec X, X0;        /* the unknowns, and their value at the start of the step */
  SNES snes;
} newton_data;

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
  PetscCall(pbng_option_default("-newton_ksp_type", "cg"));
  PetscCall(pbng_option_default("-newton_ksp_rtol", "1e-3"));
  PetscCall(pbng_option_default("-newton_ksp_max_it", "1000"));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-newton_pc_type", &pc_given));
  if (pc_given) PetscFunctionReturn(0); /* an explicit -newton_pc_type replaces the preset's preconditioner */
  if (!strcmp(preset, "gamg")) {
    PetscCall(pbng_option_default("-newton_pc_type", "gamg"));
    PetscCall(pbng_option_default("-newton_pc_gamg_aggressive_coarsening", "3"));
  } else if (!strcmp(preset, "hypre")) {
    PetscCall(pbng_option_default("-newton_pc_type", "hypre"));
    PetscCall(pbng_option_default("-newton_pc_hypre_type", "boomeramg"));
    PetscCall(pbng_option_default("-newton_pc_hypre_boomeramg_strong_threshold", "0.5"));
    PetscCall(pbng_option_default("-newton_pc_hypre_boomeramg_coarsen_type", "HMIS"));
    PetscCall(pbng_option_default("-newton_pc_hypre_boomeramg_interp_type", "ext+i"));
    PetscCall(pbng_option_default("-newton_pc_hypre_boomeramg_P_max", "4"));
    PetscCall(pbng_option_default("-newton_pc_hypre_boomeramg_agg_nl", "1"));
  } else {
    PetscCall(pbng_option_default("-newton_pc_type", "bjacobi"));
    PetscCall(pbng_option_default("-newton_sub_pc_type", "icc"));
  }
  PetscFunctionReturn(0);
}

/* The pbng hessian kind named by -newton_projection / -newton_exact_hessian. */
static PetscErrorCode read_hessian_kind(PetscOptionItems *PetscOptionsObject, int *kind)
{
  PetscBool exact = PETSC_FALSE, set;
  char projection[32] = NEWTON_DEFAULT_PROJECTION;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsString("-newton_projection", "how element Hessians are made PSD: stress (through dP/dF) | element (the 12x12 matrix)", NULL,
                               projection, projection, sizeof(projection), &set));
  PetscCall(PetscOptionsBool("-newton_exact_hessian", "the exact (indefinite) Hessian instead of a PSD projection", NULL, exact, &exact, &set));
  if (!strcmp(projection, "stress")) *kind = PBNG_HESSIAN_PSD_STRESS;
  else if (!strcmp(projection, "element")) *kind = PBNG_HESSIAN_PSD_ELEMENT;
  else SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "-newton_projection: unknown \"%s\" (known: stress, element)", projection);
  if (exact) *kind = PBNG_HESSIAN_EXACT;
  PetscFunctionReturn(0);
}

#define NEWTON_NPC_SWEEPS 3 /* PBNG sweeps per application of the nonlinear preconditioner */

/* -newton_npc pbng: PBNG sweeps (SNESNGS with the level's callback, NEWTON_NPC_SWEEPS sweeps, one
 * application per Newton step) as Newton's nonlinear preconditioner, on the right (PETSc's default:
 * each Newton step starts from the sweeps' result) or, with -newton_snes_npc_side left, on the left
 * (Newton on x - NPC(x) = 0, whose Jacobian PETSc applies matrix-free: no stiffness is assembled and
 * the -newton_preconditioner preset does not apply). Every -newton_npc_snes_* option overrides. */
/* Whether PETSc will apply the nonlinear preconditioner on the left (-newton_snes_npc_side left, an
 * option of the SNES). */
static PetscErrorCode npc_on_left(PetscBool *left)
{
  char side[32] = "right";

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-newton_snes_npc_side", side, sizeof(side), NULL));
  *left = !strcmp(side, "left");
  PetscFunctionReturn(0);
}

static PetscErrorCode configure_npc(SNES snes)
{
  SNES pc;

  PetscFunctionBeginUser;
  PetscCall(SNESGetNPC(snes, &pc));
  PetscCall(SNESSetType(pc, SNESNGS));
  PetscCall(SNESNGSSetSweeps(pc, NEWTON_NPC_SWEEPS));
  PetscCall(SNESSetTolerances(pc, 0.0, 0.0, 0.0, 1, PETSC_DEFAULT));
  PetscCall(SNESSetNormSchedule(pc, SNES_NORM_NONE));
  PetscFunctionReturn(0);
}

/* Left preconditioning: Newton on x - NPC(x) = 0, differentiated matrix-free (MatCreateSNESMF
 * differentiates the preconditioned function once the preconditioner is set on the left), GMRES
 * without a preconditioner: no stiffness is assembled. */
static PetscErrorCode use_matrix_free_jacobian(SNES snes)
{
  KSP ksp;
  PC pc;
  Mat J;

  PetscFunctionBeginUser;
  PetscCall(SNESSetNPCSide(snes, PC_LEFT));
  PetscCall(MatCreateSNESMF(snes, &J));
  PetscCall(SNESSetJacobian(snes, J, J, MatMFFDComputeJacobian, NULL));
  PetscCall(MatDestroy(&J));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscFunctionReturn(0);
}

static PetscErrorCode newton_create(pbng_solver *s)
{
  newton_data *d;
  pbng_problem *pb = s->pb;
  const pbng_hessian_kind hessian = (pbng_hessian_kind)s->opt.newton.hessian;
  pbng_sweep_options sweep = s->opt.sweep;
  const PetscBool npc = s->opt.newton.npc ? PETSC_TRUE : PETSC_FALSE;
  PetscBool left = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCheck(pb->halo, pb->dm->comm, PETSC_ERR_ARG_WRONG, "the Newton solver needs the problem's halo");
  PetscCall(PetscNew(&d));
  s->data = d;
  if (npc) PetscCall(npc_on_left(&left));
  if (!npc) sweep.weak_blocks = 0; /* no sweeps without the preconditioner: nothing to set up */
  if (!left) PetscCall(apply_preconditioner_preset(s->opt.newton.preconditioner));
  PetscCall(pbng_level_create(pb, &sweep, -1, &d->level));
  PetscCall(SNESCreate(pb->dm->comm, &d->snes));
  PetscCall(SNESSetOptionsPrefix(d->snes, "newton_"));
  PetscCall(pbng_level_set_callbacks(&d->level, d->snes));
  if (!left) PetscCall(pbng_level_set_jacobian(&d->level, hessian, d->snes));
  PetscCall(pbng_level_create_vec(&d->level, &d->X));
  PetscCall(VecDuplicate(d->X, &d->X0));
  PetscCall(SNESSetTolerances(d->snes, 0.0, 0.0, 0.0, 1, PETSC_DEFAULT)); /* one step per iterate */
  PetscCall(SNESSetConvergenceTest(d->snes, SNESConvergedSkip, NULL, NULL));
  /* A Krylov solve that stops early (iteration limit, or CG seeing an indefinite preconditioner,
   * as GAMG's Chebyshev smoothers can produce on twisted states) still returns a useful direction:
   * let the energy line search judge it instead of discarding the step. */
  PetscCall(SNESSetMaxLinearSolveFailures(d->snes, PETSC_MAX_INT));
  if (npc) PetscCall(configure_npc(d->snes));
  if (left) PetscCall(use_matrix_free_jacobian(d->snes));
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

/* -material neohookean_log: a step that started with an inverted element (+inf energy, where the energy
 * line search has nothing to compare) and did not un-invert every element (the fallback full step can) ends
 * the run, naming the element. Collective. */
static PetscErrorCode refuse_inverted(pbng_solver *s)
{
  double E;
  int64_t inverted;

  PetscFunctionBeginUser;
  PetscCall(pbng_problem_energy(s->pb, NULL, &E));
  if (E != INFINITY) PetscFunctionReturn(0);
  PetscCall(pbng_problem_first_infinite_element(s->pb, &inverted));
  SETERRQ(s->pb->dm->comm, PETSC_ERR_NOT_CONVERGED,
          "-material neohookean_log: element %lld is inverted (J <= 0, where the log barrier's energy has no value) and a Newton step "
          "did not un-invert it; Newton's energy line search cannot work from there: start from an uninverted state, or use -solver pbng, "
          "whose guarded stress un-inverts elements (docs/equations.md#neo-hookean-with-the-log-barrier)",
          (long long)inverted);
}

static PetscErrorCode newton_iterate(pbng_solver *s, int l)
{
  newton_data *d = s->data;
  SNESConvergedReason reason;
  char saved[64];

  PetscFunctionBeginUser;
  (void)l;
  PetscCall(pbng_level_refresh_contacts(&d->level, d->snes));
  double E0 = 0.0;
  if (s->pb->mat.kind == PBNG_MATERIAL_NEOHOOKEAN_LOG) PetscCall(pbng_problem_energy(s->pb, NULL, &E0)); /* +inf: an inverted element */
  PetscCall(pbng_level_store(&d->level, d->X));
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
  PetscCall(pbng_level_load(&d->level, d->X));
  if (E0 == INFINITY) PetscCall(refuse_inverted(s));
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
    PetscCall(pbng_level_destroy(&d->level));
  }
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* ---- options and reporting --------------------------------------------------------------------- */

/* the default preset, per-stress PSD projection, no nonlinear preconditioner */
static void newton_defaults(pbng_solver_options *o) { o->newton = (pbng_newton_options){.hessian = PBNG_HESSIAN_PSD_STRESS}; }

/* -newton_preconditioner, -newton_projection, -newton_exact_hessian, -newton_npc: read (and listed by
 * -help) when Newton is the solver; otherwise left unread, so that the check for unused options names
 * them as Newton's. Every other -newton_* option belongs to PETSc's SNES/KSP/PC and is read when the
 * solver sets up. */
static PetscErrorCode pbng_newton_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *o, const char *selected)
{
  PetscBool help, set;
  char npc[32] = "none";

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  if (strcmp(selected, pbng_solver_newton_ops.name) && !help) PetscFunctionReturn(0);
  if (!o->newton.preconditioner[0]) PetscCall(PetscStrncpy(o->newton.preconditioner, NEWTON_DEFAULT_PRECONDITIONER, sizeof(o->newton.preconditioner)));
  PetscCall(PetscOptionsString("-newton_preconditioner", "linear solver preset: bjacobi_icc | hypre | gamg (CG in each)", NULL, o->newton.preconditioner,
                               o->newton.preconditioner, sizeof(o->newton.preconditioner), &set));
  PetscCheck(!strcmp(o->newton.preconditioner, "gamg") || !strcmp(o->newton.preconditioner, "hypre") || !strcmp(o->newton.preconditioner, "bjacobi_icc"),
             PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "-newton_preconditioner: unknown preset \"%s\" (known: gamg, hypre, bjacobi_icc)",
             o->newton.preconditioner);
  PetscCall(read_hessian_kind(PetscOptionsObject, &o->newton.hessian));
  PetscCall(PetscOptionsString("-newton_npc", "nonlinear preconditioner: none | pbng (PBNG sweeps; -newton_snes_npc_side left|right)", NULL, npc, npc,
                               sizeof(npc), &set));
  PetscCheck(!strcmp(npc, "none") || !strcmp(npc, "pbng"), PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "-newton_npc: unknown \"%s\" (known: none, pbng)", npc);
  o->newton.npc = !strcmp(npc, "pbng");
  PetscFunctionReturn(0);
}

static void newton_iteration_suffix(long long linear, char *buf, size_t len) { snprintf(buf, len, "  linear %lld", linear); }

static void newton_summary_line(long long linear, int iterations, char *buf, size_t len)
{
  snprintf(buf, len, "%lld linear (Krylov) iterations, %.1f per Newton step", linear, iterations ? (double)linear / iterations : 0.0);
}

/* No state between iterations: each is one SNESSolve from the problem's positions. */
const pbng_solver_ops pbng_solver_newton_ops = {
  .name = "newton",
  .kind = {.contacts = 1, .plasticity = 1, .peridynamics = 1, .cloth_stencils = 1, .ring_matrices = 1, .costly_iterations = 1, .contact_every = 1, .selectable = 1, .chosen_by = "-solver newton",
           .help = "PETSc SNES Newton on the same partition (and every -newton_snes_*, -newton_ksp_*, -newton_pc_* option)",
           .petsc_prefixes = "newton_,", .set_from_options = pbng_newton_set_from_options, .options_defaults = newton_defaults, .iteration_suffix = newton_iteration_suffix,
           .summary_line = newton_summary_line},
  .create = newton_create, .begin_frame = newton_begin_frame, .iterate = newton_iterate, .destroy = newton_destroy};
