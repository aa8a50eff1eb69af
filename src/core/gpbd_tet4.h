/* GPBD's update of linear tetrahedra in closed form (issue 43; seed generalized-position-based-dynamics.txt
 * Sec. 3.2, 4.1): the update of the general path (methods/gpbd/gpbd_step.h: the inverted-element projection,
 * the subspace projection of d_i, the local solve of Eq. 17-19 with its Hessian fix, line search and early
 * exit), equal to it up to round-off, with every product of the 6 x 12 strain Jacobian S written through
 * 3 x 3 matrices instead of the generic term's 12 x 12 energy Hessian.
 *
 * With the rest shape-function gradients g_a = dN_a/dX (constant), F = sum_a x_a g_a^T and the Green
 * strain's entries s_r = E_pq (r = (p, q): xx, yy, zz, yz, xz, xy; core/gpbd_strain.h), the rows of S at node a
 * are (Sec. 4.1)
 *     S_r[a] = dE_pq/dx_a = F Y_r g_a,     Y_r = (e_p e_q^T + e_q e_p^T) / 2,
 * so with W = diag(w_a I) (Eq. 4), G = sum_a w_a g_a g_a^T and dl in R^6, L = sum_r dl_r Y_r (symmetric):
 *     (W S^T dl)_a = w_a F L g_a                                                    (Eq. 18)
 *     F(x + W S^T dl) = F(x) + F L G      (F in F L G at the point where S was taken: S held fixed, Sec. 3.2)
 *     (S v)_r = (F Y_r) : sum_a v_a g_a^T                          (any nodal v, e.g. S d)
 *     (S W S^T)_rs = tr(Y_r C Y_s G) = (F Y_r G) : (F Y_s),   C = F^T F
 * and the gradient and Hessian of phi (Eq. 19, core/gpbd_local.h) in the directions dF_r = F Y_r G:
 *     grad phi = S d + (S W S^T) dl + V dF_r : P(F_y)
 *     hess phi = S W S^T + V dF_r : dP/dF(F_y) : dF_s       (core/stress_derivative.h, any material)
 * Everything else (the projection's pseudo-inverse when nodes are prescribed, the gradient floor, the fixes,
 * Armijo backtracking, the statuses) is the general path's, through the same core functions.
 *
 * A list of elements is solved PBNG_GPBD_LANES at a time in lockstep: each lane holds one element's local
 * Newton; grad phi (with P), the material's part of hess phi (core/gpbd_tet4_material.h), the Hessian fix
 * (pbng_gpbd_newton_steps6: the seed's 5 QR iterations as 10 Cholesky LR steps) and the line search's trials of phi
 * (Psi per lane) run on SIMD lanes across them, and a lane takes the next element of the list as soon as its solve
 * ends. The elements' set-up (gather, F, the directions, S W S^T, the subspace projection, S d, the gradient floor)
 * is computed PBNG_GPBD_LANES elements at a time on the lanes too, into a batch the lanes take their next elements
 * from, with the scalar set-up's sums bitwise. Lanes are independent: an element's result does not depend on its lane
 * or neighbours (ranks and threads give bitwise the same results). Pure, no allocation. */
#ifndef PBNG_CORE_GPBD_TET4_H
#define PBNG_CORE_GPBD_TET4_H

#include <stdint.h>
#include "core/gpbd_local.h"
#include "core/material.h"

/* One tetrahedron's constant data, laid out for the sweep (an array over the elements). */
typedef struct {
  int32_t node[4];         /* local node numbers, in the order of B's rows */
  pbng_gpbd_tet_rest rest; /* B = Dm^-1 (its rows dN_1..3/dX; dN_0/dX = -their sum) and the rest volume */
} pbng_gpbd_tet4_element;

/* What a sweep's tetrahedra read: plain arrays, indexed by node or by element row (the caller's order of the rows of
 * elem, d, dd and pre: element numbers, or the GS form's sweep order, methods/gpbd/gpbd_layout.h). */
typedef struct {
  const pbng_material *mat;
  const pbng_gpbd_step_options *opt;
  double h2;                           /* w_a = h2 inv_mass[node] (Eq. 4: h^2 / m_a) */
  const double *x;                     /* [nodes][3] current positions */
  const double *inv_mass;              /* [nodes] 1/m, 0 at prescribed nodes */
  const pbng_gpbd_tet4_element *elem;  /* [elements] */
  const double *d;                     /* element e's d_i: d[stride e + 3a + k] */
  int stride;                          /* values per element in d, dd and pre (>= 12) */
} pbng_gpbd_tet4_sweep;

/* The updates of elements list[0..n) (list NULL: first, first + 1, ..., first + n - 1), each at x as it is
 * (the caller moves nothing in between: the elements share no node, or all are solved from the same x): dd and
 * pre of element e into dd[stride e ...] and pre[stride e ...], as pbng_gpbd_term_step writes them (the values
 * past 12 zeroed). Returns the local Newton steps taken. */
long long pbng_gpbd_tet4_steps(const pbng_gpbd_tet4_sweep *sw, const int32_t *list, int32_t first, int32_t n, double *dd, double *pre);

/* ---- the closed forms (exposed for the test) ---- */

/* E_r = F Y_r (r in the strain's order): S_r[a] = E_r g_a. */
void pbng_gpbd_tet4_strain_maps(const double F[9], double E[6][9]);

/* S W S^T (6 x 6, row-major) from the strain maps E_r and the directions dF_r = E_r G. */
void pbng_gpbd_tet4_inertia_matrix(const double E[6][9], const double dF[6][9], double A[36]);

#endif
