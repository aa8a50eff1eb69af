#include "core/gpbd_tet4.h"
#include <math.h>
#include <stddef.h>
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

static int all_moving(const double w[4]) { return w[0] > 0 && w[1] > 0 && w[2] > 0 && w[3] > 0; }

typedef double lane9[9][PBNG_GPBD_LANES];
typedef double lane12[12][PBNG_GPBD_LANES];


/* W S^T mu (Eq. 18) on every lane: node a's w_a F L g_a, L = sum_r mu_r Y_r (symmetric; F L and (F L) g_a by
 * mat3_mul's and mat3_vec's sums). */
static void subspace_displacement_lanes(const lane9 F, const double w[4][PBNG_GPBD_LANES], const lane12 g, const double mu[6][PBNG_GPBD_LANES],
                                        lane12 out)
{
  lane9 L, FL;
#pragma omp simd
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) { /* L */
    L[0][l] = mu[0][l], L[4][l] = mu[1][l], L[8][l] = mu[2][l];
    L[5][l] = L[7][l] = 0.5 * mu[3][l];
    L[2][l] = L[6][l] = 0.5 * mu[4][l];
    L[1][l] = L[3][l] = 0.5 * mu[5][l];
  }
#pragma GCC unroll 9
  for (int k = 0; k < 9; ++k) { /* mat3_mul */
    const int i = k / 3, c = k % 3;
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) FL[k][l] = F[3 * i][l] * L[c][l] + F[3 * i + 1][l] * L[3 + c][l] + F[3 * i + 2][l] * L[6 + c][l];
  }
#pragma GCC unroll 12
  for (int v = 0; v < 12; ++v) { /* mat3_vec, then w_a */
    const int a = v / 3, i = v % 3;
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l)
      out[v][l] = w[a][l] * (FL[3 * i][l] * g[3 * a][l] + FL[3 * i + 1][l] * g[3 * a + 1][l] + FL[3 * i + 2][l] * g[3 * a + 2][l]);
  }
}

/* ---- one lane: one element's update ---- */

/* LANE_GRADIENT: waits for grad phi at its dl and the exit tests; LANE_STEP: waits for hess phi, its fix and the step */
typedef enum { LANE_EMPTY = 0, LANE_GRADIENT, LANE_STEP, LANE_DONE } lane_state;

typedef struct {
  int32_t e;
  lane_state state;
  int moving, solved;    /* a node moves; the local solve ran (U finite at its start) */
  int iterations;        /* accepted Newton steps */
  double dd[12];         /* W S^T dl at the accepted dl (Eq. 18) */
  double gtol, tol;      /* the gradient floor; the exit tolerance */
  double phi;            /* phi at the accepted multipliers (tet4_lanes' dl, with their F_y) */
} tet4_lane;

/* The lanes, and what the gradients and Hessians read across lanes (SIMD; [...][l] is lane l's). */
typedef struct {
  tet4_lane lane[PBNG_GPBD_LANES];
  double dF[9][6][PBNG_GPBD_LANES];  /* dF[p][r][l]: lane l's F0 Y_r G, F's change per unit dl_r (Eq. 18 through F) */
  double gram[6][6][PBNG_GPBD_LANES]; /* dF_r : dF_s (the lower triangle, s <= r) */
  double A[6][6][PBNG_GPBD_LANES];   /* S W S^T (the lower triangle) */
  double Sd[6][PBNG_GPBD_LANES];     /* S d, d the projected displacement */
  double V[PBNG_GPBD_LANES];         /* the rest volume */
  double w[4][PBNG_GPBD_LANES], g[12][PBNG_GPBD_LANES]; /* w_a, g_a */
  double F0[9][PBNG_GPBD_LANES];     /* F where S was taken (after the inverted-element projection) */
  double Fx[9][PBNG_GPBD_LANES];     /* F where the solve starts (after the subspace projection's move) */
  double d[12][PBNG_GPBD_LANES];     /* the (projected) displacement the solve starts from */
  double dl[6][PBNG_GPBD_LANES];     /* each lane's accepted multipliers and F_y there (written as they are accepted) */
  double Fy[9][PBNG_GPBD_LANES];
  double P[9][PBNG_GPBD_LANES];      /* P(F_y) */
  double grad[6][PBNG_GPBD_LANES];   /* grad phi at dl */
  double Dl[PBNG_GPBD_LANES][81];     /* lane l's dP/dF at its F_y (the corotated model) */
  double D[9][9][PBNG_GPBD_LANES];   /* the same across lanes */
} tet4_lanes;

/* phi = q / 2 + V Psi(F) on the lanes where want[l] (+INFINITY where V Psi is not finite): Psi on the lanes
 * (pbng_gpbd_tet4_lane_energy, bitwise pbng_energy_density), or per lane for the corotated model. */
static void potentials(const pbng_material *m, const lane9 F, const double V[PBNG_GPBD_LANES], const double q[PBNG_GPBD_LANES],
                       const int want[PBNG_GPBD_LANES], double phi[PBNG_GPBD_LANES])
{
  double U[PBNG_GPBD_LANES];
  if (pbng_gpbd_tet4_lane_energy(m, F, want, U)) {
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      const double u = V[l] * U[l];
      phi[l] = 0.5 * q[l] + (isfinite(u) ? u : INFINITY);
    }
    return;
  }
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    if (!want[l]) continue;
    double Fl[9];
    for (int p = 0; p < 9; ++p) Fl[p] = F[p][l];
    const double u = V[l] * pbng_energy_density(m, Fl);
    phi[l] = 0.5 * q[l] + (isfinite(u) ? u : INFINITY);
  }
}

/* phi (Eq. 19) at each lane's dl, with W S^T dl into dd and F_y into Fy, on every lane (phi only where pending[l]): the
 * inertia 1/2 sum_{w_a > 0} |d_a + (W S^T dl)_a|^2 / w_a in positions, as the general path sums it (in the strain's 6
 * dimensions, q0/2 + S d . dl + dl.A dl/2, its terms cancel to round-off far above phi's when dl is large: w small),
 * plus V Psi(F_y), F_y = F_x + sum_r dl_r dF_r (Psi per lane); +INFINITY where Psi is not finite. */
static void objectives(const pbng_gpbd_tet4_sweep *sw, const tet4_lanes *ls, const int pending[PBNG_GPBD_LANES], const double dl[6][PBNG_GPBD_LANES],
                       lane12 dd, lane9 Fy, double phi[PBNG_GPBD_LANES])
{
  double q[PBNG_GPBD_LANES];
  subspace_displacement_lanes((const double(*)[PBNG_GPBD_LANES])ls->F0, (const double(*)[PBNG_GPBD_LANES])ls->w,
                              (const double(*)[PBNG_GPBD_LANES])ls->g, dl, dd);
#pragma omp simd
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) q[l] = 0.0;
#pragma GCC unroll 12
  for (int v = 0; v < 12; ++v) /* the twelve quotients in order (w = 0: a term 0, q + 0 = q) */
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      const double w = ls->w[v / 3][l], y = ls->d[v][l] + dd[v][l];
      q[l] += w > 0 ? y * y / (w > 0 ? w : 1.0) : 0.0;
    }
#pragma GCC unroll 9
  for (int p = 0; p < 9; ++p)
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) Fy[p][l] = ls->Fx[p][l];
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r)
#pragma GCC unroll 9
    for (int p = 0; p < 9; ++p)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) Fy[p][l] += ls->dF[p][r][l] * dl[r][l];
  potentials(sw->mat, (const double(*)[PBNG_GPBD_LANES])Fy, ls->V, q, pending, phi);
}

/* grad phi = S d + A dl + V dF_r : P(F_y) of the lanes waiting for it (ready[l]), on the lanes (P: core/gpbd_tet4_material.h,
 * or pbng_first_piola per lane for the corotated model); then each one's exit tests: done, or waiting for a step. */
static void gradients(const pbng_gpbd_tet4_sweep *sw, tet4_lanes *ls, const int ready[PBNG_GPBD_LANES])
{
  if (pbng_gpbd_tet4_lane_hessians_supported(sw->mat->kind)) pbng_gpbd_tet4_lane_stress(sw->mat, (const double(*)[PBNG_GPBD_LANES])ls->Fy, ls->P);
  else
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      double P[9], F[9];
      if (!ready[l]) continue;
      for (int p = 0; p < 9; ++p) F[p] = ls->Fy[p][l];
      pbng_first_piola(sw->mat, F, P);
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
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) ls->grad[r][l] = fma(ls->A[r > q ? r : q][r > q ? q : r][l], ls->dl[q][l], ls->grad[r][l]);
  }
  double gn[PBNG_GPBD_LANES]; /* |grad phi| on the lanes */
#pragma omp simd
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    double norm2 = 0.0;
    for (int r = 0; r < 6; ++r) norm2 += ls->grad[r][l] * ls->grad[r][l];
    gn[l] = sqrt(norm2);
  }
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    if (!ready[l]) continue;
    tet4_lane *ln = &ls->lane[l];
    if (ln->iterations == 0) ln->tol = fmax(ln->gtol, sw->opt->newton.rtol * gn[l]);
    ln->state = gn[l] <= ln->tol || ln->iterations >= sw->opt->newton.newton_max ? LANE_DONE : LANE_STEP;
  }
}

/* K_rs = dF_r : dP/dF : dF_s by contracting the scalar 9 x 9 dP/dF of every waiting lane (the corotated model, whose
 * dR/dF core/gpbd_tet4_material.h does not form). */
static void contracted_hessians(const pbng_gpbd_tet4_sweep *sw, tet4_lanes *ls, int n, const int *waiting, double K[6][6][PBNG_GPBD_LANES])
{
  double T[9][6][PBNG_GPBD_LANES];
  for (int j = 0; j < n; ++j) {
    double F[9];
    for (int p = 0; p < 9; ++p) F[p] = ls->Fy[p][waiting[j]];
    pbng_stress_derivative(sw->mat, F, ls->Dl[waiting[j]]);
  }
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

/* hess phi = S W S^T + V dF_r : dP/dF : dF_s on the lanes (those not waiting: not meaningful), and the fix's eps
 * (relative to max |h_ii|): K on the lanes (core/gpbd_tet4_material.h), or contracted from dP/dF per waiting lane. */
static void hessians(const pbng_gpbd_tet4_sweep *sw, tet4_lanes *ls, int n, const int *waiting, pbng_gpbd_lanes6 H, double eps[PBNG_GPBD_LANES])
{
  double K[6][6][PBNG_GPBD_LANES], scale[PBNG_GPBD_LANES];
  if (pbng_gpbd_tet4_lane_hessians_supported(sw->mat->kind)) /* dP/dF's directional derivatives on the lanes (F_y: the gradient's) */
    pbng_gpbd_tet4_lane_hessians(sw->mat, (const double(*)[PBNG_GPBD_LANES])ls->Fy, (const double(*)[6][PBNG_GPBD_LANES])ls->dF,
                                 (const double(*)[6][PBNG_GPBD_LANES])ls->gram, K);
  else
    contracted_hessians(sw, ls, n, waiting, K);
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r)
#pragma GCC unroll 6
    for (int s = 0; s <= r; ++s)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) H[r][s][l] = ls->A[r][s][l] + ls->V[l] * K[r][s][l];
#pragma omp simd
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    scale[l] = 0.0;
    for (int i = 0; i < 6; ++i) scale[l] = fabs(H[i][i][l]) > scale[l] ? fabs(H[i][i][l]) : scale[l]; /* fmax (scale is never NaN) */
    eps[l] = sw->opt->newton.eps * scale[l];
  }
}

/* The waiting lanes' Newton steps along step (-H^-1 grad phi with the fixed H; ok = 0: H had no Cholesky factor) with
 * Armijo backtracking on phi (core/gpbd_local.c's rules: a strict decrease, +inf never accepted, any finite phi once
 * the predicted decrease is below phi's round-off), every pending lane's trial at once (objectives); then each waits
 * for its next gradient, or is done (no descent, or no acceptable trial). */
static void line_searches(const pbng_gpbd_tet4_sweep *sw, tet4_lanes *ls, int n, const int *waiting, const double step[6][PBNG_GPBD_LANES],
                          const int *ok)
{
  const pbng_gpbd_newton_options *o = &sw->opt->newton;
  double a[PBNG_GPBD_LANES], slope[PBNG_GPBD_LANES], dl[6][PBNG_GPBD_LANES], phi[PBNG_GPBD_LANES];
  int pending[PBNG_GPBD_LANES] = {0}, roundoff[PBNG_GPBD_LANES] = {0}, left = 0;
  lane12 dd;
  lane9 Fy;
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) a[l] = slope[l] = 0.0;
  for (int j = 0; j < n; ++j) {
    const int l = waiting[j];
    double s = 0.0;
    ls->lane[l].state = LANE_DONE;
    if (!ok[l]) continue; /* not a descent direction */
    for (int i = 0; i < 6; ++i) s += ls->grad[i][l] * step[i][l];
    if (!(s < 0)) continue;
    slope[l] = s, a[l] = 1.0, pending[l] = 1, ++left;
    roundoff[l] = -s <= PBNG_GPBD_ROUNDOFF_DECREASE * fabs(ls->lane[l].phi);
  }
  for (int bt = 0; bt <= o->max_backtracks && left; ++bt) {
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) dl[r][l] = ls->dl[r][l] + a[l] * step[r][l];
    objectives(sw, ls, pending, (const double(*)[PBNG_GPBD_LANES])dl, dd, Fy, phi);
    for (int j = 0; j < n; ++j) {
      const int l = waiting[j];
      tet4_lane *ln = &ls->lane[l];
      if (!pending[l]) continue;
      if (isfinite(phi[l]) && (!o->line_search || roundoff[l] || (phi[l] <= ln->phi + o->armijo * a[l] * slope[l] && phi[l] < ln->phi))) {
        for (int v = 0; v < 12; ++v) ln->dd[v] = dd[v][l];
        for (int p = 0; p < 9; ++p) ls->Fy[p][l] = Fy[p][l];
        for (int r = 0; r < 6; ++r) ls->dl[r][l] = dl[r][l];
        ln->phi = phi[l];
        ++ln->iterations;
        ln->state = LANE_GRADIENT;
        pending[l] = 0, --left;
      } else
        a[l] *= 0.5;
    }
  }
}

/* The lane's dd = W S^T dl - drift into element e's row (which holds 0 - drift since its start: write_starts);
 * returns its Newton steps. */
static int lane_finish(const pbng_gpbd_tet4_sweep *sw, const tet4_lane *ln, double *dd)
{
  double *out = &dd[(int64_t)sw->stride * ln->e];
  if (!ln->solved) return ln->iterations;
  for (int j = 0; j < 12; ++j) out[j] = ln->dd[j] + out[j]; /* W S^T dl - drift (a - b is a + (-b)) */
  return ln->iterations;
}

/* ---- the starts: a batch of elements' set-up on the lanes ---- */

/* The strain's entries (p, q) in core/gpbd_strain.h's order (pbng_gpbd_green_entry), known here at compile time so
 * that the loops over r unroll into fixed indices. */
static const int entry_p[6] = {0, 1, 2, 1, 0, 0}, entry_q[6] = {0, 1, 2, 2, 2, 1};

/* Up to PBNG_GPBD_LANES elements' set-up, computed together on the lanes: slot j is the batch's j-th element
 * ([...][j]); slots past n repeat slot 0's inputs (finite values, results unused). Every slot's values are those
 * of the set-up of one element alone bitwise (the same sums in the same order as the scalar closed forms above and
 * core/gpbd_strain.c's), so an element's update does not depend on its batch. */
typedef struct {
  int n, next; /* elements in the batch; the slot the next lane takes */
  int32_t e[PBNG_GPBD_LANES];
  int moving[PBNG_GPBD_LANES];
  double x[12][PBNG_GPBD_LANES]; /* positions, moved by the projections */
  double B[9][PBNG_GPBD_LANES], g[12][PBNG_GPBD_LANES], w[4][PBNG_GPBD_LANES], V[PBNG_GPBD_LANES];
  double pre[12][PBNG_GPBD_LANES];   /* the inverted-element projection's move */
  double d[12][PBNG_GPBD_LANES];     /* d_i, then its projection (the d the solve starts from) */
  double drift[12][PBNG_GPBD_LANES]; /* d_i minus its projection */
  double F0[9][PBNG_GPBD_LANES], Fx[9][PBNG_GPBD_LANES];
  double dF[9][6][PBNG_GPBD_LANES], A[6][6][PBNG_GPBD_LANES], gram[6][6][PBNG_GPBD_LANES], Sd[6][PBNG_GPBD_LANES];
  double gtol[PBNG_GPBD_LANES], phi[PBNG_GPBD_LANES];
} tet4_starts;

/* F = Ds B on every lane (core/element.h pbng_tet_deformation_gradient's sums). */
static void deformation_lanes(const lane12 x, const lane9 B, lane9 F)
{
#pragma GCC unroll 3
  for (int i = 0; i < 3; ++i)
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      const double d1 = x[3 + i][l] - x[i][l], d2 = x[6 + i][l] - x[i][l], d3 = x[9 + i][l] - x[i][l];
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c) F[3 * i + c][l] = d1 * B[c][l] + d2 * B[3 + c][l] + d3 * B[6 + c][l];
    }
}

/* out[r][l] = E_r : M (E_r = F Y_r) on every lane, summed over (i, j) in row-major order as mat3_ddot sums it with
 * E_r's zeros (E_r has F's column q / 2 in column p and F's column p / 2 in column q; p = q: F's column p). */
static void strain_map_contract_lanes(const lane9 F, const lane9 M, double out[6][PBNG_GPBD_LANES])
{
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) {
    const int p = entry_p[r], q = entry_q[r];
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      double s = 0.0;
#pragma GCC unroll 3
      for (int i = 0; i < 3; ++i) {
        if (p == q) s += F[3 * i + p][l] * M[3 * i + p][l];
        else {
          s += (0.5 * F[3 * i + q][l]) * M[3 * i + p][l];
          s += (0.5 * F[3 * i + p][l]) * M[3 * i + q][l];
        }
      }
      out[r][l] = s;
    }
  }
}

/* (S v)_r = E_r : sum_a v_a g_a^T on every lane (strain_apply). */
static void strain_apply_lanes(const lane9 F, const lane12 g, const lane12 v, double Sv[6][PBNG_GPBD_LANES])
{
  lane9 M;
#pragma GCC unroll 3
  for (int i = 0; i < 3; ++i)
#pragma GCC unroll 3
    for (int j = 0; j < 3; ++j)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l)
        M[3 * i + j][l] = v[i][l] * g[j][l] + v[3 + i][l] * g[3 + j][l] + v[6 + i][l] * g[6 + j][l] + v[9 + i][l] * g[9 + j][l];
  strain_map_contract_lanes(F, (const double(*)[PBNG_GPBD_LANES])M, Sv);
}

/* The directions dF_r = E_r G (G = sum_a w_a g_a g_a^T; mat3_mul's sum with E_r's zeros: F's columns against G's
 * rows), S W S^T = dF_r : E_s (pbng_gpbd_tet4_inertia_matrix) and the Gram matrix dF_r : dF_s
 * (pbng_gpbd_tet4_direction_gram) on every lane. */
static void directions_lanes(tet4_starts *st)
{
  lane9 G;
#pragma GCC unroll 9
  for (int p = 0; p < 9; ++p)
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      double s = 0.0;
      for (int a = 0; a < 4; ++a) s += st->w[a][l] * st->g[3 * a + p / 3][l] * st->g[3 * a + p % 3][l];
      G[p][l] = s;
    }
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) {
    const int p = entry_p[r], q = entry_q[r];
#pragma GCC unroll 9
    for (int k = 0; k < 9; ++k) {
      const int i = k / 3, j = k % 3;
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l)
        st->dF[k][r][l] = p == q ? st->F0[3 * i + p][l] * G[3 * p + j][l]
                                 : (0.5 * st->F0[3 * i + q][l]) * G[3 * p + j][l] + (0.5 * st->F0[3 * i + p][l]) * G[3 * q + j][l];
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) {
    lane9 D;
    for (int k = 0; k < 9; ++k) memcpy(D[k], st->dF[k][r], sizeof(D[k]));
    double row[6][PBNG_GPBD_LANES];
    strain_map_contract_lanes((const double(*)[PBNG_GPBD_LANES])st->F0, (const double(*)[PBNG_GPBD_LANES])D, row);
#pragma GCC unroll 6
    for (int s = 0; s <= r; ++s) {
      double gr[PBNG_GPBD_LANES];
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) gr[l] = 0.0;
#pragma GCC unroll 9
      for (int k = 0; k < 9; ++k)
#pragma omp simd
        for (int l = 0; l < PBNG_GPBD_LANES; ++l) gr[l] = fma(st->dF[k][r][l], st->dF[k][s][l], gr[l]);
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
        st->A[r][s][l] = st->A[s][r][l] = row[s][l];
        st->gram[r][s][l] = st->gram[s][r][l] = gr[l];
      }
    }
  }
}

/* mu with A mu = b by L D L^T without pivoting (the general path's Cholesky, where every node moves) on every lane; ok[l] cleared where a pivot is not above
 * 1e-12 of A's largest diagonal entry (that lane's mu is then not meaningful, and finite). */
static void regular_solve_lanes(const double A[6][6][PBNG_GPBD_LANES], const double b[6][PBNG_GPBD_LANES], double mu[6][PBNG_GPBD_LANES],
                                int ok[PBNG_GPBD_LANES])
{
  double L[6][6][PBNG_GPBD_LANES], d[6][PBNG_GPBD_LANES], r[6][PBNG_GPBD_LANES], top[PBNG_GPBD_LANES];
#pragma omp simd
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    top[l] = 0.0;
    for (int i = 0; i < 6; ++i) top[l] = A[i][i][l] > top[l] ? A[i][i][l] : top[l];
  }
#pragma GCC unroll 6
  for (int j = 0; j < 6; ++j) {
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      double dj = A[j][j][l];
      for (int k = 0; k < j; ++k) dj -= L[j][k][l] * L[j][k][l] * d[k][l];
      const int pivot = dj > 1e-12 * top[l];
      ok[l] &= pivot;
      d[j][l] = pivot ? dj : 1.0;
      r[j][l] = 1.0 / d[j][l];
    }
#pragma GCC unroll 6
    for (int i = j + 1; i < 6; ++i)
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
        double v = A[i][j][l];
        for (int k = 0; k < j; ++k) v -= L[i][k][l] * L[j][k][l] * d[k][l];
        L[i][j][l] = v * r[j][l];
      }
  }
#pragma GCC unroll 6
  for (int i = 0; i < 6; ++i)
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      double m = b[i][l];
      for (int k = 0; k < i; ++k) m -= L[i][k][l] * mu[k][l];
      mu[i][l] = m;
    }
#pragma GCC unroll 6
  for (int i = 5; i >= 0; --i)
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      double m = mu[i][l] * r[i][l];
      for (int k = i + 1; k < 6; ++k) m -= L[k][i][l] * mu[k][l];
      mu[i][l] = m;
    }
}

/* The gradient floor (pbng_gpbd_gradient_floor with pbng_gpbd_tet_force_scales, S_r[a] = E_r g_a with E_r from F,
 * the strain's F where S is taken) on every lane. */
static void gradient_floor_lanes(const pbng_gpbd_tet4_sweep *sw, const tet4_starts *st, double gtol[PBNG_GPBD_LANES])
{
  const double moduli = sw->mat->k_shear + fabs(sw->mat->k_volume);
  double pscale[PBNG_GPBD_LANES], c[12][PBNG_GPBD_LANES];
#pragma omp simd
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    /* E_kk = ((F^T F)_kk - 1) / 2 (mat3_tmul's sum), |F|^2 = tr(2E + I) */
    const double s0 = 0.5 * (st->F0[0][l] * st->F0[0][l] + st->F0[3][l] * st->F0[3][l] + st->F0[6][l] * st->F0[6][l] - 1.0);
    const double s1 = 0.5 * (st->F0[1][l] * st->F0[1][l] + st->F0[4][l] * st->F0[4][l] + st->F0[7][l] * st->F0[7][l] - 1.0);
    const double s2 = 0.5 * (st->F0[2][l] * st->F0[2][l] + st->F0[5][l] * st->F0[5][l] + st->F0[8][l] * st->F0[8][l] - 1.0);
    const double F2 = 3.0 + 2.0 * (s0 + s1 + s2);
    pscale[l] = st->V[l] * moduli * (F2 > 1.0 ? F2 : 1.0); /* fmax(1, F2), NaN alike */
    gtol[l] = sw->opt->newton.gtol;
  }
#pragma GCC unroll 12
  for (int v = 0; v < 12; ++v) { /* each value's scale |d_j| + w_j fa_j */
    const int a = v / 3;
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      const double fa = pscale[l] * (fabs(st->g[3 * a][l]) + fabs(st->g[3 * a + 1][l]) + fabs(st->g[3 * a + 2][l]));
      c[v][l] = fabs(st->d[v][l]) + st->w[a][l] * fa;
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) {
    const int p = entry_p[r], q = entry_q[r];
    double v[PBNG_GPBD_LANES];
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) v[l] = 0.0;
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) {
      const int a = j / 3, i = j % 3;
#pragma omp simd
      for (int l = 0; l < PBNG_GPBD_LANES; ++l)
        v[l] += fabs(0.5 * (st->g[3 * a + p][l] * st->F0[3 * i + q][l] + st->F0[3 * i + p][l] * st->g[3 * a + q][l])) * c[j][l];
    }
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      const double x = PBNG_GPBD_GRADIENT_ROUNDOFF * v[l];
      gtol[l] = x > gtol[l] ? x : gtol[l]; /* fmax (gtol is never NaN) */
    }
  }
}

/* The batch's inputs: element list[from + j] (list NULL: first + from + j) into slot j < n, slot 0's into the others. */
static void gather_starts(const pbng_gpbd_tet4_sweep *sw, tet4_starts *st, const int32_t *list, int32_t first, int32_t from, int n)
{
  st->n = n, st->next = 0;
  for (int j = 0; j < PBNG_GPBD_LANES; ++j) {
    const int32_t e = list ? list[from + (j < n ? j : 0)] : first + from + (j < n ? j : 0);
    const pbng_gpbd_tet4_element *el = &sw->elem[e];
    const double *d = &sw->d[(int64_t)sw->stride * e];
    st->e[j] = e, st->moving[j] = 0, st->V[j] = el->rest.volume;
    for (int k = 0; k < 9; ++k) st->B[k][j] = el->rest.B[k];
    for (int a = 0; a < 4; ++a) {
      const int32_t i = el->node[a];
      st->w[a][j] = sw->h2 * sw->inv_mass[i];
      st->moving[j] |= st->w[a][j] > 0;
      for (int k = 0; k < 3; ++k) st->x[3 * a + k][j] = sw->x[3 * i + k];
    }
    for (int v = 0; v < 12; ++v) st->d[v][j] = d[v];
  }
#pragma GCC unroll 3
  for (int k = 0; k < 3; ++k) /* g_a = pbng_tet_shape_gradient's (node 0: minus the sum of B's rows, in its order) */
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      st->g[k][l] = -(st->B[k][l] + st->B[3 + k][l] + st->B[6 + k][l]);
      st->g[3 + k][l] = st->B[k][l], st->g[6 + k][l] = st->B[3 + k][l], st->g[9 + k][l] = st->B[6 + k][l];
    }
  memset(st->pre, 0, sizeof(st->pre));
  memset(st->drift, 0, sizeof(st->drift));
}

/* The inverted-element projection (Sec. 4.1, pbng_gpbd_tet_uninvert_moving) of the moving slots with det F0 <= 0
 * (mat3_det's sum on the lanes picks them), with their F0 recomputed at the moved positions. */
static void uninvert_starts(const pbng_gpbd_tet4_sweep *sw, tet4_starts *st)
{
  for (int j = 0; j < st->n; ++j) {
    double F[9], x[4][3], w[4];
    for (int p = 0; p < 9; ++p) F[p] = st->F0[p][j];
    if (!st->moving[j] || !(mat3_det(F) <= 0.0)) continue;
    const pbng_gpbd_tet4_element *el = &sw->elem[st->e[j]];
    double pre[12] = {0};
    for (int a = 0; a < 4; ++a) {
      w[a] = st->w[a][j];
      for (int k = 0; k < 3; ++k) x[a][k] = st->x[3 * a + k][j];
    }
    pbng_gpbd_tet_uninvert_moving(&el->rest, sw->opt->uninvert_min, w, x, pre);
    pbng_gpbd_tet_deformation(&el->rest, (const double(*)[3])x, F);
    for (int v = 0; v < 12; ++v) st->x[v][j] = x[v / 3][v % 3], st->pre[v][j] = pre[v];
    for (int p = 0; p < 9; ++p) st->F0[p][j] = F[p];
  }
}

/* The subspace projection of d_i (step 2): d <- W S^T mu with (S W S^T) mu = S d, by L D L^T on the lanes where every
 * node moves and it has pivots, else by semidefinite_solve per element; the rest (drift) off x. */
static void project_starts(tet4_starts *st)
{
  double Sd[6][PBNG_GPBD_LANES], mu[6][PBNG_GPBD_LANES];
  int ok[PBNG_GPBD_LANES];
  lane12 dp;
  strain_apply_lanes((const double(*)[PBNG_GPBD_LANES])st->F0, (const double(*)[PBNG_GPBD_LANES])st->g, (const double(*)[PBNG_GPBD_LANES])st->d, Sd);
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    const double w[4] = {st->w[0][l], st->w[1][l], st->w[2][l], st->w[3][l]};
    ok[l] = all_moving(w);
  }
  regular_solve_lanes((const double(*)[6][PBNG_GPBD_LANES])st->A, (const double(*)[PBNG_GPBD_LANES])Sd, mu, ok);
  for (int j = 0; j < st->n; ++j) {
    if (ok[j] || !st->moving[j]) continue;
    double A[36], b[6], m[6];
    for (int r = 0; r < 6; ++r) {
      b[r] = Sd[r][j];
      for (int s = 0; s < 6; ++s) A[6 * r + s] = st->A[r][s][j];
    }
    semidefinite_solve(A, b, m);
    for (int r = 0; r < 6; ++r) mu[r][j] = m[r];
  }
  subspace_displacement_lanes((const double(*)[PBNG_GPBD_LANES])st->F0, (const double(*)[PBNG_GPBD_LANES])st->w,
                              (const double(*)[PBNG_GPBD_LANES])st->g, (const double(*)[PBNG_GPBD_LANES])mu, dp);
#pragma GCC unroll 12
  for (int v = 0; v < 12; ++v)
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      st->drift[v][l] = st->d[v][l] - dp[v][l];
      st->x[v][l] -= st->drift[v][l];
      st->d[v][l] = dp[v][l];
    }
}

/* The rows of dd and pre of the batch's elements as far as the set-up fixes them: pre, and dd = 0 - drift (lane_finish
 * adds W S^T dl where the local solve runs); zeros past 12 and where no node moves. */
static void write_starts(const pbng_gpbd_tet4_sweep *sw, const tet4_starts *st, double *dd, double *pre)
{
  for (int j = 0; j < st->n; ++j) {
    double *out = &dd[(int64_t)sw->stride * st->e[j]], *moved = &pre[(int64_t)sw->stride * st->e[j]];
    memset(out, 0, sizeof(double) * (size_t)sw->stride);
    memset(moved, 0, sizeof(double) * (size_t)sw->stride);
    if (!st->moving[j]) continue;
    for (int v = 0; v < 12; ++v) out[v] = 0.0 - st->drift[v][j], moved[v] = st->pre[v][j];
  }
}

/* The set-up of elements list[from .. from + n) (n <= PBNG_GPBD_LANES) on the lanes: gather, the inverted-element
 * projection, S's products (the directions, S W S^T, their Gram matrix), the subspace projection, S d, the gradient
 * floor, F and phi where the solve starts (phi per element: the material's Psi). */
static void prepare_starts(const pbng_gpbd_tet4_sweep *sw, tet4_starts *st, const int32_t *list, int32_t first, int32_t from, int n, double *dd,
                           double *pre)
{
  gather_starts(sw, st, list, first, from, n);
  deformation_lanes((const double(*)[PBNG_GPBD_LANES])st->x, (const double(*)[PBNG_GPBD_LANES])st->B, st->F0);
  if (sw->opt->uninvert_min >= 0) uninvert_starts(sw, st);
  directions_lanes(st);
  if (sw->opt->project) project_starts(st);
  strain_apply_lanes((const double(*)[PBNG_GPBD_LANES])st->F0, (const double(*)[PBNG_GPBD_LANES])st->g, (const double(*)[PBNG_GPBD_LANES])st->d,
                     st->Sd);
  deformation_lanes((const double(*)[PBNG_GPBD_LANES])st->x, (const double(*)[PBNG_GPBD_LANES])st->B, st->Fx);
  gradient_floor_lanes(sw, st, st->gtol);
  write_starts(sw, st, dd, pre);
  /* phi at dl = 0 (objectives', W S^T 0 = 0): 1/2 sum_{w_a > 0} |d_a|^2 / w_a (a term 0 where w_a = 0: q + 0 = q, q never
   * -0) + V Psi(F_x) */
  double q[PBNG_GPBD_LANES];
  int want[PBNG_GPBD_LANES];
#pragma omp simd
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) q[l] = 0.0, want[l] = l < n;
#pragma GCC unroll 12
  for (int v = 0; v < 12; ++v)
#pragma omp simd
    for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
      const double w = st->w[v / 3][l], y = st->d[v][l];
      q[l] += w > 0 ? y * y / (w > 0 ? w : 1.0) : 0.0;
    }
  potentials(sw->mat, (const double(*)[PBNG_GPBD_LANES])st->Fx, st->V, q, want, st->phi);
}

/* The batch's next element into lane l; then it waits for its first gradient (LANE_GRADIENT), or is done (no node
 * moves, or U not finite where the solve would start: diverged positions). */
static void lane_start(tet4_lanes *ls, int l, tet4_starts *st)
{
  tet4_lane *ln = &ls->lane[l];
  const int j = st->next++;
  ln->e = st->e[j], ln->moving = st->moving[j], ln->solved = 0, ln->iterations = 0;
  ln->state = LANE_DONE;
  if (!ln->moving) return;
  for (int v = 0; v < 12; ++v) ls->d[v][l] = st->d[v][j], ln->dd[v] = 0.0, ls->g[v][l] = st->g[v][j];
  for (int a = 0; a < 4; ++a) ls->w[a][l] = st->w[a][j];
  for (int p = 0; p < 9; ++p) ls->F0[p][l] = st->F0[p][j], ls->Fx[p][l] = st->Fx[p][j];
  for (int r = 0; r < 6; ++r) {
    ls->Sd[r][l] = st->Sd[r][j];
    for (int p = 0; p < 9; ++p) ls->dF[p][r][l] = st->dF[p][r][j];
    for (int q = 0; q <= r; ++q) ls->A[r][q][l] = st->A[r][q][j], ls->gram[r][q][l] = st->gram[r][q][j]; /* the lower triangles */
  }
  ls->V[l] = st->V[j];
  ln->gtol = st->gtol[j], ln->phi = st->phi[j];
  if (!isfinite(ln->phi)) return;
  for (int p = 0; p < 9; ++p) ls->Fy[p][l] = ls->Fx[p][l];
  for (int r = 0; r < 6; ++r) ls->dl[r][l] = 0.0;
  ln->solved = 1;
  ln->state = LANE_GRADIENT;
}

/* ---- the lanes ---- */

long long pbng_gpbd_tet4_steps(const pbng_gpbd_tet4_sweep *sw, const int32_t *list, int32_t first, int32_t n, double *dd, double *pre)
{
  tet4_lanes ls;
  tet4_starts st;
  pbng_gpbd_lanes6 H;
  double eps[PBNG_GPBD_LANES], step[6][PBNG_GPBD_LANES];
  int ok[PBNG_GPBD_LANES];
  int32_t next = 0;
  long long steps = 0;

  st.n = st.next = 0;
  /* the phases read every lane, used or not: finite values (dP/dF per lane only where the lanes do not form K) */
  memset(&ls, 0, pbng_gpbd_tet4_lane_hessians_supported(sw->mat->kind) ? offsetof(tet4_lanes, Dl) : sizeof(ls));
  for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
    ls.lane[l].state = LANE_EMPTY;
    for (int p = 0; p < 9; p += 4) ls.Fy[p][l] = 1.0;
  }
  for (;;) {
    int waiting[PBNG_GPBD_LANES], active[PBNG_GPBD_LANES], nwait = 0;
    for (;;) { /* every lane to its next step: new elements as solves end, the gradients and exit tests on the lanes */
      int ready[PBNG_GPBD_LANES], any = 0;
      for (int l = 0; l < PBNG_GPBD_LANES; ++l) {
        tet4_lane *ln = &ls.lane[l];
        while (ln->state == LANE_DONE || (ln->state == LANE_EMPTY && next < n)) {
          if (ln->state == LANE_DONE) steps += lane_finish(sw, ln, dd);
          ln->state = LANE_EMPTY;
          if (next == n) continue;
          if (st.next == st.n) prepare_starts(sw, &st, list, first, next, n - next < PBNG_GPBD_LANES ? n - next : PBNG_GPBD_LANES, dd, pre);
          lane_start(&ls, l, &st);
          ++next;
        }
        any |= ready[l] = ln->state == LANE_GRADIENT;
      }
      if (!any) break;
      gradients(sw, &ls, ready);
    }
    for (int l = 0; l < PBNG_GPBD_LANES; ++l)
      if ((active[l] = ls.lane[l].state == LANE_STEP)) waiting[nwait++] = l;
    if (!nwait) break;
    hessians(sw, &ls, nwait, waiting, H, eps);
    pbng_gpbd_newton_steps6(sw->opt->newton.fix, active, eps, H, (const double(*)[PBNG_GPBD_LANES])ls.grad, step, ok); /* Sec. 4.2 and the step, on SIMD lanes */
    line_searches(sw, &ls, nwait, waiting, (const double(*)[PBNG_GPBD_LANES])step, ok);
  }
  return steps;
}
