/* PBNG's joint step on the nodes of the contacts (issue 17; the weak-constraint blocks of
 * docs/weak_constraints.md, for contacts): after the node sweep, the free nodes of every contact with
 * two or more free nodes (the patch) take one modified-Newton step together,
 *   H dx = f + b,   H = PBNG's modified Hessian restricted to the patch nodes,
 * i.e. the modified element matrices (Eq. 36-37 for every node pair, assembly.h) of the elements around
 * them, inertia, weak constraints and the contacts' a_p a_q K_c, all between patch nodes; f the nodes'
 * forces. H is symmetric positive definite. This is a block Gauss-Seidel step with the patch as the
 * block. Why: stiff contacts (k >> the bodies' stiffness e) join the patch nodes into one stiff network
 * that node steps, or a step per contact, move by about e/k per sweep (measured: the colliding blocks'
 * residual stalls near 1e-5 after 2000 sweeps at k = 1e8 and converges in tens at k = 1e5); with the
 * element couplings between patch nodes left out, neighbours moved at once overshoot like a Jacobi step
 * (measured: a two-cycle).
 *
 * The system is the same on every partition: each rank builds its owned patch nodes' rows with every
 * sum in an order of global ids (elements by global element id, constraints by key), the rows are
 * gathered on every rank in the order of the nodes' global ids, and every rank solves the same
 * sequential system (a KSP with options prefix "contact_"; default a direct solve: -contact_ksp_type
 * preonly -contact_pc_type lu), so the steps do not depend on the partition; every rank then moves its
 * own copies of the patch nodes (owned and ghost). The patch system is replicated on every rank: fine
 * for contact patches of thousands of nodes, the cost to watch beyond. Unilateral contacts: the step is
 * solved again with every contact that changes side over it switched (an active-set iteration on the
 * piecewise quadratic model, a few passes at most). */
#ifndef PBNG_METHODS_PBNG_CONTACT_PATCH_H
#define PBNG_METHODS_PBNG_CONTACT_PATCH_H

#include <petscksp.h>
#include "problem/problem.h"

typedef struct {
  int version;        /* the contacts' version the patch was found for (-1: none) */
  int32_t nmine;      /* owned patch nodes */
  int32_t *mine;      /* [nmine] their local indices */
  int64_t nglobal;    /* patch nodes of the job */
  int64_t *gid;       /* [nglobal] their global ids, increasing: patch index = position */
  int32_t *local;     /* [nglobal] the local copy of each (owned or ghost), or -1 */
  Mat H;              /* sequential, block 3, on every rank */
  Vec f, dx;
  KSP ksp;
  PetscLogEvent ev;
} pbng_contact_patch;

PetscErrorCode pbng_contact_patch_init(pbng_contact_patch *cp);
PetscErrorCode pbng_contact_patch_destroy(pbng_contact_patch *cp);

/* Collective. The joint step (the patch found again when the contacts changed); b: the FAS right-hand
 * side of the owned free nodes, or NULL. Ghosts are current afterwards. */
PetscErrorCode pbng_contact_patch_step(pbng_contact_patch *cp, pbng_problem *pb, const double *b);

#endif
