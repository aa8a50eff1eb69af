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

/* ---- inverted tetrahedra (Sec. 4.1) ---- */

/* The seed's projection of an inverted element: with F = U diag(s) V^T (core/inversion.h
 * pbng_svd3_rotations: U, V rotations, s2 < 0 exactly when det F < 0), F' = U diag(s0, s1, max(|s2|, s_min)) V^T
 * ("negate the smallest singular value"; s_min > 0 also lifts a flat element, s2 = 0, which negation
 * leaves flat), and x' the positions with F' = Ds' B and the same centroid as x. Only when det F <= 0:
 * returns 1 and writes x', else returns 0 and copies x. */
int pbng_gpbd_tet_uninvert(const pbng_gpbd_tet_rest *r, const double x[4][3], double s_min, double xout[4][3]);

#endif
