/* GPBD's force terms on pbng's own materials (issue 19; solvers/gpbd.c): a linear tetrahedron's energy
 * U(x) = V Psi(F(x)) with the problem's material (core/material.h: Psi, P; core/stress_derivative.h: the
 * exact dP/dF of every kind), so that GPBD minimises the same incremental potential as Newton and PBNG.
 * Given to the local solve (core/gpbd_local.h) as a pbng_gpbd_energy_fn:
 *     U = V Psi(F),   dU/dx_ai = V (P g_a)_i,   d^2U/dx_ai dx_bj = V sum_pq dP_ip/dF_jq g_ap g_bq,
 * g_a = dN_a/dX (core/element.h pbng_tet_shape_gradient from B = Dm^-1), F = Ds B. Exact, not projected
 * (the local solve makes its k x k Hessian definite). Every pbng material is finite for det F <= 0, so
 * the energy is +INFINITY only for a non-finite value (diverged positions).
 * (The kernels' own Eq. 20 / 21 models, core/gpbd_energy.h, are not pbng materials yet.) Pure, no
 * allocation. */
#ifndef PBNG_SOLVERS_GPBD_TERMS_H
#define PBNG_SOLVERS_GPBD_TERMS_H

#include "core/gpbd_local.h"
#include "core/material.h"

/* Callback context: the material and the element's rest shape (B, V). */
typedef struct {
  const pbng_material *mat;
  const pbng_gpbd_tet_rest *rest;
} pbng_gpbd_material_tet;

/* pbng_gpbd_energy_fn of a linear tetrahedron of a pbng material: ctx a pbng_gpbd_material_tet, y 12 values
 * (the 4 nodes' positions), grad 12, hess 144 (row-major, hess[12 (3a + i) + 3b + j]). */
double pbng_gpbd_material_tet_energy(const void *ctx, const double *y, double *grad, double *hess);

#endif
