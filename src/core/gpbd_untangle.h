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
 * no tetrahedron of the cluster has J <= 0 after a sweep (or the sweeps run out). A sweep that leaves as many inverted
 * as before it has stalled: a fold that no one-node move leaves (a feasible place for one node, inside all its
 * tetrahedra's face planes, need not exist while its neighbours stay put); then the fold's movable nodes (those within two
 * rings of tetrahedra of the inverted ones) are moved together by Newton steps on (U1) over all of them (U3): one delta
 * for the cluster, delta^2 = eps (eps - J_min) from
 * its least J (as Escobar et al.; recomputed each step, falling as J_min rises, and lowered tenfold whenever a step
 * decreased (U1) by less than 1e-3 of it: converged for that delta), the Hessian assembled from the
 * tetrahedra's 12 x 12 ones, each made positive semidefinite (its 9 x 9 Hessian in F with negative eigenvalues
 * clamped to 0), plus a shift, solved by block-Jacobi preconditioned conjugate gradients, Armijo backtracking.
 * Scale- and rotation-invariant; masses do not enter (a position projection, as PBD's).
 * Serial and deterministic: the same input in the same order gives bitwise the same result. Pure; the joint step's
 * work space comes from the caller. */
#ifndef PBNG_CORE_GPBD_UNTANGLE_H
#define PBNG_CORE_GPBD_UNTANGLE_H

#include <stddef.h>
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
  double *work;                   /* pbng_gpbd_untangle_work_size doubles for the joint step (U3); NULL: no joint step */
} pbng_gpbd_cluster;

typedef struct {
  double eps;    /* (U2)'s eps (J below it regularised) */
  int sweeps;    /* Gauss-Seidel sweeps at most */
  int max_rings; /* (methods/gpbd/gpbd_cluster.h) when tetrahedra stay inverted, projected again with the nodes of 1, 2, ...
                    rings of tetrahedra around them movable too, at most this many rings */
  int joint_steps; /* (U3) Newton steps at most in one call, spent after stalled sweeps (0: none, node-wise only) */
} pbng_gpbd_untangle_options;

/* The doubles of the joint step's work space for a cluster of nnodes nodes and ntets tetrahedra. */
size_t pbng_gpbd_untangle_work_size(int32_t nnodes, int32_t ntets);

/* (U1)'s term of one tetrahedron at F, V |F|^2 / (3 h(J)^(2/3)) (+inf when delta = 0 and J <= 0), and its derivative in
 * F into P (may be NULL). */
double pbng_gpbd_untangle_tet_term(const double F[9], double volume, double delta2, double P[9]);

/* The term's second derivative in F (9 x 9, row-major, F's entries row-major), exact (not made definite). */
void pbng_gpbd_untangle_tet_hessian_F(const double F[9], double volume, double delta2, double H[81]);

/* The term's gradient (12: node a's 3 at 3a) and Hessian (12 x 12, row-major) in the positions x of a tetrahedron; with
 * psd the F-Hessian's negative eigenvalues are clamped to 0 first (a positive semidefinite 12 x 12). */
void pbng_gpbd_untangle_tet_gradient(const pbng_gpbd_tet_rest *rest, const double x[4][3], double delta2, double grad[12]);
void pbng_gpbd_untangle_tet_hessian(const pbng_gpbd_tet_rest *rest, const double x[4][3], double delta2, int psd, double H12[144]);

/* Node a's part of (U1) — the terms of its tetrahedra — with a moved by z, delta^2 = delta2, and its gradient in a's
 * position (grad may be NULL). */
double pbng_gpbd_untangle_node_objective(const pbng_gpbd_cluster *c, int32_t a, const double z[3], double delta2, double grad[3]);

/* Minimises (U1) over the movable nodes of c (c->x updated in place) until no tetrahedron of the cluster has J <= 0.
 * Returns the tetrahedra of the cluster left with J <= 0. */
int32_t pbng_gpbd_untangle(const pbng_gpbd_cluster *c, const pbng_gpbd_untangle_options *o);

#endif
