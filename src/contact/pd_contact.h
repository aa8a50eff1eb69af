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
 * Distributed with a surface halo: each rank handles the pairs that have a vertex it owns. Per projection, the
 * owners send their vertices' positions (z_prev and y) to the ranks whose region (the box of their owned
 * vertices' neighbourhoods, swept from z_prev to y) comes within the projection's reach of the vertex's
 * neighbourhood; every later change of an owned vertex goes to the same ranks (one exchange per clamp, revert
 * pass and gradient step), and the step's scalars (the step bound's alpha_0 and |y - z|, whether any vertex was
 * sent back, the largest move) are reduced over the ranks. Pairs are sorted by global vertex ids and the revert
 * check is a Jacobi pass, so each vertex's result does not depend on the partition. The surface's topology
 * and rest positions are replicated and the per-vertex arrays are indexed by surface vertex (memory O(surface)
 * per rank, ~150 bytes a vertex); the positions sent, the pairs and the work are O(owned surface + halo), plus
 * O(ranks) per projection for the regions' boxes (an MPI_Allgather) and the tests against them.
 * Built on the contact code's shared pieces: the bodies of pbng_body_labels (contact/surface.h), the broad phase of
 * contact/box_hash.h, point-to-point exchanges as halo plans (pbng_halo_create_from_one_side, parallel/halo.h).
 * Pairs come from a candidate list made by the broad phase at z_prev and kept over projections and frames while no
 * pair outside it can have come within xi + dhat (each body's common translation leaves its pairs' distances as they
 * are; the pairs of two bodies are made again alone when only bodies closing on each other require it); a projection
 * runs in stages, each holding the pairs that can come within xi + dhat on the segments z_prev -> end (end = y, then z
 * after each gradient step), kept over the gradient steps while they cover the new segments; the results are bitwise
 * those of a fresh broad phase each time.
 * Pairs exclude primitives that share a vertex or whose vertices are joined by a mesh edge (a one-ring apart),
 * and primitives of one body (a connected component of the elements) closer than the rest exclusion (default xi + dhat,
 * the barrier's reach) in the rest configuration: such pairs are neighbours in the material, and would feel the
 * barrier at rest (at the seed's resolutions the edges are shorter than xi + dhat, so two-ring pairs would).
 * A sheet is two-sided. */
#ifndef PBNG_CONTACT_PD_CONTACT_H
#define PBNG_CONTACT_PD_CONTACT_H

#include <petscsys.h>
#include "core/contact_geometry.h"
#include "parallel/dmesh.h"
#include "parallel/reduce.h"

#define PBNG_PD_MAX_OBSTACLES 8

typedef struct {
  int on;             /* -pd_contact */
  double thickness;   /* xi (-pd_contact_thickness; 0: -pd_thickness, else the sheet's thickness) */
  double dhat;        /* the barrier's activation gap dhat of Eq. 3 (-pd_contact_dhat; 0: 4 xi) */
  double eps;         /* the minimal separation multiplier of Eq. 51 (-pd_contact_eps) */
  double mu;          /* the barrier weight of Eq. 47 (-pd_contact_mu) */
  int iterations;     /* gradient steps per projection at most (-pd_contact_iterations) */
  double rest_exclusion; /* pairs of one body closer than this at rest are left out (-pd_contact_rest_exclusion; < 0: xi + dhat) */
  double kappa;       /* the barrier's weight in the frame's energy, kappa sum_c B(f(d_c) - xi) (-pd_contact_kappa, J/m^2; 0: the
                         seed's local step alone, the barrier only in the projection's Eq. 47); > 0: the projection clamps and
                         reverts only (no gradient steps) */
  int fresh_pairs;    /* every stage's pairs from a fresh broad phase, no candidate list kept (-pd_contact_fresh_pairs; tests: the same
                         positions, slower) */
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
  int64_t active_max;   /* the most surface vertices one rank held (owned, ghosts, halo) */
  int64_t surface;      /* the surface's vertices */
} pbng_pd_contact_stats;

typedef struct pbng_pd_contact pbng_pd_contact;

/* The barrier's activation gap in effect: o->dhat, or 4 xi when it is 0 (the seed's choice). */
double pbng_pd_contact_dhat(const pbng_pd_contact_options *o, double xi);

/* The rest exclusion in effect: o->rest_exclusion, or xi + dhat when it is negative. */
double pbng_pd_contact_rest_exclusion(const pbng_pd_contact_options *o, double xi, double dhat);

/* The sheet's surface (every tri3 of dm, all ranks': its topology on every rank). xi: the thickness in effect.
 * Error (collective) when a pair of primitives at rest is not farther apart than xi (the thickness is too
 * large for the mesh), naming the pair. */
PetscErrorCode pbng_pd_contact_create(const pbng_dmesh *dm, const pbng_pd_contact_options *o, double xi, pbng_pd_contact **c);
PetscErrorCode pbng_pd_contact_destroy(pbng_pd_contact **c);

/* The safe state z_prev <- the positions x of the owned nodes (a frame's start: the previous frame's positions;
 * x: local rows, only the owned ones read). Not collective. */
PetscErrorCode pbng_pd_contact_reset(pbng_pd_contact *c, const double *x);

/* Alg. 2: x <- the projection of x (local rows: the owned ones read; the owned and ghost surface nodes written,
 * the ghosts with their owners' results); prescribed nodes keep their positions (a pair of prescribed nodes
 * alone is left as it is). z_prev <- the result. Collective. */
PetscErrorCode pbng_pd_contact_project(pbng_pd_contact *c, double *x, pbng_pd_contact_stats *st);

/* The safe state z_prev <- x as pbng_pd_contact_reset, and the pairs made afresh there (those within xi + dhat of x):
 * after a restart, so that pbng_pd_contact_barrier sees the pairs the uninterrupted run's last projection held
 * within reach. Collective. */
PetscErrorCode pbng_pd_contact_restart(pbng_pd_contact *c, const double *x);

/* The barrier in the frame's energy (-pd_contact_kappa; docs/peridynamics.md#the-barrier-in-the-frames-residual):
 * E_B = kappa sum_c B(f(d_c) - xi) over the last projection's pairs (Eq. 3, 48, 51; every pair within xi + dhat of its
 * result is among them) at the positions x (local rows, the owned ones read; the other vertices of the pairs are
 * exchanged). Adds, on the owned free surface nodes (local rows): grad += dE_B/dx (kappa B' f' w_s dir, Eq. 48-49 with
 * the rescale's chain), diag += the Gershgorin row sums of the rank-one part kappa B'' f'^2 (w dir)(w dir)^T of each
 * pair's Hessian (the other parts, B' f'' and B' f' d^2 d, are not positive: left out), vertex_energy += kappa B of
 * the pairs holding the node; energy += this rank's share (each pair counted by the owner of its smallest vertex).
 * Any of them may be NULL. Collective. */
PetscErrorCode pbng_pd_contact_barrier(pbng_pd_contact *c, const double *x, double *grad, double *diag, double *vertex_energy, pbng_exact_sum *energy);

#endif
