/* Unit tests of src/core/material.c: stresses against finite differences of the energies, consistency with
 * linear elasticity at F = I (Sec. 8), the SPD modified Hessian (Eq. 36-37), rotation invariance, the
 * log-barrier neo-Hookean model's values, infinite energy and stress guard, Lame parameters (Eq. 9) and
 * the polar rotation of the corotated model (Eq. 7), robust and fixed-step (core/polar.h). */
#include "core/material.h"
#include "core/mat3.h"
#include "core/polar.h"

#include <math.h>
#include <string.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  long checks, failures;
} tally;

static void check(tally *t, int ok, const char *what, double value, double bound)
{
  ++t->checks;
  if (!ok) {
    ++t->failures;
    if (t->failures <= 50) printf("FAIL: %s (value %.6e, bound %.6e)\n", what, value, bound);
  }
}

/* check value <= bound (NaN fails) */
static void check_le(tally *t, double value, double bound, const char *what)
{
  check(t, value <= bound, what, value, bound);
}

/* xorshift64* */
static double rng_uniform(uint64_t *s, double lo, double hi)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  const uint64_t r = *s * 2685821657736338717ULL;
  return lo + (hi - lo) * ((double)(r >> 11) * (1.0 / 9007199254740992.0));
}

static void random_quaternion(uint64_t *s, double q[4])
{
  double n2;
  do {
    n2 = 0.0;
    for (int k = 0; k < 4; ++k) {
      q[k] = rng_uniform(s, -1.0, 1.0);
      n2 += q[k] * q[k];
    }
  } while (n2 > 1.0 || n2 < 1e-2);
  const double n = sqrt(n2);
  for (int k = 0; k < 4; ++k) q[k] /= n;
}

static void quaternion_rotation(const double q[4], double R[9])
{
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}

static void random_rotation(uint64_t *s, double R[9])
{
  double q[4];
  random_quaternion(s, q);
  quaternion_rotation(q, R);
}

/* Rotation by angle about the unit axis a (Rodrigues). */
static void axis_angle_rotation(const double a[3], double angle, double R[9])
{
  const double c = cos(angle), s = sin(angle), C = 1.0 - c;
  R[0] = c + a[0] * a[0] * C;        R[1] = a[0] * a[1] * C - a[2] * s; R[2] = a[0] * a[2] * C + a[1] * s;
  R[3] = a[1] * a[0] * C + a[2] * s; R[4] = c + a[1] * a[1] * C;        R[5] = a[1] * a[2] * C - a[0] * s;
  R[6] = a[2] * a[0] * C - a[1] * s; R[7] = a[2] * a[1] * C + a[0] * s; R[8] = c + a[2] * a[2] * C;
}

/* F = U diag(s) V^T */
static void compose_svd(const double U[9], const double s[3], const double V[9], double F[9])
{
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      F[3 * r + c] = U[3 * r] * s[0] * V[3 * c] + U[3 * r + 1] * s[1] * V[3 * c + 1] + U[3 * r + 2] * s[2] * V[3 * c + 2];
}

/* Test deformation gradients, by case: 0 uniform entries in [-1.5, 1.5]; 1 near identity; 2 inverted;
 * 3 nearly singular (det ~ 1e-6) with distinct singular values; 4 inverted with prescribed singular values. */
static void random_F(uint64_t *s, int which, double F[9])
{
  switch (which % 5) {
  case 0:
    for (int k = 0; k < 9; ++k) F[k] = rng_uniform(s, -1.5, 1.5);
    break;
  case 1:
    for (int k = 0; k < 9; ++k) F[k] = (k % 4 == 0 ? 1.0 : 0.0) + rng_uniform(s, -0.2, 0.2);
    break;
  case 2:
    do {
      for (int k = 0; k < 9; ++k) F[k] = rng_uniform(s, -1.5, 1.5);
      if (mat3_det(F) > 0.0)
        for (int k = 0; k < 3; ++k) F[k] = -F[k];
    } while (mat3_det(F) > -1e-3);
    break;
  case 3: {
    double U[9], V[9];
    const double sv[3] = {rng_uniform(s, 1.0, 1.5), rng_uniform(s, 0.3, 0.8), 1e-6};
    random_rotation(s, U);
    random_rotation(s, V);
    compose_svd(U, sv, V, F);
    break;
  }
  default: {
    double U[9], V[9];
    const double sv[3] = {rng_uniform(s, 1.0, 1.5), rng_uniform(s, 0.5, 0.9), -rng_uniform(s, 0.0, 0.3)};
    random_rotation(s, U);
    random_rotation(s, V);
    compose_svd(U, sv, V, F);
    break;
  }
  }
}

static double max_abs_diff(const double *a, const double *b, int n)
{
  double m = 0.0;
  for (int k = 0; k < n; ++k) {
    const double d = fabs(a[k] - b[k]);
    if (!(d <= m)) m = d;
  }
  return m;
}

static const double PI = 3.14159265358979323846;

static double mat3_norm(const double A[9]) { return sqrt(mat3_frobenius_sq(A)); }

enum { NKINDS = 5 };
static const pbng_material_kind kinds[NKINDS] = {PBNG_MATERIAL_COROTATED, PBNG_MATERIAL_NEOHOOKEAN, PBNG_MATERIAL_STABLE_NEOHOOKEAN,
                                                 PBNG_MATERIAL_NEOHOOKEAN_LOG, PBNG_MATERIAL_STVK}; /* StVK last: no s F + v cof F split */

/* neohookean_log's energy has no value for J <= 0 and its stress is the guard's below PBNG_LOG_J_MIN
 * (material.h pbng_log_volume): central differences of Psi apply where J stays well above it. */
static int log_outside_formula(pbng_material_kind kind, const double F[9])
{
  return kind == PBNG_MATERIAL_NEOHOOKEAN_LOG && !(mat3_det(F) > 0.02);
}

/* 1. P against central differences of Psi. */
static void test_stress_finite_differences(tally *t, uint64_t *s)
{
  for (int mk = 0; mk < NKINDS; ++mk) {
    pbng_material m;
    pbng_material_init(&m, kinds[mk], 1e5, 0.3);
    for (int n = 0; n < 300; ++n) {
      double F[9], P[9], Pfd[9];
      random_F(s, n, F);
      if (log_outside_formula(kinds[mk], F)) continue; /* test_log_neohookean */
      pbng_first_piola(&m, F, P);
      const double h = 1e-6 * (mat3_norm(F) > 1.0 ? mat3_norm(F) : 1.0);
      for (int k = 0; k < 9; ++k) {
        double Fp[9], Fm[9];
        for (int j = 0; j < 9; ++j) Fp[j] = Fm[j] = F[j];
        Fp[k] += h;
        Fm[k] -= h;
        Pfd[k] = (pbng_energy_density(&m, Fp) - pbng_energy_density(&m, Fm)) / (2.0 * h);
      }
      char what[128];
      snprintf(what, sizeof what, "%s: P vs finite differences, case %d", pbng_material_kind_name(kinds[mk]), n % 5);
      check_le(t, max_abs_diff(P, Pfd, 9), 1e-6 * (mat3_norm(P) + m.mu), what);
    }
  }
}

/* 2. pbng_stress_and_cofactor agrees with pbng_first_piola and mat3_cofactor (warm-started too). */
static void test_stress_and_cofactor(tally *t, uint64_t *s)
{
  for (int mk = 0; mk < NKINDS; ++mk) {
    pbng_material m;
    pbng_material_init(&m, kinds[mk], 2e6, 0.45);
    float q[4] = {0, 0, 0, 0};
    for (int n = 0; n < 200; ++n) {
      double F[9], P[9], P2[9], C[9], C2[9];
      random_F(s, n, F);
      pbng_first_piola(&m, F, P);
      pbng_stress_and_cofactor(&m, F, P2, C, q);
      mat3_cofactor(F, C2);
      check_le(t, max_abs_diff(P, P2, 9), 1e-11 * (mat3_norm(P) + m.mu), "stress_and_cofactor P");
      check_le(t, max_abs_diff(C, C2, 9), 0.0, "stress_and_cofactor cof F");
      pbng_stress_and_cofactor(&m, F, P2, C, q); /* warm start from its own result */
      check_le(t, max_abs_diff(P, P2, 9), 1e-11 * (mat3_norm(P) + m.mu), "stress_and_cofactor P, warm");
    }
  }
}

/* 3. P(I) = 0, 4. dP/dF(I) = linear elasticity tensor, and Psi(I). */
static void test_rest_state(tally *t)
{
  const double nus[2] = {0.3, 0.45};
  for (int mk = 0; mk < NKINDS; ++mk)
    for (int in = 0; in < 2; ++in) {
      const double E = 1e5;
      pbng_material m;
      pbng_material_init(&m, kinds[mk], E, nus[in]);
      double I[9], P[9];
      mat3_identity(I);
      pbng_first_piola(&m, I, P);
      check_le(t, max_abs_diff(P, (double[9]){0}, 9), 1e-12 * E, "P(I) = 0");
      const double h = 1e-5;
      for (int k = 0; k < 9; ++k) {
        double Fp[9], Fm[9], Pp[9], Pm[9];
        for (int j = 0; j < 9; ++j) Fp[j] = Fm[j] = I[j];
        Fp[k] += h;
        Fm[k] -= h;
        pbng_first_piola(&m, Fp, Pp);
        pbng_first_piola(&m, Fm, Pm);
        const int kr = k / 3, kc = k % 3;
        for (int ij = 0; ij < 9; ++ij) {
          const int i = ij / 3, j = ij % 3;
          const double expect = m.lambda * (i == j) * (kr == kc) + m.mu * ((i == kr) * (j == kc) + (i == kc) * (j == kr));
          const double fd = (Pp[ij] - Pm[ij]) / (2.0 * h);
          char what[128];
          snprintf(what, sizeof what, "%s nu=%.2f: d2Psi/dF2(I)[%d][%d] = linear elasticity",
                   pbng_material_kind_name(kinds[mk]), nus[in], ij, k);
          check_le(t, fabs(fd - expect), 1e-6 * (m.lambda + 2.0 * m.mu), what);
        }
      }
    }
  /* Psi(I) for E = 1e5, nu = 0.3: mu = 500000/13, lambda = 750000/13 */
  pbng_material m;
  double I[9];
  mat3_identity(I);
  pbng_material_init(&m, PBNG_MATERIAL_COROTATED, 1e5, 0.3);
  check_le(t, fabs(pbng_energy_density(&m, I)), 1e-9, "corotated Psi(I) = 0");
  pbng_material_init(&m, PBNG_MATERIAL_NEOHOOKEAN, 1e5, 0.3);
  /* 3mu/2 + mu^2/(2 lambda_hat), lambda_hat = 1250000/13 */
  check_le(t, fabs(pbng_energy_density(&m, I) - 850000.0 / 13.0), 1e-9, "neohookean Psi(I)");
  pbng_material_init(&m, PBNG_MATERIAL_STABLE_NEOHOOKEAN, 1e5, 0.3);
  /* mu' = 2000000/39, lambda' = 3500000/39, 3mu'/(4lambda') = 3/7: lambda'/2 (3/7)^2 - mu'/2 log 4 */
  const double snh = 0.5 * (3500000.0 / 39.0) * (9.0 / 49.0) - (2000000.0 / 39.0) * log(2.0);
  check_le(t, fabs(pbng_energy_density(&m, I) - snh), 1e-9, "stable_neohookean Psi(I)");
  pbng_material_init(&m, PBNG_MATERIAL_NEOHOOKEAN_LOG, 1e5, 0.3);
  check_le(t, fabs(pbng_energy_density(&m, I)), 0.0, "neohookean_log Psi(I) = 0");
  pbng_material_init(&m, PBNG_MATERIAL_STVK, 1e5, 0.3);
  check_le(t, fabs(pbng_energy_density(&m, I)), 0.0, "stvk Psi(I) = 0");
  /* uniaxial stretch F = diag(s, 1, 1): E = diag((s^2 - 1)/2, 0, 0), Psi = (mu + lambda/2) E11^2 */
  const double st = 1.3, E11 = 0.5 * (st * st - 1.0), Fs[9] = {st, 0, 0, 0, 1, 0, 0, 0, 1};
  check_le(t, fabs(pbng_energy_density(&m, Fs) - (m.mu + 0.5 * m.lambda) * E11 * E11), 1e-9, "stvk Psi(uniaxial stretch)");
}

/* 5b. StVK's node block: with g.S g >= 0 it is the exact d(V P g)/dx_i (central differences of P along
 * dF = u g^T), and it is symmetric positive definite for invertible F (compression included). */
static void test_stvk_node_block(tally *t, uint64_t *s)
{
  const double nus[3] = {0.3, 0.49, -0.5};
  for (int in = 0; in < 3; ++in) {
    pbng_material m;
    pbng_material_init(&m, PBNG_MATERIAL_STVK, 1e5, nus[in]);
    for (int n = 0; n < 300; ++n) {
      double F[9], g[3], S[9], Sg[3], w[3], A[9] = {0};
      random_F(s, n, F);
      for (int k = 0; k < 3; ++k) g[k] = rng_uniform(s, -2.0, 2.0);
      pbng_stvk_second_piola(&m, F, S);
      mat3_vec(S, g, Sg);
      mat3_vec(F, g, w);
      pbng_stvk_node_block_add_lower(&m, F, g, Sg, w, 1.0, A);
      pbng_symmetrize_lower(A);
      const double m1 = A[0], m2 = A[0] * A[4] - A[1] * A[3], m3 = mat3_det(A);
      if (fabs(mat3_det(F)) > 1e-3) check(t, m1 > 0.0 && m2 > 0.0 && m3 > 0.0, "stvk node block positive definite", m3, 0.0);
      if (g[0] * Sg[0] + g[1] * Sg[1] + g[2] * Sg[2] < 0.0) continue;
      const double h = 1e-6 * (mat3_norm(F) > 1.0 ? mat3_norm(F) : 1.0);
      for (int c = 0; c < 3; ++c) { /* column c: d(P g)/du_c */
        double Fp[9], Fm[9], Pp[9], Pm[9], dPg[3];
        for (int j = 0; j < 9; ++j) Fp[j] = Fm[j] = F[j];
        for (int j = 0; j < 3; ++j) Fp[3 * c + j] += h * g[j], Fm[3 * c + j] -= h * g[j];
        pbng_first_piola(&m, Fp, Pp);
        pbng_first_piola(&m, Fm, Pm);
        for (int r = 0; r < 3; ++r) dPg[r] = ((Pp[3 * r] - Pm[3 * r]) * g[0] + (Pp[3 * r + 1] - Pm[3 * r + 1]) * g[1] + (Pp[3 * r + 2] - Pm[3 * r + 2]) * g[2]) / (2.0 * h);
        for (int r = 0; r < 3; ++r) check_le(t, fabs(dPg[r] - A[3 * r + c]), 1e-6 * (mat3_norm(A) + m.mu), "stvk node block = d(P g)/dx (g.S g >= 0)");
      }
    }
  }
}

/* Cholesky factorisation of a symmetric 3x3 A: every pivot positive. */
static int cholesky_pivots_positive(const double A[9])
{
  const double d0 = A[0];
  if (!(d0 > 0.0)) return 0;
  const double l10 = A[3] / d0, l20 = A[6] / d0;
  const double d1 = A[4] - l10 * A[3];
  if (!(d1 > 0.0)) return 0;
  const double l21 = (A[7] - l20 * A[3]) / d1;
  const double d2 = A[8] - l20 * A[6] - l21 * l21 * d1;
  return d2 > 0.0;
}

/* 5. The modified nodal Hessian is symmetric positive definite (Sylvester's criterion; Cholesky for neohookean_log). */
static void test_modified_hessian(tally *t, uint64_t *s)
{
  const double nus[3] = {0.3, 0.49, -0.5};
  for (int mk = 0; mk < NKINDS - 1; ++mk) /* the s F + v cof F models; StVK: test_stvk_node_block */
    for (int in = 0; in < 3; ++in) {
      pbng_material m;
      if (pbng_material_init(&m, kinds[mk], 1e5, nus[in])) { /* neohookean_log refuses nu < 0 (test_log_neohookean) */
        check(t, kinds[mk] == PBNG_MATERIAL_NEOHOOKEAN_LOG && nus[in] < 0.0, "init refuses only neohookean_log with nu < 0", nus[in], 0);
        continue;
      }
      for (int n = 0; n < 200; ++n) {
        double A[9] = {0};
        const int elements = 1 + n % 4;
        for (int e = 0; e < elements; ++e) {
          double F[9], P[9], C[9], g[3];
          random_F(s, n + e, F);
          if (n % 7 == 0) /* J = 0 exactly */
            for (int k = 0; k < 3; ++k) F[6 + k] = 2.0 * F[k] - F[3 + k];
          for (int k = 0; k < 3; ++k) g[k] = rng_uniform(s, -2.0, 2.0);
          pbng_stress_and_cofactor(&m, F, P, C, 0);
          if (kinds[mk] == PBNG_MATERIAL_NEOHOOKEAN_LOG) { /* the coefficient of the solvers' kernels, compression included */
            double c[3], L[9] = {0};
            mat3_vec(C, g, c);
            pbng_modified_hessian_add_lower_coef(&m, pbng_modified_hessian_lambda(kinds[mk], &m, mat3_det(F)), c, g[0] * g[0] + g[1] * g[1] + g[2] * g[2],
                                                 rng_uniform(s, 0.1, 2.0), L);
            pbng_symmetrize_lower(L);
            for (int k = 0; k < 9; ++k) A[k] += L[k];
          } else {
            pbng_modified_hessian_add(&m, C, g, rng_uniform(s, 0.1, 2.0), A);
          }
        }
        const double scale = mat3_norm(A);
        check_le(t, fabs(A[1] - A[3]) + fabs(A[2] - A[6]) + fabs(A[5] - A[7]), 1e-14 * scale, "Hessian symmetric");
        const double m1 = A[0], m2 = A[0] * A[4] - A[1] * A[3], m3 = mat3_det(A);
        if (kinds[mk] == PBNG_MATERIAL_NEOHOOKEAN_LOG) /* a guarded coefficient up to ~1e7 lambda: the determinant loses to rounding, */
          check(t, cholesky_pivots_positive(A), "Hessian positive definite (Cholesky pivots)", m3, 0.0); /* the pivots do not */
        else
          check(t, m1 > 0.0 && m2 > 0.0 && m3 > 0.0, "Hessian positive definite (leading minors)", m3, 0.0);
      }
    }
}

/* 5c. Rotation invariance of every model: Psi(Q F) = Psi(F), P(Q F) = Q P(F) for rotations Q. */
static void test_rotation_invariance(tally *t, uint64_t *s)
{
  for (int mk = 0; mk < NKINDS; ++mk) {
    pbng_material m;
    pbng_material_init(&m, kinds[mk], 1e5, 0.3);
    for (int n = 0; n < 100; ++n) {
      double F[9], Q[9], QF[9], P[9], PQ[9], QP[9];
      random_F(s, n % 2, F); /* uniform entries or near identity */
      if (log_outside_formula(kinds[mk], F)) continue;
      random_rotation(s, Q);
      mat3_mul(Q, F, QF);
      pbng_first_piola(&m, F, P);
      pbng_first_piola(&m, QF, PQ);
      mat3_mul(Q, P, QP);
      const double psi = pbng_energy_density(&m, F);
      char what[128];
      snprintf(what, sizeof what, "%s: Psi(Q F) = Psi(F)", pbng_material_kind_name(kinds[mk]));
      check_le(t, fabs(pbng_energy_density(&m, QF) - psi), 1e-10 * (fabs(psi) + m.mu), what);
      snprintf(what, sizeof what, "%s: P(Q F) = Q P(F)", pbng_material_kind_name(kinds[mk]));
      check_le(t, max_abs_diff(PQ, QP, 9), 1e-10 * (mat3_norm(P) + m.mu), what);
    }
  }
}

/* 5d. neohookean_log (GPBD seed Eq. 20): Psi at hand-computed F; +inf for J <= 0; the guarded stress is finite,
 * points J back up and is continuous (with its J-derivative) at PBNG_LOG_J_MIN; the modified Hessian's
 * coefficient is lambda at rest and in tension and phi''(J) - mu in compression; init refuses nu < 0. */
static void test_log_neohookean(tally *t, uint64_t *s)
{
  pbng_material m;
  check(t, pbng_material_init(&m, PBNG_MATERIAL_NEOHOOKEAN_LOG, 1e5, -0.2) == -1, "neohookean_log refuses nu < 0", 0, 0);
  check(t, pbng_material_init(&m, PBNG_MATERIAL_NEOHOOKEAN_LOG, 1e5, 0.0) == 0, "neohookean_log accepts nu = 0", 0, 0);
  pbng_material_init(&m, PBNG_MATERIAL_NEOHOOKEAN_LOG, 1e5, 0.3); /* mu = 500000/13, lambda = 750000/13 */
  check(t, m.k_shear == m.mu && m.k_volume == m.lambda && m.j_rest == 0.0 && m.hessian_lambda == m.lambda, "neohookean_log init fields", 0, 0);
  /* F = [[1, .5, 0], [0, 1, 0], [0, 0, 2]]: J = 2, |F|^2 = 6.25: mu/2 3.25 - mu log 2 + lambda/2 (log 2)^2 */
  const double F1[9] = {1, 0.5, 0, 0, 1, 0, 0, 0, 2};
  check_le(t, fabs(pbng_energy_density(&m, F1) - 49699.71461071945), 1e-9 * 5e4, "neohookean_log Psi(F1) by hand");
  /* F = [[.9, .2, .1], [0, .8, .3], [.1, 0, .7]]: J = 0.502, |F|^2 = 2.09 (compression) */
  const double F2[9] = {0.9, 0.2, 0.1, 0, 0.8, 0.3, 0.1, 0, 0.7};
  check_le(t, fabs(pbng_energy_density(&m, F2) - 22706.010941263394), 1e-9 * 2.3e4, "neohookean_log Psi(F2) by hand");
  /* P(F1) = mu F + (lambda log 2 - mu) F^-T, F1^-T = [[1, 0, 0], [-.5, 1, 0], [0, 0, .5]] */
  {
    const double FinvT[9] = {1, 0, 0, -0.5, 1, 0, 0, 0, 0.5}, k = m.lambda * log(2.0) - m.mu;
    double P[9], Pe[9];
    for (int i = 0; i < 9; ++i) Pe[i] = m.mu * F1[i] + k * FinvT[i];
    pbng_first_piola(&m, F1, P);
    check_le(t, max_abs_diff(P, Pe, 9), 1e-10 * m.mu, "neohookean_log P(F1) = mu F + (lambda log J - mu) F^-T");
  }
  /* no value for J <= 0: singular, reflected, random inverted */
  const double Fz[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0}, Fr[9] = {-1, 0, 0, 0, 1, 0, 0, 0, 1};
  check(t, pbng_energy_density(&m, Fz) == INFINITY, "neohookean_log Psi = +inf at J = 0", pbng_energy_density(&m, Fz), 0);
  check(t, pbng_energy_density(&m, Fr) == INFINITY, "neohookean_log Psi = +inf at J = -1", pbng_energy_density(&m, Fr), 0);
  for (int n = 0; n < 200; ++n) {
    double F[9], P[9], C[9];
    random_F(s, 2 + 2 * (n % 2), F); /* cases 2 and 4: inverted */
    if (n % 10 == 0)
      for (int k = 0; k < 3; ++k) F[6 + k] = 2.0 * F[k] - F[3 + k]; /* J = 0 (up to rounding) */
    const double J = mat3_det(F);
    if (J <= 0.0) check(t, pbng_energy_density(&m, F) == INFINITY, "neohookean_log Psi = +inf for J <= 0", J, 0);
    pbng_stress_and_cofactor(&m, F, P, C, 0);
    int finite = 1;
    for (int k = 0; k < 9; ++k) finite &= isfinite(P[k]) != 0;
    check(t, finite, "neohookean_log guarded P finite for J <= 0", J, 0);
    /* dJ = cof F : dF: a step dF = -eps P raises J (v < 0 pushes out of the inversion) */
    double s_, v;
    pbng_stress_scalars(PBNG_MATERIAL_NEOHOOKEAN_LOG, &m, F, J, &s_, &v);
    check(t, v < 0.0 && s_ == m.mu, "neohookean_log guard: v < 0 below J_min", v, J);
  }
  /* the guard's v and dv/dJ are continuous at J_min and equal the formula above it; below, v is linear */
  {
    double v0, d0, vm, dm, vp, dp, vl, dl;
    const double Jm = PBNG_LOG_J_MIN;
    pbng_log_volume(&m, Jm, &v0, &d0);
    pbng_log_volume(&m, Jm * (1 - 1e-9), &vm, &dm);
    pbng_log_volume(&m, Jm * (1 + 1e-9), &vp, &dp);
    check_le(t, fabs(vm - vp), 1e-6 * fabs(v0), "neohookean_log guard: v continuous at J_min");
    check_le(t, fabs(dm - dp), 1e-6 * fabs(d0), "neohookean_log guard: dv/dJ continuous at J_min");
    check_le(t, fabs(v0 - (m.lambda * log(Jm) - m.mu) / Jm), 1e-12 * fabs(v0), "neohookean_log v(J_min) = (lambda log J - mu) / J");
    pbng_log_volume(&m, -0.5, &vl, &dl);
    check_le(t, fabs(vl - (v0 + d0 * (-0.5 - Jm))) + fabs(dl - d0), 1e-12 * fabs(vl), "neohookean_log guard: v(J) = v(J_min) + dv(J_min) (J - J_min)");
    const double Js[4] = {0.3, 0.7, 1.4, 3.0};
    for (int k = 0; k < 4; ++k) {
      double v, dv;
      pbng_log_volume(&m, Js[k], &v, &dv);
      const double L = log(Js[k]);
      check_le(t, fabs(v - (m.lambda * L - m.mu) / Js[k]) + fabs(dv - (m.lambda + m.mu - m.lambda * L) / (Js[k] * Js[k])), 1e-12 * m.lambda,
               "neohookean_log v, dv/dJ above J_min");
    }
  }
  /* the modified Hessian's volume coefficient */
  check(t, pbng_modified_hessian_lambda(PBNG_MATERIAL_NEOHOOKEAN_LOG, &m, 1.0) == m.lambda, "neohookean_log modified Hessian: lambda at rest",
        pbng_modified_hessian_lambda(PBNG_MATERIAL_NEOHOOKEAN_LOG, &m, 1.0), m.lambda);
  check(t, pbng_modified_hessian_lambda(PBNG_MATERIAL_NEOHOOKEAN_LOG, &m, 1.5) == m.lambda, "neohookean_log modified Hessian: lambda in tension", 0, 0);
  {
    const double J = 0.5, L = log(J), expect = (m.lambda + m.mu - m.lambda * L) / (J * J) - m.mu;
    check_le(t, fabs(pbng_modified_hessian_lambda(PBNG_MATERIAL_NEOHOOKEAN_LOG, &m, J) - expect), 1e-12 * expect,
             "neohookean_log modified Hessian: phi''(J) - mu in compression");
    check(t, pbng_modified_hessian_lambda(PBNG_MATERIAL_NEOHOOKEAN, &m, J) == m.hessian_lambda, "other models: hessian_lambda", 0, 0);
  }
}

/* 6. Lame parameters, names, parameter validation. */
static void test_parameters(tally *t)
{
  double mu, lambda;
  pbng_lame_parameters(1e5, 0.3, &mu, &lambda);
  check_le(t, fabs(mu - 500000.0 / 13.0), 1e-9, "Eq. 9 mu");
  check_le(t, fabs(lambda - 750000.0 / 13.0), 1e-9, "Eq. 9 lambda");
  pbng_lame_parameters(3.0, -0.5, &mu, &lambda); /* mu = 3/(2*0.5) = 3, lambda = -1.5/(0.5*2) = -1.5 */
  check_le(t, fabs(mu - 3.0) + fabs(lambda + 1.5), 1e-14, "Eq. 9 with nu < 0");
  pbng_material m;
  check(t, pbng_material_init(&m, PBNG_MATERIAL_COROTATED, 3.0, -0.5) == 0, "init nu = -0.5", 0, 0);
  check(t, m.hessian_lambda == 0.0 && m.lambda == -1.5 && m.mu == 3.0, "hessian_lambda = max(lambda, 0)", m.hessian_lambda, 0);
  check(t, pbng_material_init(&m, PBNG_MATERIAL_NEOHOOKEAN, 1e5, 0.3) == 0, "init valid", 0, 0);
  check(t, m.hessian_lambda == m.lambda && m.youngs == 1e5 && m.poisson == 0.3, "init fields", 0, 0);
  for (int mk = 0; mk < NKINDS; ++mk)
    for (int other = 0; other < mk; ++other)
      check(t, strcmp(pbng_material_kind_name(kinds[mk]), pbng_material_kind_name(kinds[other])) != 0, "each kind its own name", mk, other);
  const double bad[][2] = {{0.0, 0.3}, {-1.0, 0.3}, {1e5, 0.5}, {1e5, -1.0}, {1e5, 0.7}, {1e5, -1.5},
                           {NAN, 0.3}, {1e5, NAN}, {INFINITY, 0.3}, {1e5, INFINITY}};
  for (unsigned b = 0; b < sizeof bad / sizeof bad[0]; ++b)
    check(t, pbng_material_init(&m, PBNG_MATERIAL_COROTATED, bad[b][0], bad[b][1]) == -1, "init rejects bad E, nu",
          bad[b][0], bad[b][1]);
  check(t, pbng_material_init(&m, PBNG_MATERIAL_COUNT, 1e5, 0.3) == -1, "init rejects bad kind", 0, 0);
  check(t, pbng_material_init(&m, PBNG_MATERIAL_COROTATED, 1e5, 0.4999) == 0, "init nu = 0.4999", 0, 0);
}

/* 7. Polar rotation: R in SO(3), R^T F symmetric, global maximum of tr(R^T F), independent of the warm start. */
static void check_polar(tally *t, uint64_t *s, const double F[9], const char *label, int unique)
{
  double R[9], RtF[9], RtR[9], I[9], R2[9];
  char what[160];
  mat3_identity(I);
  pbng_polar_rotation(F, R, 0);
  const double fn = mat3_norm(F);
  mat3_tmul(R, R, RtR);
  snprintf(what, sizeof what, "%s: R orthonormal", label);
  check_le(t, max_abs_diff(RtR, I, 9), 1e-12, what);
  snprintf(what, sizeof what, "%s: det R = 1", label);
  check_le(t, fabs(mat3_det(R) - 1.0), 1e-12, what);
  mat3_tmul(R, F, RtF);
  snprintf(what, sizeof what, "%s: R^T F symmetric", label);
  check_le(t, fabs(RtF[1] - RtF[3]) + fabs(RtF[2] - RtF[6]) + fabs(RtF[5] - RtF[7]), 1e-10 * fn + 1e-300, what);
  const double best = mat3_ddot(R, F);
  double worst_gap = 0.0;
  for (int n = 0; n < 64; ++n) {
    double Q[9];
    random_rotation(s, Q);
    const double gap = mat3_ddot(Q, F) - best;
    if (gap > worst_gap) worst_gap = gap;
  }
  for (int a = 0; a < 3; ++a) { /* R followed by half turns: the other critical points */
    double H[9], RH[9];
    const double axis[3] = {a == 0, a == 1, a == 2};
    axis_angle_rotation(axis, PI, H);
    mat3_mul(R, H, RH);
    const double gap = mat3_ddot(RH, F) - best;
    if (gap > worst_gap) worst_gap = gap;
  }
  snprintf(what, sizeof what, "%s: tr(R^T F) global maximum", label);
  check_le(t, worst_gap, 1e-12 * fn, what);
  static const double turns[8] = {0, 0, 0, 0, 1e-4, 3e-5, 1e-5, 1e-6};
  for (int n = 0; n < 8; ++n) { /* warm starts: random unit quaternions, zeros, its own result, near it */
    double qd[4];
    float q[4];
    random_quaternion(s, qd);
    for (int k = 0; k < 4; ++k) q[k] = (n == 1) ? 0.0 : qd[k];
    pbng_polar_rotation(F, R2, q);
    if (n == 3) pbng_polar_rotation(F, R2, q);
    if (n >= 4) { /* turn the result by 1e-4 .. 1e-6 rad about x, then restart from there: the Newton
                     fast path's one-step acceptance (cubic convergence) must still be exact */
      const double c = cos(0.5 * turns[n]), sn = sin(0.5 * turns[n]), w = q[0], x = q[1], y = q[2], z = q[3];
      q[0] = (c * w - sn * x); q[1] = (c * x + sn * w);
      q[2] = (c * y - sn * z); q[3] = (c * z + sn * y);
      pbng_polar_rotation(F, R2, q);
    }
    snprintf(what, sizeof what, "%s: warm start %d gives the same R", label, n);
    if (unique) check_le(t, max_abs_diff(R, R2, 9), 1e-12, what);
    else check_le(t, fabs(mat3_ddot(R2, F) - best), 1e-12 * fn, what);
    double qn = 0.0;
    for (int k = 0; k < 4; ++k) qn += (double)q[k] * q[k];
    snprintf(what, sizeof what, "%s: warm-start quaternion written back", label);
    check_le(t, fabs(qn - 1.0), 1e-6, what);
  }
}

static void test_polar(tally *t, uint64_t *s)
{
  char label[96];
  for (int n = 0; n < 500; ++n) { /* random F of every case, and scaled */
    double F[9];
    random_F(s, n, F);
    const double scale = (n % 11 == 0) ? 1e-8 : (n % 13 == 0 ? 1e8 : 1.0);
    for (int k = 0; k < 9; ++k) F[k] *= scale;
    snprintf(label, sizeof label, "polar random case %d scale %g", n % 5, scale);
    check_polar(t, s, F, label, 1);
  }
  /* Exact answers: F = Q S with S symmetric, S's eigenvalues sigma1 >= sigma2 >= |sigma3|, any sign of sigma3. */
  for (int n = 0; n < 200; ++n) {
    double Q[9], V[9], S[9], F[9], R[9];
    const double sv[3] = {rng_uniform(s, 1.0, 2.0), rng_uniform(s, 0.5, 1.0), rng_uniform(s, -0.45, 0.45)};
    random_rotation(s, Q);
    random_rotation(s, V);
    compose_svd(V, sv, V, S);
    mat3_mul(Q, S, F);
    pbng_polar_rotation(F, R, 0);
    check_le(t, max_abs_diff(R, Q, 9), 1e-12, "polar of Q S recovers Q");
  }
  /* Rotations by nearly pi: a saddle point at the identity. */
  const double deltas[] = {1e-1, 1e-3, 1e-6, 1e-8, 1e-10, 1e-12, 1e-14, 1e-16, 0.0};
  for (int n = 0; n < 40; ++n)
    for (unsigned d = 0; d < sizeof deltas / sizeof deltas[0]; ++d) {
      double a[3], F[9], R[9];
      double an = 0.0;
      for (int k = 0; k < 3; ++k) {
        a[k] = (n < 3) ? (k == n) : rng_uniform(s, -1.0, 1.0);
        an += a[k] * a[k];
      }
      for (int k = 0; k < 3; ++k) a[k] /= sqrt(an);
      axis_angle_rotation(a, PI - deltas[d], F);
      snprintf(label, sizeof label, "polar near-pi rotation delta %g", deltas[d]);
      check_polar(t, s, F, label, 1);
      pbng_polar_rotation(F, R, 0);
      check_le(t, max_abs_diff(R, F, 9), 1e-12, "polar of a rotation is itself");
      double SF[9], D[9] = {1.0, 0, 0, 0, 0.5, 0, 0, 0, 0.25};
      mat3_mul(F, D, SF); /* stretched near-pi rotation */
      check_le(t, max_abs_diff((pbng_polar_rotation(SF, R, 0), R), F, 9), 1e-11, "polar of R diag(1, .5, .25)");
    }
  /* Degenerate F: zero, rank one, rank two: must be a maximizing rotation, no NaN. */
  for (int n = 0; n < 50; ++n) {
    double U[9], V[9], F[9];
    random_rotation(s, U);
    random_rotation(s, V);
    const double sv0[3] = {0, 0, 0};
    const double sv1[3] = {rng_uniform(s, 0.5, 2.0), 0, 0};
    const double sv2[3] = {rng_uniform(s, 1.0, 2.0), rng_uniform(s, 0.1, 0.9), 0};
    const double sv3[3] = {1.0, 1.0, -1.0}; /* improper orthogonal: degenerate maximum */
    compose_svd(U, sv0, V, F);
    check_polar(t, s, F, "polar F = 0", 0);
    compose_svd(U, sv1, V, F);
    check_polar(t, s, F, "polar rank one", 0);
    compose_svd(U, sv2, V, F);
    check_polar(t, s, F, "polar rank two", 1);
    compose_svd(U, sv3, V, F);
    check_polar(t, s, F, "polar improper orthogonal F", 0);
  }
}

/* 8. The fixed-step polar rotation (pbng_polar_warm_fixed, the SIMD sweep's path) from single-precision warm
 * starts at angles 0 .. pi from the rotation: whatever it accepts is the robust path's rotation (to 3e-13;
 * largest difference measured 8.6e-14, the robust path's own accuracy being ~1e-13 rad), its new warm
 * start is exactly R's quaternion, and it accepts every warm start within 1e-2 rad for each case of
 * random_F, inverted and nearly singular ones included (measured: all of them, and none from 0.1 rad on);
 * zeros, non-unit quaternions, NaN and F = 0 it declines. */
static void quat_turn(const double q[4], const double axis[3], double angle, double out[4])
{
  const double c = cos(0.5 * angle), s = sin(0.5 * angle), p[3] = {s * axis[0], s * axis[1], s * axis[2]};
  out[0] = c * q[0] - (p[0] * q[1] + p[1] * q[2] + p[2] * q[3]);
  out[1] = c * q[1] + p[0] * q[0] + p[1] * q[3] - p[2] * q[2];
  out[2] = c * q[2] + p[1] * q[0] + p[2] * q[1] - p[0] * q[3];
  out[3] = c * q[3] + p[2] * q[0] + p[0] * q[2] - p[1] * q[1];
}

static void check_polar_fixed(tally *t, uint64_t *s, const double F[9], const char *label, int unique, double *worst, int *accepted)
{
  static const double angles[] = {0.0, 1e-7, 1e-5, 1e-3, 1e-2, 3e-2, 0.1, 0.19, 0.3, 1.0, 2.0, 3.0, PI};
  double R0[9];
  float q0f[4] = {1.0f, 0.0f, 0.0f, 0.0f};
  char what[192];
  pbng_polar_rotation(F, R0, q0f); /* the robust path; its quaternion */
  const double q0[4] = {q0f[0], q0f[1], q0f[2], q0f[3]}, fn = mat3_norm(F), best = mat3_ddot(R0, F);
  for (unsigned n = 0; n < sizeof angles / sizeof angles[0]; ++n) {
    double axis[3], qw[4], qs[4], R[9], qn[4], Rq[9];
    double an = 0.0;
    for (int k = 0; k < 3; ++k) {
      axis[k] = rng_uniform(s, -1.0, 1.0);
      an += axis[k] * axis[k];
    }
    for (int k = 0; k < 3; ++k) axis[k] /= sqrt(an);
    quat_turn(q0, axis, angles[n], qw);
    for (int k = 0; k < 4; ++k) qs[k] = (float)qw[k]; /* stored in single precision, as in the solver */
    const int ok = pbng_polar_warm_fixed(F, qs, R, qn);
    accepted[n] += ok;
    if (!ok) continue;
    const double d = unique ? max_abs_diff(R, R0, 9) : fabs(mat3_ddot(R, F) - best) / (fn + 1e-300);
    if (d > *worst) *worst = d;
    snprintf(what, sizeof what, "%s: fixed steps from %g rad accepted the robust rotation", label, angles[n]);
    check_le(t, d, 3e-13, what);
    double RtR[9], RtF[9], I[9];
    mat3_identity(I);
    mat3_tmul(R, R, RtR);
    mat3_tmul(R, F, RtF);
    snprintf(what, sizeof what, "%s: fixed steps' R orthonormal, det 1, R^T F symmetric", label);
    check_le(t, max_abs_diff(RtR, I, 9) + fabs(mat3_det(R) - 1.0), 1e-12, what);
    check_le(t, fabs(RtF[1] - RtF[3]) + fabs(RtF[2] - RtF[6]) + fabs(RtF[5] - RtF[7]), 1e-10 * fn, what);
    pbng_unit_quat_rotation(qn, Rq);
    snprintf(what, sizeof what, "%s: fixed steps' warm start is R's quaternion", label);
    check_le(t, max_abs_diff(Rq, R, 9), 0.0, what);
  }
}

static void test_polar_fixed(tally *t, uint64_t *s)
{
  enum { NANGLES = 13 };
  int accepted[5][NANGLES] = {{0}}, degenerate[NANGLES] = {0};
  double worst = 0.0;
  char label[96];
  for (int n = 0; n < 1000; ++n) { /* every case of random_F: any, near I, inverted, nearly singular, inverted */
    double F[9];
    random_F(s, n, F);
    snprintf(label, sizeof label, "fixed-step polar, random case %d", n % 5);
    check_polar_fixed(t, s, F, label, 1, &worst, accepted[n % 5]);
  }
  for (int n = 0; n < 50; ++n) { /* rank one and rank two (maximiser not unique / unique), improper orthogonal */
    double U[9], V[9], F[9];
    const double sv[3][3] = {{rng_uniform(s, 0.5, 2.0), 0, 0}, {rng_uniform(s, 1.0, 2.0), rng_uniform(s, 0.1, 0.9), 0}, {1.0, 1.0, -1.0}};
    for (int c = 0; c < 3; ++c) {
      random_rotation(s, U);
      random_rotation(s, V);
      compose_svd(U, sv[c], V, F);
      check_polar_fixed(t, s, F, c == 1 ? "fixed-step polar, rank two" : "fixed-step polar, degenerate", c == 1, &worst, degenerate);
    }
  }
  for (int c = 0; c < 5; ++c) {
    for (int a = 0; a <= 4; ++a) /* angles[0..4]: within 1e-2 rad */
      check(t, accepted[c][a] == 200, "fixed-step polar accepts every warm start within 1e-2 rad", c, a);
    check(t, accepted[c][NANGLES - 1] == 0, "fixed-step polar declines a warm start turned by pi", c, accepted[c][NANGLES - 1]);
  }
  printf("fixed-step polar: largest difference to the robust rotation %.2e; accepted by case and angle:\n", worst);
  for (int c = 0; c < 5; ++c) {
    for (int a = 0; a < NANGLES; ++a) printf(" %3d", accepted[c][a]);
    printf("\n");
  }
  for (int a = 0; a < NANGLES; ++a) printf(" %3d", degenerate[a]);
  printf("\n");
  /* not a unit quaternion, NaN, F = 0: declined */
  const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Z[9] = {0}, qid[4] = {1, 0, 0, 0}, qzero[4] = {0}, qtwo[4] = {2, 0, 0, 0};
  const double Fnan[9] = {NAN, 0, 0, 0, 1, 0, 0, 0, 1};
  double R[9], qn[4];
  check(t, pbng_polar_warm_fixed(I, qid, R, qn) == 1 && max_abs_diff(R, I, 9) == 0.0, "fixed-step polar of I from I", 0, 0);
  check(t, pbng_polar_warm_fixed(I, qzero, R, qn) == 0, "fixed-step polar declines a zero warm start", 0, 0);
  check(t, pbng_polar_warm_fixed(I, qtwo, R, qn) == 0, "fixed-step polar declines a non-unit warm start", 0, 0);
  check(t, pbng_polar_warm_fixed(Fnan, qid, R, qn) == 0, "fixed-step polar declines a NaN F", 0, 0);
  check(t, pbng_polar_warm_fixed(Z, qid, R, qn) == 0, "fixed-step polar declines F = 0", 0, 0);
}

/* A kernel reached with a kind init rejects aborts (no silent default model): each kernel in a child. */
static void test_invalid_kind_aborts(tally *t)
{
  const double F[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int which = 0; which < 3; ++which) {
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      pbng_material m;
      pbng_material_init(&m, PBNG_MATERIAL_NEOHOOKEAN, 1e5, 0.3);
      m.kind = PBNG_MATERIAL_COUNT;
      double P[9], cof[9];
      if (!freopen("/dev/null", "w", stderr)) _exit(2);
      if (which == 0) (void)pbng_energy_density(&m, F);
      if (which == 1) pbng_first_piola(&m, F, P);
      if (which == 2) pbng_stress_and_cofactor(&m, F, P, cof, NULL);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    check(t, WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "invalid material kind aborts", which, 0);
  }
}

int main(void)
{
  tally t = {0, 0};
  uint64_t seed = 0x9E3779B97F4A7C15ULL;
  test_parameters(&t);
  test_rest_state(&t);
  test_stress_finite_differences(&t, &seed);
  test_stress_and_cofactor(&t, &seed);
  test_modified_hessian(&t, &seed);
  test_rotation_invariance(&t, &seed);
  test_log_neohookean(&t, &seed);
  test_stvk_node_block(&t, &seed);
  test_polar(&t, &seed);
  test_polar_fixed(&t, &seed);
  test_invalid_kind_aborts(&t);
  if (t.failures) {
    printf("test_material: %ld of %ld checks FAILED\n", t.failures, t.checks);
    return 1;
  }
  printf("test_material: %ld checks passed\n", t.checks);
  return 0;
}
