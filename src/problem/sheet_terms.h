/* The sheet kinds' terms in the discrete problem (issue 18; docs/cloth.md): a tri3 membrane's energy
 * (core/membrane: thickness x area x Psi), a bend4 stencil's isometric bending energy (core/bending), a cloth6
 * stencil's strain-stiffening energy of the six-dimensional strain (core/cloth6, -sheet_model cloth6), per
 * corner their force, PBNG's SPD 3 x 3 block, the exact element Hessian for Newton, and the lumped mass.
 * An element is given by its kind, rest data (problem/geometry) and node row t into positions x. */
#ifndef PBNG_PROBLEM_SHEET_TERMS_H
#define PBNG_PROBLEM_SHEET_TERMS_H

#include "core/sheet_material.h"
#include "problem/geometry.h"

/* The element's energy at x. */
double pbng_sheet_element_energy(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *t, const double *x);

/* The element's energy gradient grad[a] = dE/dx_a for each corner (3 for tri3, 4 for bend4, 6 for cloth6); returns the energy. */
double pbng_sheet_element_gradient(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *t, const double *x,
                                   double (*grad)[3]);

/* Corner a's force f = -dE/dx_a and PBNG's block H (row-major, symmetric positive definite): for a
 * membrane pbng_membrane_node_block (S replaced by its positive part) plus a shift of 1e-2 of its mean
 * diagonal along the triangle's current normal, so that the block of a slack triangle (no stress: no
 * stiffness across the sheet) stays invertible (the force is unchanged: the equilibrium is the same); for
 * a stencil the exact block k_b Q_aa I; for a cloth6 stencil pbng_cloth6_node_terms's block (Gauss-Newton plus the
 * membrane rows' positive part) with the membrane's normal shift. H may be NULL. */
void pbng_sheet_node_terms(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *t, int a, const double *x,
                           double f[3], double H[9]);

/* The exact element Hessian (row 3a + i, column 3b + k; 9 x 9 for tri3, 12 x 12 for bend4, 18 x 18 for cloth6):
 * the membrane's and the cloth6 stencil's may be indefinite (compression, the strain's curvature), the bend4
 * stencil's k_b Q (x) I is positive semidefinite. */
void pbng_sheet_element_hessian(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *t, const double *x,
                                double *Ke);

/* The lumped mass of corner a: density x thickness x area / 3 for tri3 and a cloth6 stencil's triangle corners (a < 3),
 * 0 for bend4 and a cloth6 stencil's neighbours. */
double pbng_sheet_corner_mass(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, int a);

#endif
