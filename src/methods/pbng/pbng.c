/* Position-Based Nonlinear Gauss-Seidel (Sec. 7): each free node in turn takes one modified-Newton
 * step on its own 3x3 system (Eq. 31-33) with the SPD modified Hessian (Eq. 36-37); nodes of one
 * color (Sec. 9) are updated in parallel. Optional SOR (Eq. 40) or Chebyshev (Eq. 39) acceleration.
 * With weak constraints, each iteration ends with one joint step per weak constraint on all its
 * nodes (-weak_blocks, on by default; off is the paper's node-only PBNG). The sweep itself is
 * src/methods/pbng/sweep.c; this solver iterates it once per iteration with b = 0. */
#include "methods/pbng/sweep.h"
#include "methods/solver.h"
#include <string.h>

static PetscErrorCode single_level_create(pbng_solver *s)
{
  pbng_sweeper *sw;
  
  PetscFunctionBeginUser;
  PetscCall(PetscNew(&sw));
  s->data = sw;
  PetscCall(pbng_sweeper_create(s->pb, &s->opt.sweep, sw));
  PetscFunctionReturn(0);
}

static PetscErrorCode single_level_begin_frame(pbng_solver *s)
{
  pbng_sweeper_restart(s->data);
  return 0;
}

static PetscErrorCode single_level_iterate(pbng_solver *s, int l)
{
  pbng_sweeper *sw = s->data;

  PetscFunctionBeginUser;
  PetscCall(pbng_sweeper_iterate(sw, l, NULL));
  s->halo_seconds = sw->halo_seconds;
  PetscFunctionReturn(0);
}

/* -monitor with -vbd_line_search: the node steps the line search shortened and refused so far (all ranks). */
static PetscErrorCode single_level_monitor(pbng_solver *s, char *buf, size_t len)
{
  pbng_sweeper *sw = s->data;
  long long mine[2] = {sw->ls_halved, sw->ls_kept}, all[2];

  PetscFunctionBeginUser;
  buf[0] = 0;
  if (!sw->opt.vbd_line_search) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, s->pb->dm->comm));
  snprintf(buf, len, "  ls_halved %lld ls_kept %lld", all[0], all[1]);
  PetscFunctionReturn(0);
}

static PetscErrorCode single_level_destroy(pbng_solver *s)
{
  PetscFunctionBeginUser;
  if (s->data) PetscCall(pbng_sweeper_destroy(s->data));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* Checkpoint state: the acceleration history x^{l-1} and omega_l (Eq. 39/40). */
static PetscErrorCode single_level_state(pbng_solver *s, pbng_state_field *fields, int *n)
{
  pbng_sweeper *sw = s->data;
  const int32_t nfree = s->pb->dm->nfree;

  PetscFunctionBeginUser;
  if (sw->x_prev) pbng_state_add(fields, n, "pbng_x_prev", PBNG_FIELD_NODES, 3, nfree, nfree, sw->x_prev);
  pbng_state_add(fields, n, "pbng_omega", PBNG_FIELD_SCALARS, 1, 1, 1, &sw->omega_prev);
  PetscFunctionReturn(0);
}

/* ---- options ---------------------------------------------------------------------------------- */

/* -accel, -weak_blocks and the VBD variants -vbd_line_search, -vbd_exact_block. */
static PetscErrorCode read_sweep_choices(PetscOptionItems *PetscOptionsObject, pbng_sweep_options *o, int mine, const char *selected)
{
  const char *const names[] = {pbng_accel_name(PBNG_ACCEL_NONE), pbng_accel_name(PBNG_ACCEL_SOR), pbng_accel_name(PBNG_ACCEL_CHEBYSHEV)};
  const pbng_accel kinds[] = {PBNG_ACCEL_NONE, PBNG_ACCEL_SOR, PBNG_ACCEL_CHEBYSHEV};
  int accel = 0;
  PetscBool set;

  PetscFunctionBeginUser;
  while (kinds[accel] != o->accel) ++accel;
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-accel", "none | sor (Eq. 40) | chebyshev (Eq. 39)", "acceleration ", names, 3, &accel, &set));
  o->accel = kinds[accel];
  PetscCheck(!set || mine, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-accel is for -solver pbng (the solver is %s)", selected);
  PetscBool blocks = o->weak_blocks ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(PetscOptionsBool("-weak_blocks", "after each sweep, one joint step per weak constraint on all its nodes (0: the paper's node-only PBNG)", NULL,
                             blocks, &blocks, &set));
  PetscCheck(!set || mine, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-weak_blocks is for -solver pbng (the solver is %s)", selected);
  o->weak_blocks = blocks;
  PetscBool ls = o->vbd_line_search ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(PetscOptionsBool("-vbd_line_search",
                             "after each node step, VBD's backtracking line search on the node's local incremental potential (alpha = 1, 1/2, ..., 1/256; "
                             "simple decrease; docs/gpbd_solver.md#vbd-and-pbng)",
                             NULL, ls, &ls, &set));
  PetscCheck(!set || mine, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-vbd_line_search is for -solver pbng (the solver is %s)", selected);
  o->vbd_line_search = ls;
  PetscBool exact = o->vbd_exact_block ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(PetscOptionsBool("-vbd_exact_block",
                             "VBD's node block: the exact element Hessian blocks d2E/dx_i2, each clamped positive semidefinite, + inertia, instead of "
                             "Eq. 36-38 (dynamic, linear tetrahedra)",
                             NULL, exact, &exact, &set));
  PetscCheck(!set || mine, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-vbd_exact_block is for -solver pbng (the solver is %s)", selected);
  o->vbd_exact_block = exact;
  PetscFunctionReturn(0);
}

/* -omega (SOR, Eq. 40), -rho and -gamma (Chebyshev, Eq. 39): in range, and only with their -accel. */
static PetscErrorCode read_acceleration_parameters(PetscOptionItems *PetscOptionsObject, pbng_sweep_options *o, int mine, const char *selected)
{
  PetscBool omega_set, rho_set, gamma_set;
  const char *accel = pbng_accel_name(o->accel);

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsReal("-omega", "SOR relaxation omega (Eq. 40), in (0, 2)", NULL, o->omega, &o->omega, &omega_set));
  PetscCall(PetscOptionsReal("-rho", "Chebyshev spectral radius rho (Eq. 39), in (0, 1)", NULL, o->rho, &o->rho, &rho_set));
  PetscCall(PetscOptionsReal("-gamma", "Chebyshev relaxation gamma (Eq. 39), in (0, 2)", NULL, o->gamma, &o->gamma, &gamma_set));
  PetscCheck(o->omega > 0 && o->omega < 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-omega %g: must be in (0, 2)", o->omega);
  PetscCheck(o->rho > 0 && o->rho < 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-rho %g: must be in (0, 1)", o->rho);
  PetscCheck(o->gamma > 0 && o->gamma < 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-gamma %g: must be in (0, 2)", o->gamma);
  PetscCheck(!(omega_set || rho_set || gamma_set) || mine, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-omega, -rho and -gamma are for -solver pbng (the solver is %s)", selected);
  PetscCheck(!omega_set || o->accel == PBNG_ACCEL_SOR, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-omega is for -accel sor (the acceleration is %s)", accel);
  PetscCheck(!(rho_set || gamma_set) || o->accel == PBNG_ACCEL_CHEBYSHEV, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-rho and -gamma are for -accel chebyshev (the acceleration is %s)", accel);
  PetscFunctionReturn(0);
}

/* Sec. 7.2's SOR and Chebyshev parameters; plain sweeps; weak blocks on */
static void single_level_defaults(pbng_solver_options *o) { o->sweep = (pbng_sweep_options){.accel = PBNG_ACCEL_NONE, .omega = 1.7, .rho = 0.95, .gamma = 1.7, .weak_blocks = 1}; }

static PetscErrorCode pbng_pbng_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *opt, const char *selected)
{
  const int mine = !strcmp(selected, pbng_solver_pbng_ops.name);

  PetscFunctionBeginUser;
  PetscCall(read_sweep_choices(PetscOptionsObject, &opt->sweep, mine, selected));
  PetscCall(read_acceleration_parameters(PetscOptionsObject, &opt->sweep, mine, selected));
  PetscFunctionReturn(0);
}

const pbng_solver_ops pbng_solver_pbng_ops = {
  .name = "pbng",
  .kind = {.cloth_stencils = 1, .multilevel = 1, .contacts = 1, .plasticity = 1, .contact_every = 10, .selectable = 1, .chosen_by = "-solver pbng", .help = "Position-Based Nonlinear Gauss-Seidel (the paper; -multilevel L: inside FAS)",
           .set_from_options = pbng_pbng_set_from_options, .options_defaults = single_level_defaults},
  .create = single_level_create, .begin_frame = single_level_begin_frame, .iterate = single_level_iterate, .destroy = single_level_destroy, .monitor = single_level_monitor, .state = single_level_state};
