/* Hessians of the peridynamic membrane energies (src/core/peridynamics_hessian.c; docs/peridynamics.md):
 *  - dP/dF of both materials (Eq. 36-41) against central differences of pbng_pd_energy_density's P on
 *    random F with J in [0.5, 2], and its major symmetry;
 *  - the vertex Hessian of W_i = V_i Psi(F_i), y_perp held fixed, against central differences of the force
 *    state gradient (Eq. 9) on random curved one-rings (closed and open fans, n = 4..8, positions moved
 *    10-30 % from rest), both materials; symmetry; zero row sums (translation invariance); J <= 0 refused;
 *  - the bending Hessian the same way against pbng_pd_bending_energy_gradient (y_perp fixed), its energy
 *    the gradient function's; the Gauss-Newton part alone is measured to show the second-order term matters;
 *    a singular F refused;
 *  - the PSD projection of these Hessians (problem/psd_projection.h pbng_project_psd, reused): the output
 *    PSD (Cholesky of H + eps I), H_psd - H PSD and H_psd (H_psd - H) = 0 (together: H_psd is H's
 *    positive part, the eigenvalue clamp at 0), a PD matrix unchanged. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/dense.h"
#include "core/mat3.h"
#include "core/peridynamics.h"
#include "core/peridynamics_hessian.h"
#include "core/vec3.h"
#include "problem/psd_projection.h"
#include "test_check.h"

#define PI 3.14159265358979323846
enum { NODES = PBNG_PD_MAX_RING + 1, DOF = 3 * NODES };
_Static_assert(DOF <= 81, "pbng_project_psd takes n <= 81");

static const pbng_pd_material materials[2] = {{PBNG_PD_NEOHOOKEAN, 1.3, 4.1}, {PBNG_PD_STRETCHING, 2.2, 0}};
static const double k_bend = 0.7;

static double max_abs(const double *a, int n)
{
  double m = 0;
  for (int k = 0; k < n; ++k) m = fmax(m, fabs(a[k]));
  return m;
}

/* max |H - H^T| over an N x N matrix */
static double asymmetry(int N, const double *H)
{
  double m = 0;
  for (int i = 0; i < N; ++i)
    for (int j = i + 1; j < N; ++j) m = fmax(m, fabs(H[i * N + j] - H[j * N + i]));
  return m;
}

/* max over rows of |sum over nodes q of the block row|: zero when E is invariant under translations */
static double row_sum_defect(int nodes, const double *H)
{
  const int N = 3 * nodes;
  double m = 0;
  for (int i = 0; i < N; ++i)
    for (int e = 0; e < 3; ++e) {
      double s = 0;
      for (int q = 0; q < nodes; ++q) s += H[i * N + 3 * q + e];
      m = fmax(m, fabs(s));
    }
  return m;
}

/* ---- dP/dF ---- */

/* A random F with J in [0.5, 2]. */
static void random_F(uint64_t *s, double F[9])
{
  double J;
  do {
    for (int k = 0; k < 9; ++k) F[k] = (k % 4 == 0) + 0.6 * (2 * next_random(s) - 1);
    J = mat3_det(F);
  } while (J < 0.5 || J > 2.0);
}

static void test_stress_derivative(uint64_t *s)
{
  double worst[2] = {0, 0}, worst_sym = 0;
  for (int trial = 0; trial < 100; ++trial)
    for (int mk = 0; mk < 2; ++mk) {
      const pbng_pd_material *m = &materials[mk];
      double F[9], D[81] = {0}, Pp[9] = {0}, Pm[9] = {0}, err = 0;
      random_F(s, F);
      pbng_pd_stress_derivative(m, F, D);
      for (int cd = 0; cd < 9; ++cd) {
        const double h = 1e-6, f0 = F[cd];
        F[cd] = f0 + h;
        pbng_pd_energy_density(m, F, Pp);
        F[cd] = f0 - h;
        pbng_pd_energy_density(m, F, Pm);
        F[cd] = f0;
        for (int ab = 0; ab < 9; ++ab) err = fmax(err, fabs((Pp[ab] - Pm[ab]) / (2 * h) - D[9 * ab + cd]));
      }
      worst[mk] = fmax(worst[mk], err / max_abs(D, 81));
      worst_sym = fmax(worst_sym, asymmetry(9, D) / max_abs(D, 81));
    }
  printf("dP/dF vs central differences of P, worst relative error: neo-Hookean %.2e, stretching %.2e; asymmetry %.2e\n", worst[0], worst[1],
         worst_sym);
  check(worst[0] < 1e-6, "neo-Hookean dP/dF by central differences", worst[0], 1e-6);
  check(worst[1] < 1e-6, "stretching dP/dF by central differences", worst[1], 1e-6);
  check(worst_sym < 1e-13, "dP/dF major symmetry", worst_sym, 1e-13);
}

/* ---- one-rings ---- */

static void random_rigid(uint64_t *s, double Q[9], double t[3])
{
  double R[3][3];
  random_rotation_matrix(s, R);
  memcpy(Q, R, sizeof(R));
  for (int a = 0; a < 3; ++a) t[a] = 4 * next_random(s) - 2;
}

/* pts[0] = x_i, pts[1..n] its fan: n neighbours counter-clockwise around x_i at radii 0.6-1.4, lifted by
 * curvature r^2 along the normal, in a random frame; closed fans go once around, open ones over 1.3 pi. */
static void random_fan(uint64_t *s, int n, int closed, double curvature, double (*pts)[3])
{
  double Q[9], t[3];
  random_rigid(s, Q, t);
  const double span = closed ? 2 * PI : 1.3 * PI, step = closed ? span / n : span / (n - 1);
  double local[NODES][3] = {{0, 0, 0}};
  for (int k = 0; k < n; ++k) {
    const double th = k * step + 0.3 * step * (next_random(s) - 0.5), r = 0.6 + 0.8 * next_random(s);
    local[k + 1][0] = r * cos(th), local[k + 1][1] = r * sin(th), local[k + 1][2] = curvature * r * r * (0.5 + next_random(s));
  }
  for (int k = 0; k <= n; ++k) {
    mat3_vec(Q, local[k], pts[k]);
    for (int a = 0; a < 3; ++a) pts[k][a] += t[a];
  }
}

/* A rest ring and a deformed one: every position moved by 10-30 % of the ring's size (rejected until the
 * deformed F, with the deformed fan's virtual bond yp, has J in [0.3, 3]). */
static void random_deformed_ring(uint64_t *s, int n, int closed, pbng_pd_rest *r, double (*y)[3], double yp[3])
{
  for (;;) {
    double X[NODES][3], F[9];
    random_fan(s, n, closed, 0.5 * (next_random(s) - 0.3), X);
    if (pbng_pd_rest_init(X[0], (const double(*)[3])X + 1, n, closed, NULL, 0.2 + 0.3 * next_random(s), 0.5 + next_random(s), r)) continue;
    const double amplitude = 0.1 + 0.2 * next_random(s);
    for (int k = 0; k <= n; ++k)
      for (int a = 0; a < 3; ++a) y[k][a] = X[k][a] + amplitude * (2 * next_random(s) - 1);
    if (pbng_pd_virtual_bond(y[0], (const double(*)[3])y + 1, n, closed, r->thickness, yp)) continue;
    pbng_pd_deformation_gradient_with(r, y[0], (const double(*)[3])y + 1, yp, F);
    const double J = mat3_det(F);
    if (J > 0.3 && J < 3.0) return;
  }
}

/* The gradient of W_i with y_perp held fixed, from the documented formula (Eq. 9):
 * grad[1 + j] = V omega_j P K^-1 xi_j, grad[0] = -sum_j grad[1 + j]. */
static void elastic_gradient(const void *ctx, const pbng_pd_rest *r, const double (*pts)[3], const double yp[3], double (*grad)[3])
{
  double F[9], P[9] = {0}, PK[9];
  pbng_pd_deformation_gradient_with(r, pts[0], pts + 1, yp, F);
  pbng_pd_energy_density((const pbng_pd_material *)ctx, F, P);
  mat3_mul(P, r->K_inv, PK);
  grad[0][0] = grad[0][1] = grad[0][2] = 0;
  for (int j = 0; j < r->n; ++j) {
    pbng_pd_force_state(PK, r->volume * r->omega[j], r->bond[j], grad[1 + j]);
    for (int a = 0; a < 3; ++a) grad[0][a] -= grad[1 + j][a];
  }
}

static void bending_gradient(const void *ctx, const pbng_pd_rest *r, const double (*pts)[3], const double yp[3], double (*grad)[3])
{
  (void)ctx;
  pbng_pd_bending_energy_gradient(k_bend, r, pts[0], pts + 1, yp, grad[0], grad + 1, NULL);
}

typedef void (*gradient_fn)(const void *ctx, const pbng_pd_rest *r, const double (*pts)[3], const double yp[3], double (*grad)[3]);

/* max |H - central differences of the gradient| / max |H| */
static double hessian_fd_error(gradient_fn gradient, const void *ctx, const pbng_pd_rest *r, double (*y)[3], const double yp[3], const double *H)
{
  const int nodes = r->n + 1, N = 3 * nodes;
  double err = 0;
  for (int q = 0; q < nodes; ++q)
    for (int e = 0; e < 3; ++e) {
      const double h = 1e-6, y0 = y[q][e];
      double gp[NODES][3] = {{0}}, gm[NODES][3] = {{0}};
      y[q][e] = y0 + h;
      gradient(ctx, r, (const double(*)[3])y, yp, gp);
      y[q][e] = y0 - h;
      gradient(ctx, r, (const double(*)[3])y, yp, gm);
      y[q][e] = y0;
      for (int p = 0; p < nodes; ++p)
        for (int c = 0; c < 3; ++c) err = fmax(err, fabs((gp[p][c] - gm[p][c]) / (2 * h) - H[(3 * p + c) * N + 3 * q + e]));
    }
  return err / max_abs(H, N * N);
}

/* ---- PSD projection (pbng_project_psd) ---- */

/* Whether A + eps I is positive definite (Cholesky), eps = 1e-12 N max |A|. */
static int nearly_psd(int N, const double *A, double scale)
{
  double M[DOF * DOF], b[DOF] = {0};
  memcpy(M, A, (size_t)N * N * sizeof(double));
  for (int i = 0; i < N; ++i) M[i * N + i] += 1e-12 * N * scale;
  return dense_spd_solve(N, M, b) == 0;
}

typedef struct {
  int tried, indefinite, not_psd, removed_not_psd, pd_changed;
  double worst_pd_change, worst_asym, worst_product;
} psd_stats;

static void check_projection(int N, const double *H, psd_stats *st)
{
  double Hp[DOF * DOF], D[DOF * DOF];
  const double scale = max_abs(H, N * N);
  memcpy(Hp, H, (size_t)N * N * sizeof(double));
  ++st->tried;
  if (pbng_project_psd(N, Hp) != 0) {
    ++st->not_psd;
    return;
  }
  const int was_psd = nearly_psd(N, H, scale);
  st->indefinite += !was_psd;
  if (!nearly_psd(N, Hp, scale)) ++st->not_psd;
  for (int k = 0; k < N * N; ++k) D[k] = Hp[k] - H[k];
  if (!nearly_psd(N, D, scale)) ++st->removed_not_psd; /* H_psd = H + V max(-Lambda, 0) V^T */
  if (!was_psd && max_abs(D, N * N) == 0) ++st->removed_not_psd;
  st->worst_asym = fmax(st->worst_asym, asymmetry(N, Hp) / scale);
  /* H_psd (H_psd - H) = 0: with both PSD, H_psd and H_psd - H are H's positive and negative parts */
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      double v = 0;
      for (int k = 0; k < N; ++k) v += Hp[i * N + k] * D[k * N + j];
      st->worst_product = fmax(st->worst_product, fabs(v) / (scale * scale));
    }
  /* a positive definite matrix: H_psd + 1e-3 max|H| I, left as it is */
  for (int i = 0; i < N; ++i) Hp[i * N + i] += 1e-3 * scale;
  memcpy(D, Hp, (size_t)N * N * sizeof(double));
  if (pbng_project_psd(N, D) != 0) {
    ++st->pd_changed;
    return;
  }
  double change = 0;
  for (int k = 0; k < N * N; ++k) change = fmax(change, fabs(D[k] - Hp[k]));
  st->worst_pd_change = fmax(st->worst_pd_change, change / scale);
}

/* ---- the vertex Hessians ---- */

static void test_vertex_hessians(uint64_t *s)
{
  double worst_el[2] = {0, 0}, worst_el_sym = 0, worst_el_rows = 0, worst_null = 0;
  double worst_b = 0, worst_b_sym = 0, worst_b_rows = 0, worst_b_energy = 0, least_gn = INFINITY;
  psd_stats st = {0};
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 4 + trial % 5, closed = trial % 3 != 0, nodes = n + 1, N = 3 * nodes;
    pbng_pd_rest r;
    double y[NODES][3], yp[3], H[DOF * DOF], H2[DOF * DOF];
    random_deformed_ring(s, n, closed, &r, y, yp);
    for (int mk = 0; mk < 2; ++mk) {
      const pbng_pd_material *m = &materials[mk];
      check(pbng_pd_vertex_hessian(m, &r, y[0], (const double(*)[3])y + 1, yp, H) == 0, "vertex Hessian accepted", n, closed);
      worst_el[mk] = fmax(worst_el[mk], hessian_fd_error(elastic_gradient, m, &r, y, yp, H));
      worst_el_sym = fmax(worst_el_sym, asymmetry(N, H) / max_abs(H, N * N));
      worst_el_rows = fmax(worst_el_rows, row_sum_defect(nodes, H) / max_abs(H, N * N));
      pbng_pd_vertex_hessian(m, &r, y[0], (const double(*)[3])y + 1, NULL, H2); /* NULL: the same, deformed fan's y_perp */
      for (int k = 0; k < N * N; ++k) worst_null = fmax(worst_null, fabs(H2[k] - H[k]) / max_abs(H, N * N));
      check_projection(N, H, &st);
    }
    /* bending */
    double gi[3], gr[PBNG_PD_MAX_RING][3];
    const double E = pbng_pd_bending_hessian(k_bend, &r, y[0], (const double(*)[3])y + 1, yp, H);
    const double Eg = pbng_pd_bending_energy_gradient(k_bend, &r, y[0], (const double(*)[3])y + 1, yp, gi, gr, NULL);
    worst_b_energy = fmax(worst_b_energy, fabs(E - Eg) / Eg);
    worst_b = fmax(worst_b, hessian_fd_error(bending_gradient, NULL, &r, y, yp, H));
    worst_b_sym = fmax(worst_b_sym, asymmetry(N, H) / max_abs(H, N * N));
    worst_b_rows = fmax(worst_b_rows, row_sum_defect(nodes, H) / max_abs(H, N * N));
    check_projection(N, H, &st);
    /* the Gauss-Newton part alone (r_j's second derivative dropped): H - (the Z, h terms) */
    {
      double A[9], F[9], g[NODES][3] = {{0}}, alpha[PBNG_PD_MAX_RING][NODES] = {{0}}, AtA[9], HG[DOF * DOF] = {0};
      pbng_pd_deformation_gradient_with(&r, y[0], (const double(*)[3])y + 1, yp, F);
      mat3_inverse(F, A);
      mat3_tmul(A, A, AtA);
      for (int j = 0; j < n; ++j)
        for (int b = 0; b < 3; ++b) {
          for (int k = 0; k < 3; ++k) g[1 + j][b] += r.bond[j][k] * r.K_inv[3 * k + b];
          g[0][b] -= g[1 + j][b];
        }
      for (int j = 0; j < n; ++j) {
        double eta[3], u[3];
        vec3_sub(y[1 + j], y[0], eta);
        mat3_vec(A, eta, u);
        for (int p = 0; p < nodes; ++p) alpha[j][p] = (p == j + 1) - (p == 0) - vec3_dot(g[p], u);
      }
      for (int p = 0; p < nodes; ++p)
        for (int q = 0; q < nodes; ++q)
          for (int j = 0; j < n; ++j)
            for (int a = 0; a < 3; ++a)
              for (int b = 0; b < 3; ++b) HG[(3 * p + a) * N + 3 * q + b] += r.volume * k_bend * alpha[j][p] * alpha[j][q] * AtA[3 * a + b];
      least_gn = fmin(least_gn, hessian_fd_error(bending_gradient, NULL, &r, y, yp, HG));
    }
  }
  printf("vertex Hessian (y_perp fixed) vs central differences of the force state gradient, worst relative error:\n"
         "  neo-Hookean %.2e, stretching %.2e; asymmetry %.2e; row sums %.2e; y_perp NULL vs given %.2e\n",
         worst_el[0], worst_el[1], worst_el_sym, worst_el_rows, worst_null);
  printf("bending Hessian (y_perp fixed) vs central differences of its gradient: %.2e; asymmetry %.2e; row sums %.2e; energy %.2e;\n"
         "  Gauss-Newton part alone: error at least %.2e\n",
         worst_b, worst_b_sym, worst_b_rows, worst_b_energy, least_gn);
  printf("PSD projection (pbng_project_psd) of %d Hessians, %d of them indefinite: not PSD after %d, H_psd - H not PSD %d, "
         "asymmetry %.2e;\n  |H_psd (H_psd - H)| %.2e; PD matrices changed by %.2e\n",
         st.tried, st.indefinite, st.not_psd, st.removed_not_psd, st.worst_asym, st.worst_product, st.worst_pd_change);
  check(worst_el[0] < 1e-6, "neo-Hookean vertex Hessian by central differences", worst_el[0], 1e-6);
  check(worst_el[1] < 1e-6, "stretching vertex Hessian by central differences", worst_el[1], 1e-6);
  check(worst_el_sym < 1e-13, "vertex Hessian symmetric", worst_el_sym, 1e-13);
  check(worst_el_rows < 1e-12, "vertex Hessian: translation invariance", worst_el_rows, 1e-12);
  check(worst_null < 1e-12, "vertex Hessian: y_perp NULL takes the deformed fan's", worst_null, 1e-12);
  check(worst_b < 1e-6, "bending Hessian by central differences", worst_b, 1e-6);
  check(worst_b_sym < 1e-13, "bending Hessian symmetric", worst_b_sym, 1e-13);
  check(worst_b_rows < 1e-12, "bending Hessian: translation invariance", worst_b_rows, 1e-12);
  check(worst_b_energy < 1e-14, "bending Hessian returns the energy", worst_b_energy, 1e-14);
  check(least_gn > 1e-3, "bending: the second-order term matters (Gauss-Newton alone fails the test)", least_gn, 1e-3);
  check(st.indefinite > 0, "some Hessians indefinite (the projection is exercised)", st.indefinite, 0);
  check(st.not_psd == 0, "projected Hessians PSD", st.not_psd, 0);
  check(st.removed_not_psd == 0, "projection only removes negative modes", st.removed_not_psd, 0);
  check(st.worst_asym < 1e-13, "projected Hessians symmetric", st.worst_asym, 1e-13);
  check(st.worst_product < 1e-12, "projection: positive and removed parts orthogonal (the eigenvalue clamp)", st.worst_product, 1e-12);
  check(st.pd_changed == 0 && st.worst_pd_change < 1e-12, "PD matrix left as it is", st.worst_pd_change, 1e-12);
}

/* Inverted and singular F: refused, H zeroed. */
static void test_refused(uint64_t *s)
{
  pbng_pd_rest r;
  double y[NODES][3], yp[3], H[DOF * DOF];
  const int n = 6, N = 3 * (n + 1);
  random_deformed_ring(s, n, 1, &r, y, yp);
  /* the deformed ring and y_perp mirrored in x = 0: F becomes S F, J < 0 */
  double mirrored[NODES][3], mirrored_perp[3] = {-yp[0], yp[1], yp[2]}, F[9];
  for (int k = 0; k <= n; ++k) mirrored[k][0] = -y[k][0], mirrored[k][1] = y[k][1], mirrored[k][2] = y[k][2];
  pbng_pd_deformation_gradient_with(&r, mirrored[0], (const double(*)[3])mirrored + 1, mirrored_perp, F);
  check(mat3_det(F) < 0, "mirrored ring: J < 0", mat3_det(F), 0);
  for (int k = 0; k < N * N; ++k) H[k] = 1;
  check(pbng_pd_vertex_hessian(&materials[0], &r, mirrored[0], (const double(*)[3])mirrored + 1, mirrored_perp, H) == -1 && max_abs(H, N * N) == 0,
        "vertex Hessian: J < 0 refused, H zeroed", max_abs(H, N * N), 0);
  /* a flat deformed ring in z = 0 and y_perp = 0: F's third row vanishes exactly */
  for (int k = 0; k <= n; ++k) y[k][2] = 0;
  const double zero[3] = {0, 0, 0};
  for (int k = 0; k < N * N; ++k) H[k] = 1;
  const double E = pbng_pd_bending_hessian(k_bend, &r, y[0], (const double(*)[3])y + 1, zero, H);
  check(isinf(E) && max_abs(H, N * N) == 0, "bending Hessian: singular F refused, H zeroed", E, max_abs(H, N * N));
  for (int k = 0; k < N * N; ++k) H[k] = 1;
  check(pbng_pd_vertex_hessian(&materials[1], &r, y[0], (const double(*)[3])y + 1, zero, H) == -1 && max_abs(H, N * N) == 0,
        "vertex Hessian: J = 0 refused, H zeroed", max_abs(H, N * N), 0);
}

int main(void)
{
  uint64_t seed = 0x2545f4914f6cdd1dull;
  test_stress_derivative(&seed);
  test_vertex_hessians(&seed);
  test_refused(&seed);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
