/* The joint projection of a cluster of inverted tetrahedra (issue 43 item 2; docs/gpbd_solver.md#inversion).
 * The seed (Sec. 4.1) projects an inverted element's non-inversion constraint |F| > 0 on its own ("negate the smallest
 * singular value ... preserving the center of mass"): in a fold of a few elements sharing faces these projections
 * undo each other. Here the cluster's nodes are moved together until every tetrahedron touching them has J = det F > 0,
 * by node-wise minimisation of the untangling objective of Escobar et al. (2003, "Simultaneous untangling and smoothing
 * of tetrahedral meshes"), written with F relative to the rest shape:
 *
 *     K(x) = sum_e V_e |F_e|^2 / (3 h(J_e)^(2/3)),   h(J) = (J + sqrt(J^2 + 4 delta^2)) / 2                   (U1)
 *
 * (|F|^2 / (3 J^(2/3)) >= 1 is the inverse mean-ratio quality of F, 1 for a rotation times a scaling; h(J) > 0 for
 * every J and h(J) -> J for J >> delta, so K is finite on tangled configurations and large where J <= 0). Gauss-Seidel
 * over the movable nodes: a node's part of (U1) is minimised by Newton steps with Armijo backtracking (U2), with
 * delta^2 = eps (eps - J_min) from the node's own tetrahedra (J_min their least J; delta = 0 when J_min >= eps), until
 * no tetrahedron of the cluster has J <= 0 after a sweep (or the sweeps run out). Scale- and rotation-invariant; masses do
 * not enter (a position projection, as PBD's).
 * Serial and deterministic: the same input in the same order gives bitwise the same result. Pure, no allocation. */
#ifndef PBNG_CORE_GPBD_UNTANGLE_H
#define PBNG_CORE_GPBD_UNTANGLE_H

#include <stdint.h>
#include "core/gpbd_strain.h"

/* A cluster: its nodes (indices 0..nnodes) and the tetrahedra touching its movable nodes. */
typedef struct {
  int32_t nnodes, ntets;
  double *x;                      /* [nnodes][3] positions (in and out) */
  const uint8_t *movable;         /* [nnodes] 1: the projection moves it */
  const int32_t (*tet)[4];        /* [ntets] node indices, in the order of B's rows */
  const pbng_gpbd_tet_rest *rest; /* [ntets] */
  const int32_t *adj_start;       /* [nnodes + 1] node a's tetrahedra: adj[adj_start[a] .. adj_start[a + 1]) */
  const int32_t *adj;             /* 4 tet + slot */
} pbng_gpbd_cluster;

typedef struct {
  double eps;    /* (U2)'s eps (J below it regularised) */
  int sweeps;    /* Gauss-Seidel sweeps at most */
  int max_rings; /* (methods/gpbd/gpbd_cluster.h) when tetrahedra stay inverted, projected again with the nodes of 1, 2, ...
                    rings of tetrahedra around them movable too, at most this many rings */
} pbng_gpbd_untangle_options;

/* Node a's part of (U1) — the terms of its tetrahedra — with a moved by z, delta^2 = delta2, and its gradient in a's
 * position (grad may be NULL). */
double pbng_gpbd_untangle_node_objective(const pbng_gpbd_cluster *c, int32_t a, const double z[3], double delta2, double grad[3]);

/* Minimises (U1) over the movable nodes of c (c->x updated in place) until no tetrahedron of the cluster has J <= 0.
 * Returns the tetrahedra of the cluster left with J <= 0. */
int32_t pbng_gpbd_untangle(const pbng_gpbd_cluster *c, const pbng_gpbd_untangle_options *o);

#endif
