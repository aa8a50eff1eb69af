/* The constraint solvers' contacts (PBD, XPBD, XPBD-QS, the seed's XPBD; issue 17, docs/contact.md "The
 * constraint solvers"): after the element and weak-constraint colors, every contact of the job is projected
 * as an XPBD constraint (Eq. 26-28, pbng_project_weak: C split along the contact normal n, compliance
 * 1/k_n, and across it, 1/k_t; PBD the limit alpha -> 0), one after the other in increasing key (vertex
 * gid, kind, triangle key / obstacle index). A unilateral contact is an inequality constraint: its
 * accumulated normal multiplier stays >= 0, so it acts only while n.C < 0 (or while it still pushes).
 *
 * Replicated: every rank holds every contact of the job (allgathered when a detection changed them) and,
 * at each sweep, the positions of all their nodes (allgathered from the nodes' owners), projects them all
 * in the same order with the same numbers (one thread), and writes the results into its own copies of
 * those nodes (owned, static ghost and contact ghost). The copies then agree without a halo exchange, and
 * the results do not depend on the partition or the thread count. The cost is the contacts' projection on
 * every rank (a few hundred flops per contact) and one allgather of 3 doubles per contact node per sweep.
 *
 * The multipliers (lambda, three per contact) live for the (pseudo) step: zero at its start; when a
 * detection within the step rebuilds the set, a contact whose key was there keeps its multiplier and a new
 * key starts at zero. */
#ifndef PBNG_METHODS_PBD_CONTACT_PROJECTION_H
#define PBNG_METHODS_PBD_CONTACT_PROJECTION_H

#include "methods/pbd/constraints.h"
#include "problem/problem.h"
#include "core/state.h"

typedef struct {
  int version;                /* the contacts' version the list was made for (-1: none) */
  int32_t n;                  /* contacts of the job, in increasing key */
  int64_t (*key)[3];          /* [n] */
  pbng_weak_constraint *term; /* [n] node[]: indices into the node list below */
  double *lambda;             /* [3 n (+1)] lambda_n n + lambda_t per contact (pbng_project_weak) */
  int32_t nnodes;             /* distinct nodes of the job's contacts */
  int64_t *gid;               /* [nnodes] increasing: node index = position */
  int32_t *local;             /* [nnodes] this rank's copy (owned, static ghost or contact ghost), or -1 */
  double *w;                  /* [nnodes] inverse masses (the owners': 0 for prescribed and massless nodes) */
  double *x;                  /* [nnodes][3] positions */
  double *force;              /* [nnodes][3] work: the contacts' constraint forces (residual) */
  int32_t nmine;              /* nodes of the list owned here */
  int32_t *mine;              /* [nmine] their node indices, increasing */
  int32_t *from;              /* [nnodes] node index of the k-th position of the allgather (rank order) */
  int *counts, *displ;        /* [size], [size + 1]: the allgather's counts and offsets, in doubles */
  double *send, *recv;        /* [3 nmine], [3 nnodes] */
  PetscLogEvent ev_gather, ev_project; /* the per-sweep allgather of the positions (with the wait for the other ranks), the projections */
} pbng_contact_projection;

PetscErrorCode pbng_contact_projection_init(pbng_contact_projection *cp);
PetscErrorCode pbng_contact_projection_destroy(pbng_contact_projection *cp);

/* Collective. When a detection changed the contacts since the last call: the job's contacts gathered in
 * key order, their nodes, this rank's copies and the owners' inverse masses (inv_mass[nlocal], the
 * constraint sweep's), multipliers carried over by key. */
PetscErrorCode pbng_contact_projection_sync(pbng_contact_projection *cp, const pbng_problem *pb, const double *inv_mass);

/* Every multiplier to zero (the start of a (pseudo) step). */
void pbng_contact_projection_reset(pbng_contact_projection *cp);

/* Collective. Projects every contact in key order (Eq. 26-28) at the current positions and writes the
 * results into this rank's copies of their nodes. Call after a sync. */
PetscErrorCode pbng_contact_projection_sweep(pbng_contact_projection *cp, const pbng_projection *proj, pbng_problem *pb);

/* Collective. The contacts' share of XPBD's residuals (Sec. 6.2) at the current positions: each
 * contact whose vertex this rank owns appends its squared secondary residual to h2 (*nh of them), and
 * every owned node of force[nlocal][3] gets its contacts' constraint forces grad C^T lambda (Eq. 24). */
PetscErrorCode pbng_contact_projection_residual(pbng_contact_projection *cp, const pbng_projection *proj, const pbng_problem *pb, double *h2,
                                                int64_t *nh, double *force);

/* The multipliers as a checkpoint field named <prefix>_lambda_contact (the same values on every rank).
 * Collective (a sync first): on a restart the contact set must have been restored before. */
PetscErrorCode pbng_contact_projection_state(pbng_contact_projection *cp, const pbng_problem *pb, const double *inv_mass, const char *prefix,
                                             pbng_state_field *fields, int *n);

#endif
