/* Membrane terms of thin sheets (issue 18; seed position-based-continuous-materials.txt Sec. 4.1, 4.3):
 * a 3-node triangle in 3-D with linear shape functions, its rest shape projected to its own plane, a
 * 3 x 2 deformation gradient F, the Green strain E = (F^T F - I) / 2 and the Saint Venant-Kirchhoff
 * plane-stress law S = C E (Eq. 4) with an orthotropic elasticity tensor C (Sec. 4.3; isotropic as its
 * special case). Energy of a triangle: thickness x rest area x Psi, Psi = E : C E / 2 (Eq. 5).
 * Per node: the force (Eq. 6-7, P = F S), PBNG's SPD 3 x 3 block (the analogue of the paper's Eq. 36-38
 * for a 3 x 2 F: the stress S in the geometric term replaced by its positive part) and the exact 9 x 9
 * Hessian for Newton. Pure functions, no allocation. Derivations: docs/cloth.md#membranes. */
#ifndef PBNG_CORE_MEMBRANE_H
#define PBNG_CORE_MEMBRANE_H

/* A membrane material: C in Voigt form on (E_xx, E_yy, 2 E_xy), x the weft and y the warp direction
 * of the triangle's local frame, and the sheet's thickness (the energy's factor). */
typedef struct {
  double C[3][3];
  double thickness;
} pbng_membrane_material;

/* The seed's orthotropic tensor (Sec. 4.3) with k_weft, k_warp (Young's moduli along weft and warp),
 * k_shear (the in-plane shear modulus) and the Poisson ratios nu_weft, nu_warp:
 *   C = 1 / (1 - nu_weft nu_warp) [[k_weft, c, 0], [c, k_warp, 0], [0, 0, k_shear (1 - nu_weft nu_warp)]],
 *   c = (k_weft nu_warp + k_warp nu_weft) / 2.
 * The seed prints C_12 = k_weft nu_warp and C_21 = k_warp (a misprint: an energy needs a symmetric C,
 * and the standard orthotropic plane-stress law has C_21 = k_warp nu_weft, equal to C_12 by the
 * reciprocity k_weft nu_warp = k_warp nu_weft); c is the mean of the two, exact when the parameters
 * are reciprocal. Returns NULL, or a message naming the impossible parameter (a modulus or the
 * thickness not positive and finite, a Poisson ratio not in [0, 1), C not positive definite); *m is
 * then unchanged. */
const char *pbng_membrane_orthotropic(double k_weft, double k_warp, double k_shear, double nu_weft, double nu_warp, double thickness,
                                      pbng_membrane_material *m);

/* Isotropic StVK membrane (plane stress) of Young's modulus E and Poisson ratio nu: the orthotropic one
 * with k_weft = k_warp = E, nu_weft = nu_warp = nu, k_shear = E / (2 (1 + nu)) = mu; then
 * C E = lambda' tr(E) I + 2 mu E with the plane-stress lambda' = E nu / (1 - nu^2). nu in [0, 0.5). */
const char *pbng_membrane_isotropic(double E, double nu, double thickness, pbng_membrane_material *m);

/* Rest data of one triangle: its rest area and the shape gradients g[a] (dN_a/dX in the local frame,
 * 2-vectors) of its corners. The local frame: e1 the weft axis projected onto the rest triangle's plane
 * and normalised, e2 = n x e1 (n the rest normal (X1 - X0) x (X2 - X0) normalised); where the weft axis
 * is within 1e-6 of the normal, e1 is the first edge's direction. */
typedef struct {
  double area;
  double g[3][2];
} pbng_membrane_rest;

/* Returns 0, or -1 for a degenerate rest triangle (twice its area below 1e-12 times its longest edge
 * squared) or a zero weft axis; *r is then zeroed. */
int pbng_membrane_rest_shape(const double X[3][3], const double weft[3], pbng_membrane_rest *r);

/* F = sum_a x_a g_a^T (3 x 2, row-major F[row][column]). */
void pbng_membrane_deformation(const double x[3][3], const pbng_membrane_rest *r, double F[3][2]);

/* The second Piola-Kirchhoff stress S = C E (2 x 2 symmetric) at F; returns Psi = E : C E / 2. */
double pbng_membrane_stress(const pbng_membrane_material *m, const double F[3][2], double S[2][2]);

/* Energy of the triangle at positions x: thickness * area * Psi. */
double pbng_membrane_energy(const pbng_membrane_material *m, const pbng_membrane_rest *r, const double x[3][3]);

/* Energy gradient per corner: grad[a] = thickness area P g_a, P = F S (Eq. 6-7; the internal force on
 * corner a is -grad[a]). Returns the energy. */
double pbng_membrane_gradient(const pbng_membrane_material *m, const pbng_membrane_rest *r, const double x[3][3], double grad[3][3]);

/* PBNG's block of corner a (row-major 3 x 3, symmetric positive semi-definite):
 *   H_aa = thickness area [ (g_a^T S+ g_a) I + F B_a^T C B_a F^T ],
 * S+ the positive part of S (its negative eigenvalues set to zero), B_a the 3 x 2 Voigt map of g_a
 * ([[g_x, 0], [0, g_y], [g_y, g_x]]). The exact block has S in place of S+: it is indefinite under
 * compression (a slack membrane buckles), the modified one is not, and equals it while S is positive
 * semi-definite. Along the normal only g_a^T S+ g_a acts: a slack triangle gives no normal stiffness
 * (inertia, bending or a neighbour under tension must). */
void pbng_membrane_node_block(const pbng_membrane_material *m, const pbng_membrane_rest *r, const double x[3][3], int a, double H[9]);

/* Corner a's energy gradient grad = thickness area P g_a and, when H is given, its PBNG block as above, from
 * one evaluation of F and S (what a node visit needs). */
void pbng_membrane_node_terms(const pbng_membrane_material *m, const pbng_membrane_rest *r, const double x[3][3], int a, double grad[3], double H[9]);
/* The exact Hessian, H[3a + i][3b + j] = thickness area [ (g_a^T S g_b) delta_ij + (F B_a^T C B_b F^T)_ij ]. */
void pbng_membrane_hessian(const pbng_membrane_material *m, const pbng_membrane_rest *r, const double x[3][3], double H[9][9]);

#endif
