/* The material's part of GPBD's local Hessian for linear tetrahedra, on SIMD lanes (issue 43; seed
 * generalized-position-based-dynamics.txt Eq. 19, Sec. 4.1): for PBNG_GPBD_LANES elements at once,
 *     K_rs = dF_r : dP/dF(F) : dF_s        (r, s = 1..6, the strain's directions dF_r = F0 Y_r G: core/gpbd_tet4.h)
 * so that hess phi = S W S^T + V K, and the stress P itself (grad phi = S d + S W S^T dl + V dF_r : P). The same
 * exact second derivative as core/stress_derivative.h, written as directional derivatives of P instead of the 9 x 9
 * dP/dF and its two contractions (what the scalar path forms):
 *  - P = s F + v cof F (neohookean, neohookean_log, stable_neohookean; material.h pbng_stress_scalars):
 *        K_rs = s (dF_r : dF_s) + s' (F : dF_r)(F : dF_s) + v' (cof F : dF_r)(cof F : dF_s) + v dF_r : dcof[dF_s]
 *    with dcof[B] the derivative of cof F in the direction B (bilinear in F and B), s' = 2 ds/dI with I = F : F
 *    (stable neo-Hookean only; 0 otherwise), v' = dv/dJ;
 *  - StVK, P = F S:  K_rs = (dF_r S) : dF_s + 2 mu sym(F^T dF_r) : sym(F^T dF_s) + lambda (F : dF_r)(F : dF_s).
 * Equal to the 9 x 9 contraction up to round-off (tests/test_gpbd_tet4.c: 1e-12 relative). The corotated model
 * (dR/dF from the polar decomposition) has no such form here: pbng_gpbd_tet4_lane_hessians_supported says so,
 * and the caller contracts pbng_stress_derivative. Pure, no allocation. */
#ifndef PBNG_CORE_GPBD_TET4_MATERIAL_H
#define PBNG_CORE_GPBD_TET4_MATERIAL_H

#include "core/gpbd_local.h"
#include "core/material.h"

/* 1 when pbng_gpbd_tet4_lane_hessians and pbng_gpbd_tet4_lane_stress compute the material's K (every kind but the corotated one). */
int pbng_gpbd_tet4_lane_hessians_supported(pbng_material_kind kind);

/* gram[r][s] = dF_r : dF_s of one element (its directions are fixed during its solve: formed once, at its start). */
void pbng_gpbd_tet4_direction_gram(const double dF[6][9], double gram[6][6]);

/* K[r][s][l] (symmetric) for every lane l from F[p][l] (lane l's F, row-major p = 3i + j), dF[p][r][l] (lane l's dF_r)
 * and gram[r][s][l], lane l's pbng_gpbd_tet4_direction_gram (the split materials' s dF_r : dF_s). Every lane is computed (unused
 * lanes: give them a finite F). */
void pbng_gpbd_tet4_lane_hessians(const pbng_material *m, const double F[9][PBNG_GPBD_LANES], const double dF[9][6][PBNG_GPBD_LANES],
                                  const double gram[6][6][PBNG_GPBD_LANES], double K[6][6][PBNG_GPBD_LANES]);

/* P[p][l] = the first Piola-Kirchhoff stress at lane l's F (material.h pbng_first_piola up to round-off: P = s F + v cof F,
 * StVK F S), every lane. */
void pbng_gpbd_tet4_lane_stress(const pbng_material *m, const double F[9][PBNG_GPBD_LANES], double P[9][PBNG_GPBD_LANES]);

/* U[l] = Psi(F) at lane l's F, bitwise pbng_energy_density's value (the same operations in the same order, material.c;
 * log per lane through libm, only where want[l]: want NULL is every lane), for every kind but the corotated one (its
 * polar decomposition: returns 0 and leaves U alone; 1 otherwise). */
int pbng_gpbd_tet4_lane_energy(const pbng_material *m, const double F[9][PBNG_GPBD_LANES], const int *want, double U[PBNG_GPBD_LANES]);

#endif
