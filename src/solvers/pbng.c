/* Position-Based Nonlinear Gauss-Seidel (Sec. 7): each free node in turn takes one modified-Newton
 * step on its own 3x3 system (Eq. 31-33) with the SPD modified Hessian (Eq. 36-37); nodes of one
 * color (Sec. 9) are updated in parallel. Optional SOR (Eq. 40) or Chebyshev (Eq. 39) acceleration.
 * With weak constraints, each iteration ends with one joint step per weak constraint on all its
 * nodes (-weak_blocks, on by default; off is the paper's node-only PBNG). The sweep itself is
 * src/solvers/sweep.c; this solver iterates it once per iteration with b = 0. */
#include "solvers/solver.h"

static PetscErrorCode pbng_create(pbng_solver *s)
{
  pbng_sweeper *sw;
  
  PetscFunctionBeginUser;
  PetscCall(PetscNew(&sw));
  s->data = sw;
  PetscCall(pbng_sweeper_create(s->pb, &s->opt.sweep, sw));
  PetscFunctionReturn(0);
}

static PetscErrorCode pbng_begin_frame(pbng_solver *s)
{
  pbng_sweeper_restart(s->data);
  return 0;
}

static PetscErrorCode pbng_iterate(pbng_solver *s, int l)
{
  pbng_sweeper *sw = s->data;

  PetscFunctionBeginUser;
  PetscCall(pbng_sweeper_iterate(sw, l, NULL));
  s->halo_seconds = sw->halo_seconds;
  PetscFunctionReturn(0);
}

static PetscErrorCode pbng_destroy(pbng_solver *s)
{
  PetscFunctionBeginUser;
  if (s->data) PetscCall(pbng_sweeper_destroy(s->data));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* Checkpoint state: the acceleration history x^{l-1} and omega_l (Eq. 39/40). */
static PetscErrorCode pbng_state(pbng_solver *s, pbng_state_field *fields, int *n)
{
  pbng_sweeper *sw = s->data;
  const int32_t nfree = s->pb->dm->nfree;

  PetscFunctionBeginUser;
  if (sw->x_prev) pbng_state_add(fields, n, "pbng_x_prev", PBNG_FIELD_NODES, 3, nfree, nfree, sw->x_prev);
  pbng_state_add(fields, n, "pbng_omega", PBNG_FIELD_SCALARS, 1, 1, 1, &sw->omega_prev);
  PetscFunctionReturn(0);
}

const pbng_solver_ops pbng_solver_pbng_ops = {.name = "pbng", .create = pbng_create, .begin_frame = pbng_begin_frame, .iterate = pbng_iterate,
                                              .destroy = pbng_destroy, .state = pbng_state};
