/* Inversion handling (src/core/inversion.c; docs/cloth.md#inversion-handling): the rotation SVD of random,
 * inverted, flattened (rank 2, 1, 0) and nearly coincident-singular-value F (U, V proper rotations, the
 * product reconstructs F, singular values ordered, the last negative exactly for det F < 0); the seed's
 * StVK stress with inversion handling equals the plain StVK stress F S while every singular value is at
 * least the clamp, stays bounded under any compression or inversion, is continuous across det F = 0,
 * and pushes an inverted direction back (P_33 < 0 for F = diag(1, 1, -1/2)). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/inversion.h"
#include "core/mat3.h"
#include "test_check.h"

static double rotation_error(const double R[9])
{
  double RtR[9], e = 0;
  mat3_tmul(R, R, RtR);
  for (int k = 0; k < 9; ++k) e = fmax(e, fabs(RtR[k] - (k % 4 == 0)));
  return fmax(e, fabs(mat3_det(R) - 1));
}

static double reconstruction_error(const double F[9], const double U[9], const double s[3], const double V[9])
{
  double e = 0, scale = 1e-300;
  for (int k = 0; k < 9; ++k) scale = fmax(scale, fabs(F[k]));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      double v = 0;
      for (int i = 0; i < 3; ++i) v += U[3 * r + i] * s[i] * V[3 * c + i];
      e = fmax(e, fabs(v - F[3 * r + c]));
    }
  return e / fmax(scale, 1.0);
}

static void check_svd(const char *what, const double F[9])
{
  double U[9], s[3], V[9];
  char msg[160];
  pbng_svd3_rotations(F, U, s, V);
  snprintf(msg, sizeof(msg), "%s: U, V rotations", what);
  check(rotation_error(U) < 1e-12 && rotation_error(V) < 1e-12, msg, rotation_error(U), rotation_error(V));
  snprintf(msg, sizeof(msg), "%s: U diag(s) V^T = F", what);
  check(reconstruction_error(F, U, s, V) < 1e-12, msg, reconstruction_error(F, U, s, V), 0);
  snprintf(msg, sizeof(msg), "%s: s0 >= s1 >= |s2|, s2 < 0 iff det F < 0", what);
  const double det = mat3_det(F);
  check(s[0] >= s[1] && s[1] >= fabs(s[2]) - 1e-14 && ((s[2] < 0) == (det < 0) || fabs(det) < 1e-14), msg, s[2], det);
}

/* Plain StVK: P = F (2 mu E + lambda tr(E) I), E = (F^T F - I)/2. */
static void stvk(double mu, double lambda, const double F[9], double P[9])
{
  double C[9], S[9];
  mat3_tmul(F, F, C);
  const double tr = 0.5 * (C[0] + C[4] + C[8] - 3);
  for (int k = 0; k < 9; ++k) S[k] = mu * (C[k] - (k % 4 == 0)) + (k % 4 == 0 ? lambda * tr : 0.0);
  mat3_mul(F, S, P);
}

int main(void)
{
  uint64_t seed = 3;
  for (int t = 0; t < 500; ++t) {
    double F[9];
    for (int k = 0; k < 9; ++k) F[k] = (k % 4 == 0) + 0.8 * (2 * next_random(&seed) - 1);
    check_svd(t % 2 ? "random F" : "random F (second half)", F);
  }
  const double flat[9] = {1, 0.2, 0, 0.1, 1, 0, 0.3, -0.2, 0}, line[9] = {1, 2, 3, 2, 4, 6, -1, -2, -3}, zero[9] = {0};
  const double inverted[9] = {1, 0, 0, 0, 1, 0, 0, 0, -0.5}, twin[9] = {1, 1e-9, 0, 0, 1, 0, 0, 0, 0.999999999};
  check_svd("flattened (rank 2)", flat);
  check_svd("rank 1", line);
  check_svd("zero", zero);
  check_svd("inverted", inverted);
  check_svd("nearly equal singular values", twin);

  const double mu = 300, lambda = 700;
  double worst_equal = 0, largest = 0;
  for (int t = 0; t < 500; ++t) {
    double F[9], P[9], Q[9], U[9], s[3], V[9];
    for (int k = 0; k < 9; ++k) F[k] = (k % 4 == 0) + 0.25 * (2 * next_random(&seed) - 1);
    pbng_svd3_rotations(F, U, s, V);
    (void)pbng_stvk_energy_inversion_safe(mu, lambda, F, P);
    if (s[2] >= PBNG_STVK_CLAMP_STRETCH) {
      stvk(mu, lambda, F, Q);
      for (int k = 0; k < 9; ++k) worst_equal = fmax(worst_equal, fabs(P[k] - Q[k]) / (mu + lambda));
    }
    for (int k = 0; k < 9; ++k) F[k] = 1.5 * (2 * next_random(&seed) - 1); /* anything: compressed, inverted */
    (void)pbng_stvk_energy_inversion_safe(mu, lambda, F, P);
    pbng_svd3_rotations(F, U, s, V);
    double n = 0;
    for (int k = 0; k < 9; ++k) n += P[k] * P[k];
    largest = fmax(largest, sqrt(n) / ((mu + lambda) * (1 + s[0] * s[0] * s[0])));
  }
  check(worst_equal < 1e-12, "StVK with inversion handling = plain StVK above the clamp", worst_equal, 0);
  check(largest < 10, "StVK with inversion handling bounded (relative to the stretch's own stress)", largest, 10);
  double Pp[9], Pm[9], diff = 0;
  const double Fp[9] = {1.1, 0.1, 0, 0, 0.9, 0, 0, 0, 1e-9}, Fm[9] = {1.1, 0.1, 0, 0, 0.9, 0, 0, 0, -1e-9};
  (void)pbng_stvk_energy_inversion_safe(mu, lambda, Fp, Pp), (void)pbng_stvk_energy_inversion_safe(mu, lambda, Fm, Pm);
  for (int k = 0; k < 9; ++k) diff = fmax(diff, fabs(Pp[k] - Pm[k]));
  check(diff < 1e-6 * (mu + lambda), "continuous across det F = 0", diff, 0);
  double P[9];
  (void)pbng_stvk_energy_inversion_safe(mu, lambda, inverted, P);
  check(P[8] < 0, "inverted diag(1, 1, -1/2): P_33 < 0 pushes the third axis back", P[8], 0);
  /* the energy that goes with it: its central differences give P above the clamp; a mirrored element
   * (F^T F = I: plain StVK energy 0) has a positive energy */
  double worst_fd = 0;
  for (int t = 0; t < 100; ++t) {
    double F[9], U[9], s[3], V[9];
    for (int k = 0; k < 9; ++k) F[k] = (k % 4 == 0) + 0.2 * (2 * next_random(&seed) - 1);
    pbng_svd3_rotations(F, U, s, V);
    if (s[2] < PBNG_STVK_CLAMP_STRETCH + 0.01) continue;
    (void)pbng_stvk_energy_inversion_safe(mu, lambda, F, P);
    for (int k = 0; k < 9; ++k) {
      const double h = 1e-6, keep = F[k];
      F[k] = keep + h;
      const double ep = pbng_stvk_energy_inversion_safe(mu, lambda, F, NULL);
      F[k] = keep - h;
      const double em = pbng_stvk_energy_inversion_safe(mu, lambda, F, NULL);
      F[k] = keep;
      worst_fd = fmax(worst_fd, fabs((ep - em) / (2 * h) - P[k]) / (mu + lambda));
    }
  }
  check(worst_fd < 1e-7, "its energy's central differences = P above the clamp", worst_fd, 0);
  const double mirrored[9] = {1, 0, 0, 0, 1, 0, 0, 0, -1};
  check(pbng_stvk_energy_inversion_safe(mu, lambda, mirrored, NULL) > 0.1 * mu, "a mirrored element has positive energy",
        pbng_stvk_energy_inversion_safe(mu, lambda, mirrored, NULL), 0);
  const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  check(pbng_stvk_energy_inversion_safe(mu, lambda, identity, NULL) == 0, "zero energy at rest", pbng_stvk_energy_inversion_safe(mu, lambda, identity, NULL), 0);
  printf("test_inversion: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
