/* Exact second derivatives for the Newton baseline (issue 4): dP/dF of each material and the 12x12
 * stiffness of a linear tetrahedron. Plain C, no allocation. */
#ifndef PBNG_CORE_STRESS_DERIVATIVE_H
#define PBNG_CORE_STRESS_DERIVATIVE_H

#include "core/element.h"
#include "core/material.h"

/* D[9 (3i + j) + 3k + l] = d P_ij / d F_kl = d^2 Psi / dF_ij dF_kl (Eq. 45 in full). For the corotated
 * model dR/dF comes from the polar decomposition (undefined where tr(S) I - S, F = R S, is singular). */
void pbng_stress_derivative(const pbng_material *m, const double F[9], double D[81]);

/* The same for elastoplastic StVK (material.h pbng_stvk_subtract_plastic): only the geometric term
 * delta_ik S_lj changes, S = C : (E - eps_p) (eps_p: Voigt 6-vector; NULL: pbng_stress_derivative). */
void pbng_stress_derivative_plastic(const pbng_material *m, const double F[9], const double ep[6], double D[81]);

/* K[12 (3a + i) + 3b + k] = d^2 (V Psi) / dx_ai dx_bk for the tetrahedron with B = Dm^{-1}, volume V. */
void pbng_tet_stiffness(const double D[81], const double B[9], double V, double K[144]);

/* H[3 r + s] = d^2 (V Psi) / dx_ar dx_as = V sum_jl D[9 (3 r + j) + 3 s + l] g_j g_l, g = dN_a/dX: node a's
 * diagonal 3x3 block of pbng_tet_stiffness (VBD's per-vertex element Hessian, -vbd_exact_block). */
void pbng_tet_node_block(const double D[81], const double g[3], double V, double H[9]);

/* H (3x3, symmetric) <- Q max(Lambda, 0) Q^T from its eigendecomposition (core/dense.h's Jacobi); left
 * as it is when positive definite by Sylvester's criterion (most blocks: no eigendecomposition). */
void pbng_clamp_psd3(double H[9]);

#endif
