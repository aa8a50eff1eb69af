/* The contact local step of projective peridynamics (issue 20; seed projective-peridynamics-membranes.txt
 * Sec. 6, Alg. 2, Eq. 46-53; docs/peridynamics.md#contact-local-step): after each global (SISSM) iteration the
 * sheet's positions y are projected to z, minimising 1/2 |z - y|^2 + mu sum_c B_c(z) over the pairs c of
 * primitives (vertex-triangle, edge-edge, vertex-obstacle) whose gap f(d) - xi is below dhat (Eq. 3, 47, 51),
 * by gradient steps of Eq. 49 bounded by Eq. 53, with additive CCD keeping every pair farther apart than the
 * thickness xi:
 *   1. every vertex moves from z_prev (the last projection's result, safe) towards z at most to its time of
 *      impact t_i = min over its pairs of the pair's ACCD time (Alg. 2 lines 4-17; the seed's threshold below
 *      which no clamp is made is 0 here: every t_i < 1 clamps);
 *   2. vertices are clamped to different fractions of their moves, so the configuration is checked: a pair
 *      closer than xi sends its vertices back to z_prev (repeated until none; z_prev is safe), which makes
 *      "no pair closer than the thickness" hold after every step, not only along common-time paths;
 *   3. one gradient step (Eq. 49, 53) and again from 1, -pd_contact_iterations times or until no vertex moves
 *      more than 1e-3 xi; a last 1-2 makes the result safe.
 * Pairs exclude primitives that share a vertex or whose vertices are joined by a mesh edge (a one-ring apart),
 * and a sheet is two-sided. The step runs on the whole surface, replicated on every rank (its positions
 * gathered once per call): exact and partition-independent, but O(surface) memory and work per rank — meant
 * for meshes up to ~1e5 sheet vertices; a surface-halo version (only the pairs near each rank's vertices) is
 * open. */
#ifndef PBNG_SOLVERS_PD_CONTACT_H
#define PBNG_SOLVERS_PD_CONTACT_H

#include <petscsys.h>
#include "core/contact_geometry.h"
#include "parallel/dmesh.h"

#define PBNG_PD_MAX_OBSTACLES 8

typedef struct {
  int on;             /* -pd_contact */
  double thickness;   /* xi (-pd_contact_thickness; 0: -pd_thickness, else the sheet's thickness) */
  double dhat;        /* the barrier's activation gap dhat of Eq. 3 (-pd_contact_dhat; 0: 4 xi) */
  double eps;         /* the minimal separation multiplier of Eq. 51 (-pd_contact_eps) */
  double mu;          /* the barrier weight of Eq. 47 (-pd_contact_mu) */
  int iterations;     /* gradient steps per projection at most (-pd_contact_iterations) */
  int nobstacles;     /* -pd_obstacle */
  pbng_obstacle obstacle[PBNG_PD_MAX_OBSTACLES];
} pbng_pd_contact_options;

/* What the last projection did (every rank has the same values). */
typedef struct {
  int64_t pairs;        /* pairs within the barrier's reach at the last gradient step */
  int64_t clamped;      /* vertices clamped by their time of impact (all passes) */
  int64_t reverted;     /* vertices sent back to z_prev by the check */
  int steps;            /* gradient steps taken */
  double min_distance;  /* the smallest pair distance after the projection (inf: no pair within reach) */
} pbng_pd_contact_stats;

typedef struct pbng_pd_contact pbng_pd_contact;

/* The sheet's surface (every tri3 of dm, all ranks'), gathered on every rank. xi: the thickness in effect.
 * Error (collective) when a pair of primitives at rest is not farther apart than xi (the thickness is too
 * large for the mesh), naming the pair. */
PetscErrorCode pbng_pd_contact_create(const pbng_dmesh *dm, const pbng_pd_contact_options *o, double xi, pbng_pd_contact **c);
PetscErrorCode pbng_pd_contact_destroy(pbng_pd_contact **c);

/* The safe state z_prev <- the positions x (a frame's start: the previous frame's positions). Collective. */
PetscErrorCode pbng_pd_contact_reset(pbng_pd_contact *c, const double *x);

/* Alg. 2: x (owned and ghost surface nodes, every rank alike) <- the projection of x; prescribed nodes keep
 * their positions (a pair of prescribed nodes alone is left as it is). z_prev <- the result. Collective. */
PetscErrorCode pbng_pd_contact_project(pbng_pd_contact *c, double *x, pbng_pd_contact_stats *st);

#endif
