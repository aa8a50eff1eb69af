/* Released boundary sets ("handles", issue 18's plastic_twist: a beam twisted by its end's nodes, then let
 * go). The dmesh orders free nodes before held ones for the whole run, so a set that lets go during a
 * run is made of free nodes tied to its motion x_D(X, t) (Eq. 12) by zero-length springs
 * k_i/2 |x_i - x_D|^2 while t <= release (docs/cloth.md "Plasticity"). */
#include "problem/problem.h"
#include <math.h>

/* Whether released set bc still holds at time t (t <= release, within rounding of frame times k dt). */
static int holds(const pbng_bc *bc, double t) { return bc->release > 0 && t <= bc->release * (1.0 + 1e-12); }

void pbng_problem_set_time(pbng_problem *pb, double t)
{
  pb->time = t;
  for (int32_t i = 0; pb->handle_held && i < pb->dm->nlocal; ++i) {
    const pbng_bc *bc = pb->handle[i] >= 0 ? &pb->bcs->bc[pb->handle[i]] : NULL;
    pb->handle_held[i] = bc && holds(bc, t);
    if (pb->handle_held[i]) pbng_motion_apply(&bc->motion, &pb->dm->X[3 * i], t, &pb->handle_xD[3 * i]);
  }
}

int pbng_problem_handles_active(const pbng_problem *pb)
{
  if (!pb->handle) return 0;
  for (int b = 0; b < pb->bcs->count; ++b)
    if (holds(&pb->bcs->bc[b], pb->time)) return 1;
  return 0;
}

/* The node's own PBNG block at rest, tr(A_i) / 3: the elastic stiffness the spring must outweigh. */
static double rest_node_stiffness(const pbng_problem *pb, int32_t i)
{
  double f[3], A[9];
  pbng_node_force(pb, i, pb->dm->X, f, A, 0);
  return (A[0] + A[4] + A[8]) / 3.0;
}

PetscErrorCode pbng_problem_set_handles(pbng_problem *pb, double extent, double penalty)
{
  const pbng_dmesh *dm = pb->dm;
  const pbng_bc_list *bcs = pb->bcs;
  const double tol = 1e-9 * extent;
  int64_t mine = 0;
  int any = 0;

  PetscFunctionBeginUser;
  for (int b = 0; b < bcs->count; ++b) any |= bcs->bc[b].release > 0;
  if (!any) PetscFunctionReturn(0);
  PetscCheck(penalty > 0 && isfinite(penalty), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-release_penalty %g must be positive and finite", penalty);
  PetscCall(PetscMalloc1(dm->nlocal + 1, &pb->handle));
  PetscCall(PetscCalloc1(dm->nowned + 1, &pb->handle_k));
  PetscCall(PetscCalloc1(dm->nlocal + 1, &pb->handle_held));
  PetscCall(PetscCalloc1(3 * (int64_t)dm->nlocal + 3, &pb->handle_xD));
  for (int32_t i = 0; i < dm->nlocal; ++i) {
    pb->handle[i] = -1;
    if (dm->node_bc[i] >= 0) continue; /* held by another set */
    for (int b = 0; b < bcs->count; ++b)
      if (bcs->bc[b].release > 0 && pbng_box_contains(bcs->bc[b].box, &dm->X[3 * i], tol)) pb->handle[i] = (int8_t)b; /* the last set, as pbng_bc_assign */
  }
  for (int32_t i = 0; i < dm->nowned; ++i)
    if (pb->handle[i] >= 0) pb->handle_k[i] = penalty * rest_node_stiffness(pb, i), ++mine; /* handle_k is still 0: no spring in A */
  PetscCallMPI(MPI_Allreduce(&mine, &pb->handle_nodes, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  pbng_problem_set_time(pb, pb->time);
  PetscFunctionReturn(0);
}
