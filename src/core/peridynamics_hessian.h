/* Second derivatives of the peridynamic membrane energies of core/peridynamics.h (seed
 * projective-peridynamics-membranes.txt; docs/peridynamics.md), for a Newton or PBNG solve of them.
 *
 * With the virtual bond y_perp held fixed, F_i of Eq. 15 is affine in the positions of vertex i and its
 * one-ring: dF = sum_p dy_p g_p^T over p = i, j_0 .. j_n-1, g_j = omega_j K^-T xi_j (K^-1 of Eq. 14),
 * g_i = -sum_j g_j. So the Hessian of W_i = V_i Psi(F_i) is G^T (V_i dP/dF) G with the constant G = dF/dy,
 * and the bending energy's (Eq. 42-43 as read in docs/peridynamics.md#bending) follows in closed form
 * from dF^-1 = -F^-1 dF F^-1. The chain through the moving normal (Eq. 13, pbng_pd_virtual_bond_gradient)
 * is not part of these Hessians, as it is not part of the force state (Eq. 9).
 *
 * Layout of the vertex Hessians: the n + 1 positions y_i, y_ring[0], .., y_ring[n-1] in this order, three
 * coordinates each, H[(3p + c) * N + 3q + e] = d^2 E / dy_p,c dy_q,e with N = 3 (n + 1) <= 51; the caller
 * provides H. A PSD projection of such an H: problem/psd_projection.h pbng_project_psd (LAPACK, n <= 81).
 * Pure functions, no allocation, no MPI. */
#ifndef PBNG_CORE_PERIDYNAMICS_HESSIAN_H
#define PBNG_CORE_PERIDYNAMICS_HESSIAN_H

#include "core/peridynamics.h"

/* dPdF[9 (3a + b) + 3c + d] = d P_ab / d F_cd = d^2 Psi / dF_ab dF_cd (major-symmetric) for J > 0.
 * Neo-Hookean (Eq. 36-37), P = 2 s0 F + v F^-T, v = 2 s1 (J - 1) J - 2 s0:
 *   2 s0 d_ac d_bd + J v'(J) F^-T_ab F^-T_cd - v F^-1_bc F^-1_da, v'(J) = 2 s1 (2 J - 1).
 * Stretching (Eq. 39-41), P = s0/3 (F F^T F - G G^T G), G = F^-T:
 *   s0/3 (d_ac C_db + F_ad F_cb + (F F^T)_ac d_bd + G_ad (G C^-1)_cb + (G G^T)_ac C^-1_db + (G G^T G)_ad G_cb). */
void pbng_pd_stress_derivative(const pbng_pd_material *m, const double F[9], double dPdF[81]);

/* The Hessian of W_i = V_i Psi(F_i) (Eq. 8, 15) in the positions y_i, y_ring with y_perp held fixed:
 * H_pq = V_i sum_bd dPdF[(c b), (e d)] g_p,b g_q,d for the blocks (p, c), (q, e). y_perp: the deformed virtual
 * bond, or NULL for the deformed fan's (Eq. 13; the Hessian is still the one with it held fixed).
 * Returns 0, or -1 (H zeroed) when J <= 0 or the deformed fan is degenerate. */
int pbng_pd_vertex_hessian(const pbng_pd_material *m, const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3],
                           const double y_perp[3], double *H);

/* The exact Hessian, y_perp held fixed (NULL: the deformed fan's), of
 *   E_b,i = V_i k_b / 2 sum_j omega_j |r_j|^2, r_j = F^-1 eta_j - xi_j (Eq. 42-43 as pbng reads them).
 * With A = F^-1, u_j = A eta_j: dr_j = A (d eta_j - dF u_j) = alpha_jp A dy_p, alpha_jp = s_jp - g_p . u_j,
 * s_jp = d eta_j / dy_p (1 for p = j, -1 for p = i), and
 *   H_pq = V_i k_b [S_pq A^T A - h_q Z_p^T - Z_q h_p^T],
 * S_pq = sum_j omega_j alpha_jp alpha_jq, Z_p = sum_j omega_j alpha_jp A^T r_j (= dE/dy_p / (V_i k_b)),
 * h_p = A^T g_p: the Gauss-Newton term and the one of r_j's second derivative
 * d^2 r_j[d, D] = -A dF A (D eta_j - DF u_j) - A DF A (d eta_j - dF u_j).
 * Returns E_b,i; +INFINITY (H zeroed) when F is singular or the deformed fan degenerate. */
double pbng_pd_bending_hessian(double k_b, const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3], const double y_perp[3],
                               double *H);

#endif
