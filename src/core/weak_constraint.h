/* Weak constraints (Sec. 4.1): springs between two interpolated points,
 *   PE^wc = 1/2 C^T K_c C (Eq. 18),   C = sum_j w0_j y_j - sum_j w1_j y_j (Eq. 19),
 * and the contacts built from them during a run (issue 17): a surface vertex against the closest point
 * of a triangle (the same form), or against a fixed anchor on an obstacle (C = y_v - target, one node),
 * either as the paper's spring or unilateral (energy 1/2 k_n min(n.C, 0)^2: active only while the
 * vertex is on the wrong side, K_c = k_n n n^T then, else no energy, force or stiffness).
 * with non-negative weights summing to one on each side and K_c = k_n n n^T + k_t (I - n n^T)
 * (tau_0 tau_0^T + tau_1 tau_1^T = I - n n^T), or k I when isotropic (k_n = k_t = k).
 * A node j enters with the signed weight a_j = w0_j - w1_j, so that C = sum_j a_j y_j; its force is
 * f_j = -a_j K_c C and its Hessian block d^2 PE / dy_j^2 = a_j^2 K_c (positive semidefinite, used
 * as is in PBNG's 3x3 matrix, the weak-constraint term of Eq. 37-38). Pure functions, no MPI. */
#ifndef PBNG_CORE_WEAK_CONSTRAINT_H
#define PBNG_CORE_WEAK_CONSTRAINT_H

#include <stdint.h>

enum { PBNG_WC_MAX_NODES = 8 }; /* up to 4 nodes per side (a tetrahedron's barycentric weights) */

typedef struct {
  int nnodes;                          /* distinct nodes, 2..PBNG_WC_MAX_NODES */
  int64_t node[PBNG_WC_MAX_NODES];     /* node indices (global or local, as the caller uses them) */
  double a[PBNG_WC_MAX_NODES];         /* signed weights a_j = w0_j - w1_j */
  double K[9];                         /* 3x3 stiffness K_c, symmetric positive semidefinite */
  double k_n, k_t, n[3];               /* K_c = k_n n n^T + k_t (I - n n^T) (isotropic: k_n = k_t, n = e_x) */
  double target[3];                    /* a fixed point subtracted from C (an obstacle contact's anchor; else 0) */
  int unilateral;                      /* 1: energy only while n.C < 0 (a contact that pushes, never pulls; k_t = 0) */
} pbng_weak_constraint;

/* Builds a constraint from the two sides' nodes and weights (n0 + n1 <= 8; a node on both sides
 * is merged). Stiffness: isotropic k when normal == NULL, else k_n along the unit normal and k_t
 * across it. Returns NULL on success, else a message naming the problem (negative weight, weights
 * not summing to one within 1e-12, negative stiffness, zero normal, too many nodes, fewer than two
 * distinct nodes). */
const char *pbng_weak_constraint_init(int n0, const int64_t *nodes0, const double *w0, int n1, const int64_t *nodes1, const double *w1,
                                      double k_n, double k_t, const double normal[3], pbng_weak_constraint *c);

/* The nodes of n constraints as rows rows[n][PBNG_WC_MAX_NODES], -1 in each row's unused slots (the form of element
 * rows, for the node -> constraint adjacencies and graphs built from both). */
void pbng_weak_constraint_node_rows(int64_t n, const pbng_weak_constraint *c, int32_t *rows);

/* Sets the stiffness K_c = k_n n n^T + k_t (I - n n^T) from k_n, k_t >= 0 and a unit normal n. */
void pbng_weak_constraint_set_stiffness(pbng_weak_constraint *c, double k_n, double k_t, const double n[3]);

/* C(y) (Eq. 19, minus target); y is a flat [n][3] position array indexed by the constraint's node[] values. */
void pbng_weak_constraint_violation(const pbng_weak_constraint *c, const double *y, double C[3]);
/* The stiffness in effect at y: K_c, or for a unilateral constraint K_c while n.C < 0 and 0 otherwise.
 * Returns 0 when it is zero (an inactive unilateral constraint), else 1. */
int pbng_weak_constraint_stiffness_at(const pbng_weak_constraint *c, const double *y, double K[9]);
/* 1/2 C^T K C (one term of Eq. 18; unilateral: with the stiffness in effect). */
double pbng_weak_constraint_energy(const pbng_weak_constraint *c, const double *y);
/* Force -dPE/dy_j on the constraint's j-th node (j = 0..nnodes-1) and, when H is given, the
 * Hessian block a_j^2 K (the stiffness in effect). */
void pbng_weak_constraint_node_force(const pbng_weak_constraint *c, const double *y, int j, double f[3], double H[9]);

#endif
