/* Exact energy-density Hessians dP/dF (for the Newton baseline) against central differences of P,
 * their major symmetry, the linear-elasticity tensor at F = I, and the tetrahedron stiffness against
 * differences of the element forces (and its rigid translations). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/mat3.h"
#include "core/stress_derivative.h"
#include "problem/psd_projection.h"
#include <petscblaslapack.h>

static int checks, failures;

static void check(int ok, const char *what, double a, double b)
{
  ++checks;
  if (!ok) {
    ++failures;
    if (failures < 20) printf("FAIL: %s (%.10g vs %.10g)\n", what, a, b);
  }
}

static double uniform(uint64_t *s, double lo, double hi)
{
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

/* A random F near a rotation times a stretch, det > 0 (and with det < 0 when inverted). */
static void random_F(uint64_t *s, int inverted, double F[9])
{
  for (int k = 0; k < 9; ++k) F[k] = (k % 4 == 0 ? 1.0 : 0.0) + uniform(s, -0.45, 0.45);
  if (inverted) F[0] = -F[0], F[1] = -F[1], F[2] = -F[2];
}

static void check_against_differences(const pbng_material *m, const double F[9], const char *label)
{
  double D[81], scale = 0.0;
  char what[128];
  pbng_stress_derivative(m, F, D);
  for (int p = 0; p < 81; ++p) scale = fmax(scale, fabs(D[p]));
  for (int q = 0; q < 9; ++q) {
    double Fp[9], Fm[9], Pp[9], Pm[9];
    const double h = 1e-6;
    for (int k = 0; k < 9; ++k) Fp[k] = Fm[k] = F[k];
    Fp[q] += h, Fm[q] -= h;
    pbng_first_piola(m, Fp, Pp);
    pbng_first_piola(m, Fm, Pm);
    for (int p = 0; p < 9; ++p) {
      const double fd = (Pp[p] - Pm[p]) / (2 * h);
      snprintf(what, sizeof(what), "%s: dP/dF (%d,%d) vs differences", label, p, q);
      check(fabs(fd - D[9 * p + q]) <= 1e-6 * scale, what, D[9 * p + q], fd);
      snprintf(what, sizeof(what), "%s: major symmetry (%d,%d)", label, p, q);
      check(fabs(D[9 * p + q] - D[9 * q + p]) <= 1e-9 * scale, what, D[9 * p + q], D[9 * q + p]);
    }
  }
}

static void check_linear_elasticity(const pbng_material *m, const char *label)
{
  const double Id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double D[81];
  char what[192]; /* label (any length) + 4 indices: room for GCC -O1 -Wformat-truncation */
  pbng_stress_derivative(m, Id, D);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        for (int l = 0; l < 3; ++l) {
          const double c = m->lambda * (i == j) * (k == l) + m->mu * ((i == k) * (j == l) + (i == l) * (j == k));
          snprintf(what, sizeof(what), "%.120s: dP/dF(I) = C_lin (%d%d%d%d)", label, i, j, k, l);
          check(fabs(D[9 * (3 * i + j) + 3 * k + l] - c) <= 1e-9 * m->youngs, what, D[9 * (3 * i + j) + 3 * k + l], c);
        }
}

/* Element forces -V P g_a at positions x: the stiffness is their negative derivative. */
static void element_forces(const pbng_material *m, const double x[12], const double B[9], double V, double f[12])
{
  double F[9], P[9];
  pbng_tet_deformation_gradient(&x[0], &x[3], &x[6], &x[9], B, F);
  pbng_first_piola(m, F, P);
  for (int a = 0; a < 4; ++a) {
    double g[3], Pg[3];
    pbng_tet_shape_gradient(B, a, g);
    mat3_vec(P, g, Pg);
    for (int d = 0; d < 3; ++d) f[3 * a + d] = -V * Pg[d];
  }
}

static void check_stiffness(const pbng_material *m, uint64_t *s, const char *label)
{
  const double X[12] = {0, 0, 0, 1, 0.1, 0, 0.2, 1, 0, 0.1, 0.3, 1.2};
  double B[9], x[12], F[9], D[81], K[144], scale = 0.0;
  char what[128];
  const double V = pbng_tet_rest_shape(&X[0], &X[3], &X[6], &X[9], B);
  for (int k = 0; k < 12; ++k) x[k] = X[k] + uniform(s, -0.2, 0.2);
  pbng_tet_deformation_gradient(&x[0], &x[3], &x[6], &x[9], B, F);
  pbng_stress_derivative(m, F, D);
  pbng_tet_stiffness(D, B, V, K);
  for (int p = 0; p < 144; ++p) scale = fmax(scale, fabs(K[p]));
  for (int q = 0; q < 12; ++q) {
    double xp[12], xm[12], fp[12], fm[12];
    const double h = 1e-6;
    for (int k = 0; k < 12; ++k) xp[k] = xm[k] = x[k];
    xp[q] += h, xm[q] -= h;
    element_forces(m, xp, B, V, fp);
    element_forces(m, xm, B, V, fm);
    for (int p = 0; p < 12; ++p) {
      const double fd = -(fp[p] - fm[p]) / (2 * h);
      snprintf(what, sizeof(what), "%s: stiffness (%d,%d) vs force differences", label, p, q);
      check(fabs(fd - K[12 * p + q]) <= 1e-6 * scale, what, K[12 * p + q], fd);
    }
  }
  for (int p = 0; p < 12; ++p)
    for (int d = 0; d < 3; ++d) { /* a rigid translation along d costs no force */
      double t = 0.0;
      for (int b = 0; b < 4; ++b) t += K[12 * p + 3 * b + d];
      snprintf(what, sizeof(what), "%s: stiffness annihilates translations", label);
      check(fabs(t) <= 1e-9 * scale, what, t, 0.0);
    }
}

/* Smallest eigenvalue of a symmetric 12x12 matrix. */
static double smallest_eigenvalue(const double K[144])
{
  double A[144], w[12], work[144];
  PetscBLASInt n = 12, lwork = 144, info;
  for (int k = 0; k < 144; ++k) A[k] = K[k];
  LAPACKsyev_("N", "U", &n, A, &n, w, work, &lwork, &info);
  return w[0];
}

/* The PSD projection of a stiffness at a strongly compressed or inverted F has no negative
 * eigenvalue, keeps symmetry, and leaves an already PSD stiffness unchanged. */
static PetscErrorCode check_psd_projection(const pbng_material *m, uint64_t *s, const char *label)
{
  const double X[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  double B[9], F[9], D[81], K[144], Kp[144], scale = 0.0;
  char what[128];
  const double V = pbng_tet_rest_shape(&X[0], &X[3], &X[6], &X[9], B);

  PetscFunctionBeginUser;
  random_F(s, m->kind != PBNG_MATERIAL_COROTATED, F);
  for (int k = 0; k < 9; ++k) F[k] *= 0.3; /* compressed: the energy is not convex here */
  pbng_stress_derivative(m, F, D);
  pbng_tet_stiffness(D, B, V, K);
  for (int p = 0; p < 144; ++p) Kp[p] = K[p], scale = fmax(scale, fabs(K[p]));
  PetscCheck(pbng_project_psd(12, Kp) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "PSD projection failed");
  snprintf(what, sizeof(what), "%s: projected stiffness is PSD", label);
  check(smallest_eigenvalue(Kp) >= -1e-10 * scale, what, smallest_eigenvalue(Kp), 0.0);
  for (int p = 0; p < 12; ++p)
    for (int q = 0; q < 12; ++q) {
      snprintf(what, sizeof(what), "%s: projected stiffness is symmetric", label);
      check(fabs(Kp[12 * p + q] - Kp[12 * q + p]) <= 1e-10 * scale, what, Kp[12 * p + q], Kp[12 * q + p]);
    }
  /* the projection of a PSD matrix is itself */
  for (int p = 0; p < 144; ++p) K[p] = Kp[p];
  PetscCheck(pbng_project_psd(12, Kp) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "PSD projection failed");
  double diff = 0.0;
  for (int p = 0; p < 144; ++p) diff = fmax(diff, fabs(Kp[p] - K[p]));
  snprintf(what, sizeof(what), "%s: projection is idempotent", label);
  check(diff <= 1e-9 * scale, what, diff, 0.0);
  /* projecting dP/dF (9x9) instead gives a PSD element stiffness too: K = V G^T D G */
  pbng_stress_derivative(m, F, D);
  PetscCheck(pbng_project_psd(9, D) == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "PSD projection failed");
  pbng_tet_stiffness(D, B, V, K);
  snprintf(what, sizeof(what), "%s: stiffness from the projected dP/dF is PSD", label);
  check(smallest_eigenvalue(K) >= -1e-10 * scale, what, smallest_eigenvalue(K), 0.0);
  PetscFunctionReturn(0);
}

/* Elastoplastic StVK (material.h pbng_stvk_subtract_plastic): P = F S(E - eps_p) against differences of
 * the energy mu tr(E_el^2) + lambda/2 tr(E_el)^2, and pbng_stress_derivative_plastic against
 * differences of P; eps_p = 0 gives the plain StVK energy. */
static void check_plastic_stvk(uint64_t *s)
{
  pbng_material m;
  pbng_material_init(&m, PBNG_MATERIAL_STVK, 1e5, 0.3);
  for (int t = 0; t < 50; ++t) {
    double F[9], ep[6], S[9], P[9], D[81], scale = 0.0, worst = 0.0;
    char what[128];
    random_F(s, t % 4 == 3, F);
    for (int c = 0; c < 6; ++c) ep[c] = uniform(s, -0.1, 0.1);
    pbng_stvk_second_piola(&m, F, S);
    pbng_stvk_subtract_plastic(&m, ep, S);
    mat3_mul(F, S, P);
    pbng_stress_derivative_plastic(&m, F, ep, D);
    for (int k = 0; k < 9; ++k) {
      const double h = 1e-6, F0 = F[k];
      double Fp[9], Fm[9], Sp[9], Sm[9], Pp[9], Pm[9];
      memcpy(Fp, F, sizeof(Fp)), memcpy(Fm, F, sizeof(Fm));
      Fp[k] = F0 + h, Fm[k] = F0 - h;
      const double dpsi = (pbng_stvk_energy_density_plastic(&m, Fp, ep) - pbng_stvk_energy_density_plastic(&m, Fm, ep)) / (2 * h);
      snprintf(what, sizeof(what), "plastic StVK: P = dPsi/dF (sample %d, entry %d)", t, k);
      check(fabs(dpsi - P[k]) <= 1e-6 * (1e5 + fabs(P[k])), what, P[k], dpsi);
      pbng_stvk_second_piola(&m, Fp, Sp), pbng_stvk_subtract_plastic(&m, ep, Sp), mat3_mul(Fp, Sp, Pp);
      pbng_stvk_second_piola(&m, Fm, Sm), pbng_stvk_subtract_plastic(&m, ep, Sm), mat3_mul(Fm, Sm, Pm);
      for (int ij = 0; ij < 9; ++ij) {
        worst = fmax(worst, fabs((Pp[ij] - Pm[ij]) / (2 * h) - D[9 * ij + k]));
        scale = fmax(scale, fabs(D[9 * ij + k]));
      }
    }
    snprintf(what, sizeof(what), "plastic StVK: dP/dF against differences (sample %d)", t);
    check(worst <= 1e-6 * scale, what, worst, scale);
    const double zero[6] = {0};
    snprintf(what, sizeof(what), "plastic StVK with eps_p = 0 is StVK (sample %d)", t);
    check(fabs(pbng_stvk_energy_density_plastic(&m, F, zero) - pbng_energy_density(&m, F)) <= 1e-12 * (1 + pbng_energy_density(&m, F)), what,
          pbng_stvk_energy_density_plastic(&m, F, zero), pbng_energy_density(&m, F));
  }
}

int main(int argc, char **argv)
{
  uint64_t seed = 0x2545f4914f6cdd1dull;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  for (int kind = 0; kind < PBNG_MATERIAL_COUNT; ++kind) {
    pbng_material m;
    char label[64];
    pbng_material_init(&m, (pbng_material_kind)kind, 1e5, 0.3);
    snprintf(label, sizeof(label), "%s", pbng_material_kind_name(m.kind));
    check_linear_elasticity(&m, label);
    for (int t = 0; t < 100; ++t) {
      double F[9];
      /* inverted F only where dP/dF is smooth there (the corotated rotation derivative is singular
         where tr(S) I - S is) */
      random_F(&seed, kind != PBNG_MATERIAL_COROTATED && t % 4 == 3, F);
      check_against_differences(&m, F, label);
    }
    for (int t = 0; t < 20; ++t) check_stiffness(&m, &seed, label);
    for (int t = 0; t < 20; ++t) PetscCall(check_psd_projection(&m, &seed, label));
  }
  check_plastic_stvk(&seed);
  printf("test_stress_derivative: %d checks, %d failed\n", checks, failures);
  PetscCall(PetscFinalize());
  return failures != 0;
}
