/* Peridynamic membranes (issue 20; seed projective-peridynamics-membranes.txt, Sec. 3-5): the state-based
 * peridynamic force of one vertex's one-ring, made invertible for a single layer of triangles by a virtual
 * bond along the angle-weighted normal (Kirchhoff-Love, Eq. 13-15), and the seed's membrane materials
 * (compressible neo-Hookean Eq. 36-38, stretching model A_3 Eq. 39-41, bending Eq. 42-43 as read in
 * docs/peridynamics.md#bending).
 *
 * A vertex i with rest position X_i has n <= PBNG_PD_MAX_RING neighbours X_j, given in fan order: the
 * triangles around i are (i, j_k, j_k+1), k = 0 .. n-2, and (i, j_n-1, j_0) when the ring is closed
 * (interior vertices; boundary vertices have an open fan). The neighbours are i's bonds, xi_j = X_j - X_i,
 * with weights omega_j (the seed leaves the scalar state omega free; pbng takes 1 unless the caller gives
 * others). The virtual bond x_perp = thickness * n_i, n_i the normalised angle-weighted normal of the rest
 * fan (Eq. 13), enters K with weight 1 (Eq. 14); its deformed image y_perp = thickness * n_i', n_i' the
 * angle-weighted normal of the deformed fan (Eq. 13): it turns with the fan and never stretches.
 *
 * Energy: W = sum_i V_i Psi(F_i). Its derivative with y_perp held fixed is exactly the force state:
 * dW_i/dy_j = V_i T_i<xi_j>, dW_i/dy_i = -V_i sum_j T_i<xi_j>, T_i<xi> = omega P_i K_i^{-1} xi (Eq. 9), so the
 * internal force f = -grad W is the seed's Eq. 8 (its bond volume V_j taken into omega). The part of the
 * gradient through the moving normal, (dW_i/dy_perp) . (dy_perp/dy), is dropped by the seed; it vanishes
 * exactly when the rest and deformed fans are flat, and pbng_pd_virtual_bond_gradient adds it where wanted
 * (docs/peridynamics.md#what-is-exact).
 * Pure functions, no allocation, no MPI. */
#ifndef PBNG_CORE_PERIDYNAMICS_H
#define PBNG_CORE_PERIDYNAMICS_H

#define PBNG_PD_MAX_RING 16

/* Rest data of one vertex, built once (pbng_pd_rest_init). */
typedef struct {
  int n, closed;                     /* neighbours, whether the fan closes */
  double thickness;                  /* xi of Eq. 13: mid-surface to surface */
  double volume;                     /* V_i of W_i = V_i Psi(F_i) */
  double omega[PBNG_PD_MAX_RING];    /* bond weights omega_ij */
  double bond[PBNG_PD_MAX_RING][3];  /* rest bonds xi_j = X_j - X_i */
  double perp[3];                    /* rest virtual bond x_perp (Eq. 13) */
  double K_inv[9];                   /* K_i^{-1} (Eq. 14), row-major */
} pbng_pd_rest;

/* The seed's membrane materials; s1 is used by the neo-Hookean model only. */
typedef enum {
  PBNG_PD_NEOHOOKEAN = 0, /* Eq. 36: s0 (I1 - 3 - ln I3) + s1 (sqrt(I3) - 1)^2 */
  PBNG_PD_STRETCHING = 1, /* Eq. 39-40: s0 sum_m A_3(lambda_m), A_3(s) = ((s^4 - 1)/4 + (s^-2 - 1)/2) / 3 */
} pbng_pd_material_kind;

typedef struct {
  pbng_pd_material_kind kind;
  double s0, s1;
} pbng_pd_material;

/* Eq. 13: v = thickness * norm(sum_J theta_J n_J) over the fan's triangles (x_i, ring[k], ring[k+1])
 * (pbng_vertex_normal_add). Returns 0, or -1 when the sum is zero (degenerate fan); v is then zero. */
int pbng_pd_virtual_bond(const double x_i[3], const double (*ring)[3], int n, int closed, double thickness, double v[3]);

/* The chain through the moving normal (Eq. 13), which the seed drops: given g = dW/dy_perp, adds
 * (dy_perp/dy)^T g to grad_i and grad_ring, with y_perp = thickness s / |s|, s = sum_J theta_J n_J,
 * d theta_J / d e1 = -(n_J x e1^) / |e1|, d theta_J / d e2 = (n_J x e2^) / |e2| (e1, e2 the triangle's edges
 * from y_i, angle theta_J between them) and d(n_J . q) / d e1 = e2 x p, d / d e2 = p x e1,
 * p = (I - n_J n_J^T) q / |e1 x e2|. A force state's gradient plus this one is the exact gradient of W_i
 * (and of E_b,i). Degenerate triangles (skipped by Eq. 13 too) and a zero s add nothing. */
void pbng_pd_virtual_bond_gradient(const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3], const double g[3],
                                   double grad_i[3], double (*grad_ring)[3]);

/* Fills r: bonds, weights (omega NULL: all 1), the virtual bond and K^{-1} (Eq. 14). Returns 0, or -1 for
 * n outside [2, PBNG_PD_MAX_RING], a degenerate fan or a K with det K <= 1e-12 (largest diagonal)^3. */
int pbng_pd_rest_init(const double X_i[3], const double (*X_ring)[3], int n, int closed, const double *omega, double thickness,
                      double volume, pbng_pd_rest *r);

/* Eq. 15: F = (sum_j omega_j eta_j xi_j^T + y_perp x_perp^T) K^{-1}, eta_j = y_j - y_i, for a given y_perp. */
void pbng_pd_deformation_gradient_with(const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3], const double y_perp[3],
                                       double F[9]);

/* Eq. 15 with y_perp from the deformed fan (Eq. 13); y_perp may be NULL, else it receives the virtual
 * bond used. Returns 0, or -1 when the deformed fan is degenerate (y_perp then zero). */
int pbng_pd_deformation_gradient(const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3], double F[9], double y_perp[3]);

/* Psi(F) and P = dPsi/dF (P may be NULL). Neo-Hookean (Eq. 36-37): P = 2 s0 (F - F^-T) + 2 s1 (J - 1) J F^-T;
 * +INFINITY (P untouched) for J <= 0. Stretching (Eq. 39-41), without an SVD: sum_m lambda_m^4 = tr(C^2),
 * sum_m lambda_m^-2 = tr(C^-1), so Psi = s0/3 ((tr C^2 - 3)/4 + (tr C^-1 - 3)/2), P = s0/3 (F C - F^-T C^-1);
 * +INFINITY for J <= 0 as well (A_3 grows without bound as a stretch goes to 0). */
double pbng_pd_energy_density(const pbng_pd_material *m, const double F[9], double P[9]);

/* The seed's split P = P+ + P- (Eq. 20, 38, 41) in matrix form, U diag(.) V^T = F's SVD being implied:
 * neo-Hookean P+ = 2 s0 F + 2 s1 J cof F, P- = -(2 s0 + 2 s1 J) F^-T; stretching P+ = s0/3 F C,
 * P- = -s0/3 F^-T C^-1. For J > 0. */
void pbng_pd_stress_split(const pbng_pd_material *m, const double F[9], double P_plus[9], double P_minus[9]);

/* Eq. 9: T = omega P K^{-1} xi, given PK = P K^{-1}. */
void pbng_pd_force_state(const double PK[9], double omega, const double xi[3], double T[3]);

/* W_i = V_i Psi(F_i) at positions y_i, y_ring, and its gradient with y_perp held fixed (see above):
 * grad_ring[j] = V_i T_i<xi_j>, grad_i = -sum_j grad_ring[j]. The force on a vertex is minus the sum of the
 * gradients it receives from its own and its neighbours' one-rings (Eq. 8). grad_perp, if not NULL,
 * receives dW_i/dy_perp = V_i P_i K_i^{-1} x_perp (the virtual bond's force state, for a caller that wants
 * the chain through the normal). Returns W_i; +INFINITY for an inverted F or a degenerate deformed fan,
 * the gradients then zero. grad_i and grad_ring may be NULL (energy only). */
double pbng_pd_vertex_energy_gradient(const pbng_pd_material *m, const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3],
                                      double grad_i[3], double (*grad_ring)[3], double grad_perp[3]);

/* Bending (Sec. 5.2), read as the non-affine residual of the one-ring (docs/peridynamics.md#bending):
 *   E_b,i = V_i k_b / 2 sum_j omega_j |F_i^{-1} (y_j - y_i) - (x_j - x_i)|^2,
 * zero for every affine map of a flat ring and every rigid motion, positive when the ring bends. Its
 * gradient in y_j with y_perp held fixed (exact, F_i's dependence on y_j included):
 *   dE/dy_j = V_i k_b omega_j F^-T (r_j - B xi_j), r_j = F^-1 eta_j - xi_j, B = sum_k omega_k r_k (K^-1 F^-1 eta_k)^T,
 * whose first term k_b F^-T (F^-1 eta_j - xi_j) is the seed's Eq. 43 (with F^-T for its F^-1 on xi_j);
 * dE/dy_i = -sum_j dE/dy_j; grad_perp (may be NULL) = dE/dy_perp = -V_i k_b F^-T B x_perp. y_perp: the deformed virtual bond to use, or NULL for the deformed fan's (Eq. 13).
 * Returns E_b,i; +INFINITY (gradients zero) when F is singular or the deformed fan degenerate. */
double pbng_pd_bending_energy_gradient(double k_b, const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3],
                                       const double y_perp[3], double grad_i[3], double (*grad_ring)[3], double grad_perp[3]);

#endif
