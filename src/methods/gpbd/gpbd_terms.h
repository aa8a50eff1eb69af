/* GPBD's force terms on pbng's own materials (issue 19; methods/gpbd/gpbd.c): a linear tetrahedron's energy
 * U(x) = V Psi(F(x)) with the problem's material (core/material.h: Psi, P; core/stress_derivative.h: the
 * exact dP/dF of every kind), so that GPBD minimises the same incremental potential as Newton and PBNG.
 * Given to the local solve (core/gpbd_local.h) as a pbng_gpbd_energy_fn:
 *     U = V Psi(F),   dU/dx_ai = V (P g_a)_i,   d^2U/dx_ai dx_bj = V sum_pq dP_ip/dF_jq g_ap g_bq,
 * g_a = dN_a/dX (core/element.h pbng_tet_shape_gradient from B = Dm^-1), F = Ds B. Exact, not projected
 * (the local solve makes its k x k Hessian definite). Every pbng material is finite for det F <= 0, so
 * the energy is +INFINITY only for a non-finite value (diverged positions).
 * (The kernels' own Eq. 20 / 21 models, tests/gpbd_seed_energy.h: Eq. 20 is pbng's `neohookean_log`, Eq. 21
 * `neohookean` up to a constant.)
 * Sheet terms (issue 18's tri3 membranes and bend4 stencils, problem/sheet_terms.h) with the problem's own
 * sheet energies, so a GPBD run minimises the objective of PBNG and Newton on sheets too:
 *   - a membrane triangle (n = 3, k = 3): the strain is the membrane part of the seed's fundamental-form
 *     strain (Eq. 22), s = (sqrt(I_xx) - 1, I_xy / sqrt(I_xx I_yy), sqrt(I_yy) - 1), I = F^T F (core/gpbd_strain.h
 *     with no neighbours: its bending rows vanish); U the triangle's StVK membrane energy;
 *   - a bending stencil (n = 4, k = 3): s = v = sum_a K_a x_a, the stencil's curvature vector (core/bending.h),
 *     linear in x (S = K^T (x) I_3), and U = k_b/2 * 3/(A0 + A1) |v|^2 exactly: bending is a function of this
 *     3-dim strain alone;
 *   - the seed's six-dimensional cloth stencil (n = 6, k = 6; -sheet_model cloth6): a triangle and the vertex across
 *     each edge, s = (s_x, s_a, s_y, l^2 (II - II0)) (Sec. 4.2, core/gpbd_strain.h) and U its strain-stiffening
 *     energy (core/cloth6.h): the seed's own term, with the energy PBNG and Newton minimise too.
 * Pure, no allocation. */
#ifndef PBNG_METHODS_GPBD_GPBD_TERMS_H
#define PBNG_METHODS_GPBD_GPBD_TERMS_H

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

/* ---- sheet terms ---- */

#include "problem/geometry.h"
#include "core/sheet_material.h"

typedef struct {
  const pbng_sheet_material *mat;
  pbng_element_kind kind; /* PBNG_ELEMENT_TRI3, PBNG_ELEMENT_BEND4 or PBNG_ELEMENT_CLOTH6 */
  const pbng_sheet_rest *rest;
  double normal[3];       /* tri3: the local solve's reference unit normal at its start (pbng_triangle_normal), or 0 */
} pbng_gpbd_sheet_term;

/* pbng_gpbd_energy_fn of a sheet element: ctx a pbng_gpbd_sheet_term, y 9 (tri3) or 12 (bend4) values.
 * A membrane triangle whose normal has turned against the reference normal (n(y) . normal <= 0) has
 * U = +INFINITY: the StVK membrane energy depends on I = F^T F alone, so the triangle mirrored in its own
 * plane (a 3 x 2 F has no det to tell) is another zero-energy minimiser along the strain directions, which a
 * local solve with large W = h^2 M^-1 (weak inertia) reaches in one step and which tears the sheet
 * (docs/gpbd_solver.md#sheets). The barrier keeps each local solve in its start's basin. */
double pbng_gpbd_sheet_energy(const void *ctx, const double *y, double *grad, double *hess);

/* Sets t->normal from the triangle's corners x (tri3, cloth6; a bend4: nothing). */
void pbng_gpbd_sheet_reference_normal(pbng_gpbd_sheet_term *t, const double (*x)[3]);

/* The sheet element's strain s (k: 3, or 6 for cloth6) at x (its n = 3, 4 or 6 nodes) and S = ds/dx (k x 3n,
 * row-major), as in the module comment. */
void pbng_gpbd_sheet_strain(const pbng_gpbd_sheet_term *t, const double (*x)[3], double *s, double *S);

/* A scale of each corner's force |dU/dx_a| (its entries' sum) at x, into fa (3 or 4), below which the force
 * is round-off: the local solve's gradient floor (methods/gpbd/gpbd.c). Membrane: thickness A max|C| max(1, |F|^2)
 * |g_a|_1; stencil: k_b 3/(A0 + A1) |K_a| sum_b |K_b| |x_b|_1; cloth6: A max(k) max(1, |F|^2) |g_a|_1 on the
 * triangle's corners plus A k_bend / l^3 max(1, |F|^2) on every node (the II rows). */
void pbng_gpbd_sheet_force_scales(const pbng_gpbd_sheet_term *t, const double (*x)[3], double *fa);

#endif
