/* GPBD's per-term update (issue 19; seed generalized-position-based-dynamics.txt Sec. 3.2, 4, App. A):
 * the local Newton solve of Eq. 19, the seed's Hessian modification (5 QR iterations + the Gershgorin
 * bound, Eq. 23) and exact eigenvalue clamping, the inverted-tetrahedron projection (Sec. 4.1).
 *
 * One force term i: n <= 6 nodes (x, 3n values, the current positions x = x~ + sum_j d_j, Eq. 6),
 * W = diag(w_a I_3) with w_a = dt^2 / m_a (Eq. 4; 0 for a prescribed node; quasistatic pseudo-time the
 * same with the pseudo step), the term's accumulated displacement d_i (3n; Eq. 5) and S = ds_i/dx (k x 3n)
 * evaluated at x and HELD FIXED during the solve (Sec. 3.2). The update (Eq. 18-19)
 *     min over dl in R^k of  phi(dl) = 1/2 |d_i + W S^T dl|^2_{W^-1} + U_i(x + W S^T dl),
 *     dd_i = W S^T dl,   then  d_i += dd_i,  x += dd_i   (Algorithm 1).
 * Derivatives (y = x + W S^T dl; W symmetric, so d/d dl of y is W S^T):
 *     grad phi = S W W^-1 (d_i + W S^T dl) + S W dU/dx(y) = S (d_i + W S^T dl + W dU/dx(y)),
 *     hess phi = S W S^T + S W d^2U/dx^2(y) W S^T.
 * (The W^-1 norm runs over the nodes with w_a > 0; there W S^T dl and, by Eq. 5, d_i vanish.)
 * At dl = 0 the gradient S (d_i + W dU/dx(x)) is S applied to the residual of Eq. 7, d_i + W grad U_i = 0:
 * the solve's fixed point is Eq. 7 projected on the strain directions.
 * Newton with the modified Hessian and an Armijo backtracking line search on phi; steps into U = +inf
 * (the log barrier, det F <= 0) are rejected like any step without sufficient decrease. Near the
 * minimiser, where the predicted decrease -grad.step is below PBNG_GPBD_ROUNDOFF_DECREASE |phi| (phi's
 * round-off, with margin), any step with a finite phi is accepted (phi alone resolves |grad phi| only to
 * ~sqrt(eps) relative; the gradient tolerance would otherwise be out of reach).
 * Pure functions, no allocation (arrays on the stack sized by the PBNG_GPBD_MAX_* bounds). */
#ifndef PBNG_CORE_GPBD_LOCAL_H
#define PBNG_CORE_GPBD_LOCAL_H

#include "core/gpbd_strain.h"

/* The energy of a term at positions y (3n), with dU/dy into grad (3n) and d^2U/dy^2 into hess (3n x 3n,
 * row-major, symmetric) when they are given. Returns +INFINITY outside the energy's domain (then grad and
 * hess are not written). */
typedef double (*pbng_gpbd_energy_fn)(const void *ctx, const double *y, double *grad, double *hess);

enum { PBNG_GPBD_MAX_NODES = 6, PBNG_GPBD_MAX_DOF = 18, PBNG_GPBD_MAX_K = 6 };
#define PBNG_GPBD_ROUNDOFF_DECREASE 1e-12

/* A force term as the local solve sees it: n nodes, k strain dimensions, the energy U(y) with its
 * gradient and (for the Hessian of phi) d^2U/dy^2 (pbng's materials, methods/gpbd/gpbd_terms.h; the seed's energies in tests/gpbd_seed_energy.h: tetrahedra exact, cloth
 * Gauss-Newton in the bending rows; a k = 1 XPBD constraint: grad C grad C^T / alpha, App. A). */
typedef struct {
  int nnodes, k;
  pbng_gpbd_energy_fn energy;
  const void *ctx;
} pbng_gpbd_term;

/* ---- making a symmetric k x k matrix positive definite (Sec. 4.2) ---- */

typedef enum {
  PBNG_GPBD_FIX_QR_GERSHGORIN = 0, /* the seed's: H + max(0, eps - bound) I, bound of Eq. 23 after 5 QR iterations */
  PBNG_GPBD_FIX_EIGEN_CLAMP = 1,   /* exact: V max(Lambda, eps) V^T */
  PBNG_GPBD_FIX_NONE = 2,          /* H as it is (Cholesky may fail: the step is then refused) */
  PBNG_GPBD_FIX_QR_GERSHGORIN_WHEN_INDEFINITE = 3, /* the seed's shift only when H - eps I has no Cholesky factor:
                                                      Eq. 23 is conservative and also shifts definite H (docs/gpbd.md) */
} pbng_gpbd_hessian_fix;

/* A = Q^T H Q after `iterations` unshifted QR iterations (A <- R Q with A = Q R, Householder), similar to H
 * and closer to diagonal. H and A k x k row-major (may alias), k <= PBNG_GPBD_MAX_DOF. */
void pbng_gpbd_qr_iterations(int k, int iterations, const double *H, double *A);

/* Eq. 23: lambda_min(A) >= min_i (a_ii - sum_{j != i} |a_ij|). */
double pbng_gpbd_gershgorin_bound(int k, const double *A);

/* The seed's modification: bound = Eq. 23 on 5 QR iterations of H, then H <- H + tau I with
 * tau = max(0, eps - bound) (the seed adds |bound| when bound < 0: eps = 0). Returns tau. */
double pbng_gpbd_shift_qr_gershgorin(int k, double eps, double *H);

/* H <- V max(Lambda, eps) V^T (core/dense.h dense_symmetric_eigen). Returns how many eigenvalues were raised. */
int pbng_gpbd_clamp_eigenvalues(int k, double eps, double *H);

/* Either of the above (or nothing), eps as given. */
void pbng_gpbd_fix_hessian(pbng_gpbd_hessian_fix fix, int k, double eps, double *H);

/* The same fix for n <= PBNG_GPBD_LANES matrices of size 6 x 6 at once (H[l] row-major, eps[l] each): the
 * seed's bound on SIMD lanes where H[l] is positive definite (pbng_gpbd_qr_gershgorin_bounds6), else its QR iterations
 * on SIMD lanes too (pbng_gpbd_qr_iterations6_lanes: those matrices bitwise pbng_gpbd_fix_hessian's); for the other
 * fixes pbng_gpbd_fix_hessian one matrix at a time. Equal to pbng_gpbd_fix_hessian up to round-off. */
enum { PBNG_GPBD_LANES = 16 };
void pbng_gpbd_fix_hessians6(pbng_gpbd_hessian_fix fix, int n, const double *eps, double (*H)[36]);

/* PBNG_GPBD_LANES symmetric 6 x 6 matrices on SIMD lanes: H[i][j][l] is lane l's entry (i, j), the lower triangle
 * (j <= i) used. */
typedef double pbng_gpbd_lanes6[6][6][PBNG_GPBD_LANES];

/* Newton steps of the lanes' 6 x 6 systems with active[l] at once: each H fixed (pbng_gpbd_fix_hessians6; H
 * overwritten, inactive lanes by the identity), then step = -H^-1 g by L D L^T on SIMD lanes (dense_spd_solve's
 * Cholesky up to round-off); ok[l] = 0 where the fixed H has a pivot <= 0 (no Cholesky factor; the step is then not
 * meaningful). step[.][l] and ok[l] of the inactive lanes are not meaningful. */
void pbng_gpbd_newton_steps6(pbng_gpbd_hessian_fix fix, const int *active, const double *eps, pbng_gpbd_lanes6 H, const double g[6][PBNG_GPBD_LANES],
                             double step[6][PBNG_GPBD_LANES], int *ok);

/* Eq. 23 after 5 QR iterations for n <= PBNG_GPBD_LANES symmetric positive definite 6 x 6 matrices, without
 * the QR iterations: for such A one unshifted QR step A = QR -> RQ equals two Cholesky LR steps A = L L^T ->
 * L^T L (A^2 = R^T R = (L M)(L M)^T with L^T L = M M^T; Householder's R differs by a +-1 diagonal similarity,
 * which the Gershgorin bound does not see), so 10 LR steps give the bound of 5 QR iterations. Computed on SIMD
 * lanes without square roots: A_k = S M S, sigma = S^2 diagonal; M = L D L^T (unit L) -> M' = L^T sigma L,
 * sigma' = D. spd[l] = 0 where a factorisation met a pivot <= 0 (H[l] not definite to round-off: bound[l] is
 * then not written; use pbng_gpbd_shift_qr_gershgorin). */
void pbng_gpbd_qr_gershgorin_bounds6(int n, const double (*H)[36], double *bound, int *spd);

/* pbng_gpbd_qr_iterations(6, iterations, H[m], A[m]) for m < n, PBNG_GPBD_QR_LANES matrices at a time on SIMD lanes
 * (the fix's fallback for the indefinite Hessians of pbng_gpbd_newton_steps6): each A[m] bitwise the scalar one (the same
 * operations in the same order on every lane, the reflection's sign by a per-lane select, a reflection skipped by one). */
enum { PBNG_GPBD_QR_LANES = 4 };
void pbng_gpbd_qr_iterations6_lanes(int n, int iterations, const double (*H)[36], double (*A)[36]);

/* ---- the local solve (Eq. 19) ---- */

typedef struct {
  int newton_max;            /* at most this many Newton steps (the seed's i_N; -gpbd_newton_max) */
  double gtol, rtol;         /* early exit when |grad phi| <= max(gtol, rtol |grad phi(0)|) */
  pbng_gpbd_hessian_fix fix; /* how hess phi is made positive definite */
  double eps;                /* smallest eigenvalue after the fix, relative to max_i |h_ii| */
  int line_search;           /* 1: Armijo backtracking on phi; 0: full Newton steps (App. A's XPBD step; halved only while U = +inf) */
  double armijo;             /* sufficient-decrease constant c1 */
  int max_backtracks;        /* halvings before the step is given up */
} pbng_gpbd_newton_options;

/* newton_max 20, gtol 0, rtol 1e-10, QR + Gershgorin, eps 1e-8, line search on, armijo 1e-4, 40 halvings. */
void pbng_gpbd_newton_defaults(pbng_gpbd_newton_options *o);

typedef enum {
  PBNG_GPBD_CONVERGED = 0,          /* the gradient tolerance was met */
  PBNG_GPBD_MAX_ITERATIONS = 1,     /* newton_max steps taken */
  PBNG_GPBD_LINE_SEARCH_FAILED = 2, /* no step gave sufficient decrease (dl is the last accepted one) */
  PBNG_GPBD_NOT_DESCENT = 3,        /* the (unmodified) Hessian was not positive definite or the direction not a descent */
  PBNG_GPBD_INVALID_START = 4,      /* U(x) not finite (an inverted log-barrier tetrahedron: un-invert it first) */
} pbng_gpbd_status;

typedef struct {
  pbng_gpbd_status status;
  int iterations;         /* Newton steps taken (accepted) */
  int decreased;          /* phi(dl) < phi(0), or no step was needed (up to round-off, see the line search) */
  double phi0, phi;       /* objective at dl = 0 and at exit */
  double grad0, grad;     /* |grad phi| at dl = 0 and at exit */
} pbng_gpbd_local_result;

/* Solves Eq. 19 for the term t at x (3n) with node weights w (n), displacement d (3n) and S (k x 3n,
 * row-major). Writes dl (k) and dd = W S^T dl (3n); res may be NULL. Returns res's status. */
pbng_gpbd_status pbng_gpbd_local_solve(const pbng_gpbd_term *t, const double *x, const double *w, const double *d, const double *S,
                                       const pbng_gpbd_newton_options *o, double *dl, double *dd, pbng_gpbd_local_result *res);

/* ---- one term's update around the local solve (docs/gpbd_solver.md, "One element's update") ---- */

/* What a term's update needs besides its positions (methods/gpbd/gpbd_step.h: any term; core/gpbd_tet4.h:
 * linear tetrahedra in closed form). */
typedef struct {
  pbng_gpbd_newton_options newton;
  int project;         /* d_i projected on col(W S^T) before the local solve (-gpbd_subspace_projection) */
  double uninvert_min; /* tetrahedra: s_min of the inverted-element projection (-gpbd_uninvert_min; < 0: none) */
} pbng_gpbd_step_options;

/* The multipliers mu of d's W^-1-orthogonal projection W S^T mu on col(W S^T): A mu = b with A = S W S^T
 * (k x k, row-major) and b = S d. regular = 0 (a prescribed node, w = 0) or A without a Cholesky factor: A's
 * pseudo-inverse (eigenvalues below 1e-12 of the largest dropped; b lies in A's range, so W S^T mu is the
 * projection all the same). */
void pbng_gpbd_subspace_multipliers(int k, const double *A, const double *b, int regular, double *mu);

/* The gradient floor of the local Newton (-gpbd_newton_max steps are not spent on round-off): |grad phi| =
 * |S (d + W S^T dl + W dU/dx)| cannot be resolved below the round-off of its terms, which cancel at the
 * minimiser: returns max(gtol, PBNG_GPBD_GRADIENT_ROUNDOFF max_r sum_j |S_rj| (|d_j| + w_j fa_j)), S k x 3n,
 * fa the nodes' force scales (a node's |dU/dx_a| below which it is round-off). */
#define PBNG_GPBD_GRADIENT_ROUNDOFF 2.2e-16
double pbng_gpbd_gradient_floor(int n, int k, const double *S, const double *d, const double *w, const double *fa, double gtol);

/* A linear tetrahedron's force scales fa (4) at a point with Green strain s: V |P|'s scale V (mu + |lambda|)
 * max(1, |F|^2) (k_shear, k_volume: the material's) times |g_a|_1 (P is a difference of terms of the moduli's
 * size, also near rest), |F|^2 = tr(2E + I). */
void pbng_gpbd_tet_force_scales(const pbng_gpbd_tet_rest *r, double k_shear, double k_volume, const double s[6], double fa[4]);

/* ---- inverted tetrahedra (Sec. 4.1) ---- */

/* The seed's projection of an inverted element: with F = U diag(s) V^T (core/inversion.h
 * pbng_svd3_rotations: U, V rotations, s2 < 0 exactly when det F < 0), F' = U diag(s0, s1, max(|s2|, s_min)) V^T
 * ("negate the smallest singular value"; s_min > 0 also lifts a flat element, s2 = 0, which negation
 * leaves flat), and x' the positions with F' = Ds' B and the same centroid as x. Only when det F <= 0:
 * returns 1 and writes x', else returns 0 and copies x. */
int pbng_gpbd_tet_uninvert(const pbng_gpbd_tet_rest *r, const double x[4][3], double s_min, double xout[4][3]);

/* That projection as a PBD move (not part of d_i): when det F <= 0, the nodes with w_a > 0 moved to x' and the
 * moves written to pre (3 per node; pre is not touched otherwise, nor at a prescribed node). */
void pbng_gpbd_tet_uninvert_moving(const pbng_gpbd_tet_rest *r, double s_min, const double w[4], double x[4][3], double pre[12]);

#endif
