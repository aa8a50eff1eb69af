#include "core/gpbd_tet4.h"
#include <math.h>
#include <string.h>
#include "core/element.h"
#include "core/mat3.h"
#include "core/gpbd_tet4_material.h"
#include "core/stress_derivative.h"

/* ---- the closed forms ---- */

void pbng_gpbd_tet4_strain_maps(const double F[9], double E[6][9])
{
  for (int r = 0; r < 6; ++r) { /* F Y_r = (F e_p e_q^T + F e_q e_p^T) / 2: F's column p / 2 into column q, and back */
    const int p = pbng_gpbd_green_entry[r][0], q = pbng_gpbd_green_entry[r][1];
    memset(E[r], 0, sizeof(E[r]));
    for (int i = 0; i < 3; ++i) {
      E[r][3 * i + q] += 0.5 * F[3 * i + p];
      E[r][3 * i + p] += 0.5 * F[3 * i + q];
    }
  }
}

void pbng_gpbd_tet4_inertia_matrix(const double E[6][9], const double dF[6][9], double A[36])
{
  for (int r = 0; r < 6; ++r)
    for (int s = 0; s <= r; ++s) A[6 * r + s] = A[6 * s + r] = mat3_ddot(dF[r], E[s]); /* tr(Y_r C Y_s G) */
}

/* L = sum_r dl_r Y_r (symmetric 3 x 3). */
static void multiplier_matrix(const double dl[6], double L[9])
{
  L[0] = dl[0], L[4] = dl[1], L[8] = dl[2];
  L[5] = L[7] = 0.5 * dl[3];
  L[2] = L[6] = 0.5 * dl[4];
  L[1] = L[3] = 0.5 * dl[5];
}

/* M = sum_a v_a g_a^T (v nodal, 12 values). */
static void nodal_outer(const double v[12], const double g[4][3], double M[9])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) M[3 * i + j] = v[i] * g[0][j] + v[3 + i] * g[1][j] + v[6 + i] * g[2][j] + v[9 + i] * g[3][j];
}

/* (S v)_r = E_r : sum_a v_a g_a^T. */
static void strain_apply(const double E[6][9], const double g[4][3], const double v[12], double Sv[6])
{
  double M[9];
  nodal_outer(v, g, M);
  for (int r = 0; r < 6; ++r) Sv[r] = mat3_ddot(E[r], M);
}

/* W S^T dl (Eq. 18): node a's w_a F L g_a. */
static void subspace_displacement(const double F[9], const double w[4], const double g[4][3], const double dl[6], double out[12])
{
  double L[9], FL[9];
  multiplier_matrix(dl, L);
  mat3_mul(F, L, FL);
  for (int a = 0; a < 4; ++a) {
    double v[3];
    mat3_vec(FL, g[a], v);
    for (int k = 0; k < 3; ++k) out[3 * a + k] = w[a] * v[k];
  }
}

/* mu with A mu = b for the 6 x 6 positive semidefinite A = S W S^T and b = S d in A's range, as
 * pbng_gpbd_subspace_multipliers returns it up to null(A), which W S^T maps to 0 (so W S^T mu, the projection,
 * is the same): L D L^T with diagonal pivoting, stopped where the largest remaining pivot is below 1e-12 of A's
 * largest diagonal entry (a prescribed node, w = 0: two or three of them make A singular), the remaining
 * multipliers 0. No square roots, and no eigen decomposition (the general path's pseudo-inverse). */
static void semidefinite_solve(const double A[36], const double b[6], double mu[6])
{
  double S[6][6], d[6], y[6];
  int perm[6] = {0, 1, 2, 3, 4, 5}, rank = 0;
  memcpy(S, A, sizeof(S));
  double top = 0.0;
  for (int i = 0; i < 6; ++i) top = A[7 * i] > top ? A[7 * i] : top; /* fmax (top is never NaN) */
  for (int j = 0; j < 6; ++j, ++rank) {
    int p = j; /* the largest remaining diagonal entry of the Schur complement */
    for (int i = j + 1; i < 6; ++i)
      if (S[i][i] > S[p][p]) p = i;
    if (!(S[p][p] > 1e-12 * top)) break;
    if (p != j) { /* symmetric swap of rows and columns j and p (with the factor's columns done) */
      for (int k = 0; k < 6; ++k) {
        const double t = S[j][k];
        S[j][k] = S[p][k], S[p][k] = t;
      }
      for (int k = 0; k < 6; ++k) {
        const double t = S[k][j];
        S[k][j] = S[k][p], S[k][p] = t;
      }
      const int t = perm[j];
      perm[j] = perm[p], perm[p] = t;
    }
    d[j] = S[j][j];
    const double r = 1.0 / d[j];
    for (int i = j + 1; i < 6; ++i) /* the Schur complement, then column j of L */
      for (int k = j + 1; k <= i; ++k) S[i][k] = S[k][i] = S[i][k] - S[i][j] * r * S[k][j];
    for (int i = j + 1; i < 6; ++i) S[i][j] *= r;
  }
  for (int i = 0; i < rank; ++i) { /* L y = P b, D z = y, L^T mu = z on the leading rank rows */
    y[i] = b[perm[i]];
    for (int k = 0; k < i; ++k) y[i] -= S[i][k] * y[k];
  }
  for (int i = rank - 1; i >= 0; --i) {
    y[i] /= d[i];
    for (int k = i + 1; k < rank; ++k) y[i] -= S[k][i] * y[k];
  }
  for (int i = 0; i < 6; ++i) mu[perm[i]] = i < rank ? y[i] : 0.0;
}

/* mu with A mu = b by L D L^T without pivoting (the general path's Cholesky, where every node moves). Returns
 * nonzero when a pivot is not above 1e-12 of A's largest diagonal entry (then semidefinite_solve). */
static int regular_solve(const double A[36], const double b[6], double mu[6])
{
  double L[6][6], d[6], r[6], top = 0.0;
  for (int i = 0; i < 6; ++i) top = A[7 * i] > top ? A[7 * i] : top; /* fmax (top is never NaN) */
  for (int j = 0; j < 6; ++j) {
    double dj = A[7 * j];
    for (int k = 0; k < j; ++k) dj -= L[j][k] * L[j][k] * d[k];
    if (!(dj > 1e-12 * top)) return -1;
    d[j] = dj, r[j] = 1.0 / dj;
    for (int i = j + 1; i < 6; ++i) {
      double v = A[6 * i + j];
      for (int k = 0; k < j; ++k) v -= L[i][k] * L[j][k] * d[k];
      L[i][j] = v * r[j];
    }
  }
  for (int i = 0; i < 6; ++i) {
    mu[i] = b[i];
    for (int k = 0; k < i; ++k) mu[i] -= L[i][k] * mu[k];
  }
  for (int i = 5; i >= 0; --i) {
    mu[i] *= r[i];
    for (int k = i + 1; k < 6; ++k) mu[i] -= L[k][i] * mu[k];
  }
  return 0;
}

static int all_moving(const double w[4]) { return w[0] > 0 && w[1] > 0 && w[2] > 0 && w[3] > 0; }

/* ---- one lane: one element's update ---- */

/* LANE_GRADIENT: waits for grad phi at its dl and the exit tests; LANE_STEP: waits for hess phi, its fix and the step */
typedef enum { LANE_EMPTY = 0, LANE_GRADIENT, LANE_STEP, LANE_DONE } lane_state;

typedef struct {
  int32_t e;
  lane_state state;
  int moving, solved;    /* a node moves; the local solve ran (U finite at its start) */
  int iterations;        /* accepted Newton steps */
  double w[4], g[4][3], V;
  double F0[9];          /* F where S was taken (after the inverted-element projection) */
  double Fx[9];          /* F where the solve starts (after the subspace projection's move) */
  double dF[6][9];       /* F0 Y_r G: F's change per unit dl_r (Eq. 18 through F); also across lanes in tet4_lanes */
  double d[12];          /* the (projected) displacement the solve starts from */
  double drift[12];      /* the subspace projection's move (d minus its projection) */
  double pre[12];        /* the inverted-element projection's move */
  double gtol, tol;      /* the gradient floor; the exit tolerance */
  double dl[6], Fy[9], phi;
} tet4_lane;

/* The lanes, and what the gradients and Hessians read across lanes (SIMD; [...][l] is lane l's). */
typedef struct {
  tet4_lane lane[PBNG_GPBD_LANES];
  double dF[9][6][PBNG_GPBD_LANES];  /* dF[p][r][l]: lane l's dF[r][p] */
  double gram[6][6][PBNG_GPBD_LANES]; /* dF_r : dF_s */
  double A[6][6][PBNG_GPBD_LANES];   /* S W S^T */
  double Sd[6][PBNG_GPBD_LANES];     /* S d, d the projected displacement */
  double V[PBNG_GPBD_LANES];         /* the rest volume */
  double dl[6][PBNG_GPBD_LANES];     /* the multipliers and F_y of the lanes a phase works on (others: stale, finite) */
  double Fy[9][PBNG_GPBD_LANES];
  double P[9][PBNG_GPBD_LANES];      /* P(F_y) */
  double grad[6][PBNG_GPBD_LANES];   /* grad phi at dl */
  double Dl[PBNG_GPBD_LANES][81];     /* lane l's dP/dF at its F_y (the corotated model) */
  double D[9][9][PBNG_GPBD_LANES];   /* the same across lanes */
} tet4_lanes;

/* phi (Eq. 19) at dl, with F_y into Fy: the inertia 1/2 sum_{w_a > 0} |d_a + (W S^T dl)_a|^2 / w_a in positions, as
 * the general path sums it (in the strain's 6 dimensions, q0/2 + S d . dl + dl.A dl/2, its terms cancel to
 * round-off far above phi's when dl is large: w small), plus V Psi(F_y), F_y = F_x + sum_r dl_r dF_r; +INFINITY
 * where Psi is not finite. */
static double objective(const pbng_gpbd_tet4_sweep *sw, const tet4_lane *ln, const double dl[6], double Fy[9])
{
  double dd[12], q = 0.0;
  subspace_displacement(ln->F0, ln->w, (const double(*)[3])ln->g, dl, dd);
  for (int v = 0; v < 12; ++v)
    if (ln->w[v / 3] > 0) q += (ln->d[v] + dd[v]) * (ln->d[v] + dd[v]) / ln->w[v / 3];
  for (int p = 0; p < 9; ++p) Fy[p] = ln->Fx[p];
  for (int r = 0; r < 6; ++r)
    for (int p = 0; p < 9; ++p) Fy[p] += ln->dF[r][p] * dl[r];
  const double U = ln->V * pbng_energy_density(sw->mat, Fy);
  return 0.5 * q + (isfinite(U) ? U : INFINITY);
}

/* objective at dl = 0 without its products: W S^T 0 = 0 and F_y = F_x, so phi = 1/2 sum_{w_a > 0} |d_a|^2 / w_a + V Psi(F_x)
 * (the same values where the positions are finite; where not, phi is not finite either way). */
static double objective_at_start(const pbng_gpbd_tet4_sweep *sw, tet4_lane *ln)
{
  double q = 0.0;
  for (int v = 0; v < 12; ++v)
    if (ln->w[v / 3] > 0) q += ln->d[v] * ln->d[v] / ln->w[v / 3];
  memcpy(ln->Fy, ln->Fx, sizeof(ln->Fy));
  const double U = ln->V * pbng_energy_density(sw->mat, ln->Fy);
  return 0.5 * q + (isfinite(U) ? U : INFINITY);
}

/* grad phi = S d + A dl + V dF_r : P(F_y) of the lanes waiting for it (ready[l]), on the lanes (P: core/gpbd_tet4_material.h,
 * or pbng_first_piola per lane for the corotated model); then each one's exit tests: done, or waiting for a step. */
static void gradients(const pbng_gpbd_tet4_sweep *sw, tet4_lanes *ls, const int ready[PBNG_GPBD_LANES])
{
  for (int l = 0; l < PBNG_GPBD_LANES; ++l)
    if (ready[l]) {
      const tet4_lane *ln = &ls->lane[l];
      for (int p = 0; p < 9; ++p) ls->Fy[p][l] = ln->Fy[p];
      for (int r = 0; r < 6; ++r) ls->dl[r][l] = ln->dl[r];
    }
  if (pbng_gpbd_tet4_lane_hessians_supported(sw->mat->kind)) pbng_gpbd_tet4_lane_stress(sw->mat, (const double(*)[PBNG_GPBD_LANES])ls->Fy, ls->P);
  else
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      double P[9];
      if (!ready[l]) continue;
      pbng_first_piola(sw->mat, ls->lane[l].Fy, P);
      for (int p = 0; p < 9; ++p) ls->P[p][l] = P[p];
    }
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) {
    double fp[PBNG_GPBD_LANES]; /* dF_r : P */
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) fp[l] = 0.0;
#pragma GCC unroll 9
    for (int p = 0; p < 9; ++p)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) fp[l] = fma(ls->dF[p][r][l], ls->P[p][l], fp[l]);
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) ls->grad[r][l] = fma(ls->V[l], fp[l], ls->Sd[r][l]);
#pragma GCC unroll 6
    for (int q = 0; q < 6; ++q)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) ls->grad[r][l] = fma(ls->A[r][q][l], ls->dl[q][l], ls->grad[r][l]);
  }
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    if (!ready[l]) continue;
    tet4_lane *ln = &ls->lane[l];
    double norm2 = 0.0;
    for (int r = 0; r < 6; ++r) norm2 += ls->grad[r][l] * ls->grad[r][l];
    const double gn = sqrt(norm2);
    if (ln->iterations == 0) ln->tol = fmax(ln->gtol, sw->opt->newton.rtol * gn);
    ln->state = gn <= ln->tol || ln->iterations >= sw->opt->newton.newton_max ? LANE_DONE : LANE_STEP;
  }
}

/* K_rs = dF_r : dP/dF : dF_s by contracting the scalar 9 x 9 dP/dF of every waiting lane (the corotated model, whose
 * dR/dF core/gpbd_tet4_material.h does not form). */
static void contracted_hessians(const pbng_gpbd_tet4_sweep *sw, tet4_lanes *ls, int n, const int *waiting, double K[6][6][PBNG_GPBD_LANES])
{
  double T[9][6][PBNG_GPBD_LANES];
  for (int j = 0; j < n; ++j) pbng_stress_derivative(sw->mat, ls->lane[waiting[j]].Fy, ls->Dl[waiting[j]]);
  for (int p = 0; p < 9; ++p) /* across lanes (loads across them: stores of single lanes would be scatters) */
    for (int q = 0; q < 9; ++q)
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) ls->D[p][q][l] = ls->Dl[l][9 * p + q];
  for (int p = 0; p < 9; ++p) /* T_s = dP/dF : dF_s, the six sums in registers */
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      double t[6] = {0, 0, 0, 0, 0, 0};
      for (int q = 0; q < 9; ++q)
        for (int s = 0; s < 6; ++s) t[s] = fma(ls->D[p][q][l], ls->dF[q][s][l], t[s]);
      for (int s = 0; s < 6; ++s) T[p][s][l] = t[s];
    }
  for (int r = 0; r < 6; ++r) /* K_rs = dF_r : T_s (all s: fixed trip counts vectorise) */
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      double k[6] = {0, 0, 0, 0, 0, 0};
      for (int p = 0; p < 9; ++p)
        for (int s = 0; s < 6; ++s) k[s] = fma(ls->dF[p][r][l], T[p][s][l], k[s]);
      for (int s = 0; s < 6; ++s) K[r][s][l] = k[s];
    }
}

/* hess phi = S W S^T + V dF_r : dP/dF : dF_s of the waiting lanes into H (row-major, symmetric), and the fix's
 * eps (relative to max |h_ii|): K on the lanes (core/gpbd_tet4_material.h), or contracted from dP/dF per lane. */
static void hessians(const pbng_gpbd_tet4_sweep *sw, tet4_lanes *ls, int n, const int *waiting, double (*H)[36], double *eps)
{
  double K[6][6][PBNG_GPBD_LANES];
  if (pbng_gpbd_tet4_lane_hessians_supported(sw->mat->kind)) /* dP/dF's directional derivatives on the lanes (F_y: the gradient's) */
    pbng_gpbd_tet4_lane_hessians(sw->mat, (const double(*)[PBNG_GPBD_LANES])ls->Fy, (const double(*)[6][PBNG_GPBD_LANES])ls->dF,
                                 (const double(*)[6][PBNG_GPBD_LANES])ls->gram, K);
  else
    contracted_hessians(sw, ls, n, waiting, K);
  for (int j = 0; j < n; ++j) {
    const int l = waiting[j];
    const tet4_lane *ln = &ls->lane[l];
    double scale = 0.0;
    for (int r = 0; r < 6; ++r)
      for (int s = 0; s <= r; ++s) H[j][6 * r + s] = H[j][6 * s + r] = ls->A[r][s][l] + ln->V * K[r][s][l];
    for (int i = 0; i < 6; ++i) scale = fabs(H[j][7 * i]) > scale ? fabs(H[j][7 * i]) : scale; /* fmax (scale is never NaN) */
    eps[j] = sw->opt->newton.eps * scale;
  }
}

/* Element e into lane l: gather, the inverted-element projection, S and its products, the subspace projection,
 * the gradient floor, phi at dl = 0; then it waits for its first gradient (LANE_GRADIENT), or is done. */
static void lane_start(const pbng_gpbd_tet4_sweep *sw, tet4_lanes *ls, int l, int32_t e)
{
  tet4_lane *ln = &ls->lane[l];
  const pbng_gpbd_tet4_element *el = &sw->elem[e];
  const pbng_gpbd_step_options *o = sw->opt;
  const double *d = &sw->d[(int64_t)sw->stride * e];
  double x[4][3], s[6], S[6][12], E[6][9], G[9] = {0}, dp[12], fa[4], A[36], Sd[6];

  ln->e = e, ln->moving = 0, ln->solved = 0, ln->iterations = 0;
  memset(ln->pre, 0, sizeof(ln->pre));
  memset(ln->drift, 0, sizeof(ln->drift));
  memset(ln->dl, 0, sizeof(ln->dl));
  for (int a = 0; a < 4; ++a) {
    const int32_t i = el->node[a];
    ln->w[a] = sw->h2 * sw->inv_mass[i];
    ln->moving |= ln->w[a] > 0;
    for (int k = 0; k < 3; ++k) x[a][k] = sw->x[3 * i + k];
    pbng_tet_shape_gradient(el->rest.B, a, ln->g[a]);
  }
  ln->state = LANE_DONE;
  if (!ln->moving) return;
  ln->V = ls->V[l] = el->rest.volume;
  if (o->uninvert_min >= 0) pbng_gpbd_tet_uninvert_moving(&el->rest, o->uninvert_min, ln->w, x, ln->pre); /* Sec. 4.1 */
  pbng_gpbd_tet_strain(&el->rest, (const double(*)[3])x, s, S);
  pbng_gpbd_tet_deformation(&el->rest, (const double(*)[3])x, ln->F0);
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) G[3 * i + j] += ln->w[a] * ln->g[a][i] * ln->g[a][j];
  pbng_gpbd_tet4_strain_maps(ln->F0, E);
  for (int r = 0; r < 6; ++r) mat3_mul(E[r], G, ln->dF[r]);
  pbng_gpbd_tet4_inertia_matrix((const double(*)[9])E, (const double(*)[9])ln->dF, A);
  double gram[6][6];
  pbng_gpbd_tet4_direction_gram((const double(*)[9])ln->dF, gram);
  for (int r = 0; r < 6; ++r) {
    for (int p = 0; p < 9; ++p) ls->dF[p][r][l] = ln->dF[r][p];
    for (int q = 0; q < 6; ++q) ls->A[r][q][l] = A[6 * r + q], ls->gram[r][q][l] = gram[r][q];
  }
  memcpy(dp, d, sizeof(dp));
  if (o->project) { /* d <- W S^T mu, its part in col(W S^T); x moved by the rest (null(S)) */
    double mu[6];
    strain_apply((const double(*)[9])E, (const double(*)[3])ln->g, d, Sd);
    if (!all_moving(ln->w) || regular_solve(A, Sd, mu)) semidefinite_solve(A, Sd, mu);
    subspace_displacement(ln->F0, ln->w, (const double(*)[3])ln->g, mu, dp);
    for (int j = 0; j < 12; ++j) {
      ln->drift[j] = d[j] - dp[j];
      x[j / 3][j % 3] -= ln->drift[j];
    }
  }
  strain_apply((const double(*)[9])E, (const double(*)[3])ln->g, dp, Sd);
  for (int r = 0; r < 6; ++r) ls->Sd[r][l] = Sd[r];
  memcpy(ln->d, dp, sizeof(dp));
  pbng_gpbd_tet_deformation(&el->rest, (const double(*)[3])x, ln->Fx);
  pbng_gpbd_tet_force_scales(&el->rest, sw->mat->k_shear, sw->mat->k_volume, s, fa);
  ln->gtol = pbng_gpbd_gradient_floor(4, 6, &S[0][0], dp, ln->w, fa, o->newton.gtol);
  ln->phi = objective_at_start(sw, ln);
  if (!isfinite(ln->phi)) return; /* U(x) not finite (diverged positions): no solve */
  ln->solved = 1;
  ln->state = LANE_GRADIENT;
}

/* One Newton step along step (-H^-1 grad phi with the fixed H; ok = 0: H had no Cholesky factor) with Armijo
 * backtracking on phi (core/gpbd_local.c's rules: a strict decrease, +inf never accepted, any finite phi once the
 * predicted decrease is below phi's round-off); then it waits for the next gradient. */
static void lane_newton_step(const pbng_gpbd_tet4_sweep *sw, tet4_lanes *ls, int l, const double step[6], int ok)
{
  const pbng_gpbd_newton_options *o = &sw->opt->newton;
  tet4_lane *ln = &ls->lane[l];
  double slope = 0.0;
  ln->state = LANE_DONE;
  if (!ok) return; /* not a descent direction */
  for (int i = 0; i < 6; ++i) slope += ls->grad[i][l] * step[i];
  if (!(slope < 0)) return;
  const int roundoff = -slope <= PBNG_GPBD_ROUNDOFF_DECREASE * fabs(ln->phi);
  double a = 1.0, dl[6], Fy[9];
  for (int bt = 0; bt <= o->max_backtracks; ++bt, a *= 0.5) {
    for (int i = 0; i < 6; ++i) dl[i] = ln->dl[i] + a * step[i];
    const double phi = objective(sw, ln, dl, Fy);
    if (isfinite(phi) && (!o->line_search || roundoff || (phi <= ln->phi + o->armijo * a * slope && phi < ln->phi))) {
      memcpy(ln->dl, dl, sizeof(dl));
      memcpy(ln->Fy, Fy, sizeof(Fy));
      ln->phi = phi;
      ++ln->iterations;
      ln->state = LANE_GRADIENT;
      return;
    }
  }
}

/* The lane's dd = W S^T dl - drift and pre into element e's rows; returns its Newton steps. */
static int lane_finish(const pbng_gpbd_tet4_sweep *sw, const tet4_lane *ln, double *dd, double *pre)
{
  double *out = &dd[(int64_t)sw->stride * ln->e], *moved = &pre[(int64_t)sw->stride * ln->e];
  memset(out, 0, sizeof(double) * (size_t)sw->stride);
  memset(moved, 0, sizeof(double) * (size_t)sw->stride);
  if (!ln->moving) return 0;
  if (ln->solved) subspace_displacement(ln->F0, ln->w, (const double(*)[3])ln->g, ln->dl, out);
  for (int j = 0; j < 12; ++j) out[j] -= ln->drift[j];
  memcpy(moved, ln->pre, sizeof(ln->pre));
  return ln->iterations;
}

/* ---- the lanes ---- */

long long pbng_gpbd_tet4_steps(const pbng_gpbd_tet4_sweep *sw, const int32_t *list, int32_t first, int32_t n, double *dd, double *pre)
{
  tet4_lanes ls;
  double H[PBNG_GPBD_LANES][36], eps[PBNG_GPBD_LANES], grad[PBNG_GPBD_LANES][6], step[PBNG_GPBD_LANES][6];
  int ok[PBNG_GPBD_LANES];
  int32_t next = 0;
  long long steps = 0;

  memset(&ls, 0, sizeof(ls)); /* the phases read every lane, used or not: finite values */
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    ls.lane[l].state = LANE_EMPTY;
    for (int p = 0; p < 9; p += 4) ls.Fy[p][l] = 1.0;
  }
  for (;;) {
    int waiting[PBNG_GPBD_LANES], nwait = 0;
    for (;;) { /* every lane to its next step: new elements as solves end, the gradients and exit tests on the lanes */
      int ready[PBNG_GPBD_LANES], any = 0;
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
        tet4_lane *ln = &ls.lane[l];
        while (ln->state == LANE_DONE || (ln->state == LANE_EMPTY && next < n)) {
          if (ln->state == LANE_DONE) steps += lane_finish(sw, ln, dd, pre);
          ln->state = LANE_EMPTY;
          if (next < n) lane_start(sw, &ls, l, list ? list[next++] : first + next++);
        }
        any |= ready[l] = ln->state == LANE_GRADIENT;
      }
      if (!any) break;
      gradients(sw, &ls, ready);
    }
    for (int l = 0; l < PBNG_GPBD_LANES; ++l)
      if (ls.lane[l].state == LANE_STEP) waiting[nwait++] = l;
    if (!nwait) break;
    hessians(sw, &ls, nwait, waiting, H, eps);
    for (int j = 0; j < nwait; ++j)
      for (int r = 0; r < 6; ++r) grad[j][r] = ls.grad[r][waiting[j]];
    pbng_gpbd_newton_steps6(sw->opt->newton.fix, nwait, eps, H, (const double(*)[6])grad, step, ok); /* Sec. 4.2 and the step, on SIMD lanes */
    for (int j = 0; j < nwait; ++j) lane_newton_step(sw, &ls, waiting[j], step[j], ok[j]);
  }
  return steps;
}
