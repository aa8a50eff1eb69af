/* Isometric bending of thin sheets (issue 18; seed position-based-continuous-materials.txt Sec. 4.3,
 * after Bergou et al. 2006): per interior edge a stencil of the two triangles sharing it, x0 x1 the
 * shared edge, x2 the third corner of the one triangle and x3 of the other. At rest, with the stencil's
 * edges e0 = x0x1, e1 = x1x2, e2 = x2x0, e3 = x0x3, e4 = x3x1 and c_jk the cotangent of the angle
 * between e_j and e_k (c01, c02: the angles at x1 and x0 in triangle (x0, x1, x2); c04, c03: at x1 and x0
 * in (x0, x1, x3)),
 *   K = (c01 + c04, c02 + c03, -c01 - c02, -c03 - c04),   Q = 3 / (A0 + A1) K^T K   (4 x 4),
 *   E_b(x) = k_b / 2 sum_ij Q_ij x_i . x_j = k_b / 2 * 3 / (A0 + A1) |v|^2,  v = sum_i K_i x_i.
 * The energy is quadratic in x (its Hessian k_b Q (x) I_3 is exact and positive semi-definite, and is
 * PBNG's block as it is), invariant under rigid motions (sum_i K_i = 0), and zero on a flat rest shape
 * (v = 0 for any planar stencil). Pure functions. Derivation and checks: docs/cloth.md#bending. */
#ifndef PBNG_CORE_BENDING_H
#define PBNG_CORE_BENDING_H

typedef struct {
  double K[4];  /* the cotangent weights above */
  double scale; /* 3 / (A0 + A1) */
} pbng_bending_stencil;

/* The stencil of rest corners X[4][3] (order above). Returns 0, or -1 when either triangle is
 * degenerate (twice its area below 1e-12 times its longest edge squared); *s is then zeroed. */
int pbng_bending_rest(const double X[4][3], pbng_bending_stencil *s);

/* Q_ij = scale K_i K_j. */
double pbng_bending_q(const pbng_bending_stencil *s, int i, int j);

/* E_b at x (bending stiffness k_b). */
double pbng_bending_energy(const pbng_bending_stencil *s, double k_b, const double x[4][3]);

/* Energy gradient per corner, grad[i] = k_b sum_j Q_ij x_j = k_b scale K_i v; returns the energy. */
double pbng_bending_gradient(const pbng_bending_stencil *s, double k_b, const double x[4][3], double grad[4][3]);

#endif
