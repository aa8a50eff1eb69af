/* Hyperelastic energy densities of Sec. 3.1 (Eq. 7, 8, 10 with the Lame adjustments of Sec. 8; StVK; the
 * log-barrier neo-Hookean model of the GPBD seed's Eq. 20), their first Piola-Kirchhoff stresses, and the
 * polar rotation R(F) of the corotated model. */
#include "core/material.h"
#include "core/mat3.h"
#include "core/polar.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const material_names[PBNG_MATERIAL_COUNT] = {"corotated", "neohookean", "stable_neohookean", "stvk",
                                                                        "neohookean_log"};

void pbng_lame_parameters(double youngs, double poisson, double *mu, double *lambda)
{
  /* Eq. 9 */
  *mu = youngs / (2.0 * (1.0 + poisson));
  *lambda = youngs * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
}

const char *pbng_material_kind_name(pbng_material_kind kind)
{
  if ((int)kind < 0 || kind >= PBNG_MATERIAL_COUNT) return "unknown";
  return material_names[kind];
}

_Noreturn void pbng_material_kind_invalid(int kind)
{
  fprintf(stderr, "pbng: internal error: material kind %d is none of the %d known models\n", kind, (int)PBNG_MATERIAL_COUNT);
  abort();
}

int pbng_material_init(pbng_material *m, pbng_material_kind kind, double youngs, double poisson)
{
  if ((int)kind < 0 || kind >= PBNG_MATERIAL_COUNT) return -1;
  if (!isfinite(youngs) || !isfinite(poisson) || !(youngs > 0.0) || !(poisson > -1.0) || !(poisson < 0.5))
    return -1;
  double mu, lambda;
  pbng_lame_parameters(youngs, poisson, &mu, &lambda);
  m->kind = kind;
  m->youngs = youngs;
  m->poisson = poisson;
  m->mu = mu;
  m->lambda = lambda;
  m->hessian_lambda = lambda > 0.0 ? lambda : 0.0; /* Eq. 36 stays SPD for nu < 0 */
  switch (kind) {
  case PBNG_MATERIAL_COROTATED: /* Eq. 7 */
    m->k_shear = mu;
    m->k_volume = lambda;
    m->j_rest = 0.0;
    break;
  case PBNG_MATERIAL_NEOHOOKEAN: { /* Eq. 8: lambda_hat = lambda + mu > 0 for every nu in (-1, 0.5) */
    const double lambda_hat = lambda + mu;
    m->k_shear = mu;
    m->k_volume = lambda_hat;
    m->j_rest = mu / lambda_hat;
    break;
  }
  case PBNG_MATERIAL_STABLE_NEOHOOKEAN: { /* Eq. 10 with Sec. 8: mu' = 4mu/3, lambda' = lambda + 5mu/6 > 0 for every nu in (-1, 0.5) */
    const double mu_p = 4.0 * mu / 3.0, lambda_p = lambda + 5.0 * mu / 6.0;
    m->k_shear = mu_p;
    m->k_volume = lambda_p;
    m->j_rest = 3.0 * mu_p / (4.0 * lambda_p);
    break;
  }
  case PBNG_MATERIAL_STVK: /* seed Eq. 3: mu tr(E^2) + lambda/2 tr(E)^2 */
    m->k_shear = mu;
    m->k_volume = lambda;
    m->j_rest = 0.0;
    break;
  case PBNG_MATERIAL_NEOHOOKEAN_LOG: /* GPBD seed Eq. 20: mu/2 (|F|^2 - 3) - mu log J + lambda/2 (log J)^2, at rest at J = 1 */
    if (lambda < 0.0) return -1;     /* nu < 0: unbounded below as J -> 0 */
    m->k_shear = mu;
    m->k_volume = lambda;
    m->j_rest = 0.0;
    break;
  default: return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------------------------
 * Polar rotation: R = argmax over SO(3) of tr(R^T F) (= argmin |F - R|_F).
 * Rotations are unit quaternions (w, x, y, z). With M = F R^T and R <- exp([w]x) R, the objective
 * f(w) = tr(exp(-[w]x) M) has gradient g = (M21 - M12, M02 - M20, M10 - M01) and Hessian -H,
 * H = tr(M) I - sym(M). Newton steps w = H^{-1} g where H is SPD (near the maximum, converges
 * quadratically), otherwise the step of Mueller et al. 2016, w = g / |tr M|. A critical point with H
 * positive semidefinite is the global maximum; otherwise (saddle, or no convergence) Horn's 4x4 quaternion
 * eigenproblem (Jacobi) gives a global maximizer, polished by the same iteration.
 * --------------------------------------------------------------------------------------------------------- */

enum { POLAR_MAX_ITERATIONS = 50, JACOBI_MAX_SWEEPS = 30 };

static void quat_to_rotation(const double q[4], double R[9])
{
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  const double xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z;
  const double wx = w * x, wy = w * y, wz = w * z;
  R[0] = 1.0 - 2.0 * (yy + zz); R[1] = 2.0 * (xy - wz);       R[2] = 2.0 * (xz + wy);
  R[3] = 2.0 * (xy + wz);       R[4] = 1.0 - 2.0 * (xx + zz); R[5] = 2.0 * (yz - wx);
  R[6] = 2.0 * (xz - wy);       R[7] = 2.0 * (yz + wx);       R[8] = 1.0 - 2.0 * (xx + yy);
}

static void quat_normalize(double q[4])
{
  const double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  const double e = n2 - 1.0;
  /* near unit length (a float warm start, a product of unit quaternions): 1/sqrt(1 + e) by its series,
   * error 35/128 e^4 < 3e-17, no division on the iteration's critical path */
  const double s = fabs(e) < 1e-4 ? 1.0 - e * (0.5 - e * (0.375 - 0.3125 * e)) : 1.0 / sqrt(n2);
  for (int k = 0; k < 4; ++k) q[k] *= s;
}

/* q <- exp(w) q: rotate by the world-frame rotation vector w (|w| = angle). */
static void quat_rotate_left(double q[4], const double w[3], double angle_sq)
{
  const double h2 = 0.25 * angle_sq; /* (angle / 2)^2 */
  double c, s;                       /* cos(angle/2), sin(angle/2) / angle */
  if (h2 < 1e-6) {
    c = 1.0 - h2 * (0.5 - h2 / 24.0);
    s = 0.5 * (1.0 - h2 * (1.0 / 6.0 - h2 / 120.0));
  } else {
    const double h = sqrt(h2);
    c = cos(h);
    s = sin(h) / (2.0 * h);
  }
  const double pw = c, px = s * w[0], py = s * w[1], pz = s * w[2];
  const double qw = q[0], qx = q[1], qy = q[2], qz = q[3];
  q[0] = pw * qw - px * qx - py * qy - pz * qz;
  q[1] = pw * qx + px * qw + py * qz - pz * qy;
  q[2] = pw * qy + py * qw + pz * qx - px * qz;
  q[3] = pw * qz + pz * qw + px * qy - py * qx;
  quat_normalize(q);
}

/* Largest eigenvalue of the symmetric part of M (trigonometric solution of the characteristic cubic). */
static double sym_largest_eigenvalue(const double M[9])
{
  const double a = M[0], b = M[4], c = M[8];
  const double d = 0.5 * (M[1] + M[3]), e = 0.5 * (M[5] + M[7]), f = 0.5 * (M[2] + M[6]);
  const double p1 = d * d + e * e + f * f;
  const double m = (a + b + c) / 3.0;
  const double p2 = (a - m) * (a - m) + (b - m) * (b - m) + (c - m) * (c - m) + 2.0 * p1;
  if (p2 <= 0.0) return m;
  const double p = sqrt(p2 / 6.0);
  const double B[9] = {(a - m) / p, d / p, f / p, d / p, (b - m) / p, e / p, f / p, e / p, (c - m) / p};
  double r = 0.5 * mat3_det(B);
  r = r < -1.0 ? -1.0 : (r > 1.0 ? 1.0 : r);
  return m + 2.0 * p * cos(acos(r) / 3.0);
}

/* Newton / Mueller iteration from q. Returns 1 when it ended at a maximum of tr(R^T F) (then R = R(q)). */
static int polar_iterate(const double F[9], double fnorm, double q[4], double R[9])
{
  const double tiny = 1e-12 * fnorm + DBL_MIN;
  for (int it = 0; it < POLAR_MAX_ITERATIONS; ++it) {
    quat_to_rotation(q, R);
    double M[9]; /* M = F R^T */
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        M[3 * r + c] = F[3 * r] * R[3 * c] + F[3 * r + 1] * R[3 * c + 1] + F[3 * r + 2] * R[3 * c + 2];
    const double g0 = M[7] - M[5], g1 = M[2] - M[6], g2 = M[3] - M[1];
    const double tr = M[0] + M[4] + M[8];
    /* H = tr(M) I - sym(M); SPD <=> LDL^T pivots d0 = a, d1 = A22 / a, d2 = det / A22 positive (each
     * required above 1e-12 tr(M), the scale of H), tested without divisions */
    const double a = M[4] + M[8], b = M[0] + M[8], c = M[0] + M[4];
    const double d = -0.5 * (M[1] + M[3]), e = -0.5 * (M[5] + M[7]), f = -0.5 * (M[2] + M[6]);
    const double A00 = b * c - e * e, A11 = a * c - f * f, A22 = a * b - d * d; /* adjugate of H */
    const double A01 = f * e - d * c, A02 = d * e - f * b, A12 = d * f - a * e;
    const double det = a * A00 + d * A01 + f * A02;
    const double pivot_min = 1e-12 * tr;
    double w[3];
    const int newton = tr > 0.0 && a > pivot_min && A22 > pivot_min * a && det > pivot_min * A22;
    if (newton) { /* Newton step w = H^{-1} g = adj(H) g / det(H) */
      const double s = 1.0 / det;
      w[0] = (A00 * g0 + A01 * g1 + A02 * g2) * s;
      w[1] = (A01 * g0 + A11 * g1 + A12 * g2) * s;
      w[2] = (A02 * g0 + A12 * g1 + A22 * g2) * s;
    } else { /* Mueller et al. 2016 step */
      const double s = 1.0 / (fabs(tr) + tiny);
      w[0] = g0 * s; w[1] = g1 * s; w[2] = g2 * s;
    }
    double angle_sq = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
    if (!(angle_sq >= 1e-26)) { /* converged (or NaN input): first-order condition holds */
      if (newton) return 1;
      /* second-order condition: H = tr(M) I - sym(M) positive semidefinite */
      return sym_largest_eigenvalue(M) <= tr + 1e-9 * fnorm;
    }
    if (angle_sq > 1.0) { /* limit far-from-optimum steps to 1 radian */
      const double s = 1.0 / sqrt(angle_sq);
      w[0] *= s; w[1] *= s; w[2] *= s;
      angle_sq = 1.0;
    }
    quat_rotate_left(q, w, angle_sq);
    /* Newton converges quadratically: the next step would be about |w|^2 |M| / lambda_min(H), with
     * lambda_min(H) >= 4 det(H) / tr(H)^2. Stop when that estimate is below 2.5e-14 radian. */
    if (newton) {
      const double trh = 2.0 * tr;
      if (angle_sq * fnorm * trh * trh < 1e-13 * det) {
        quat_to_rotation(q, R);
        return 1;
      }
    }
  }
  quat_to_rotation(q, R);
  return 0;
}

/* Horn's method: the maximizer of tr(R(q)^T F) = q^T N q over unit q is N's top eigenvector (Jacobi). */
static void horn_quaternion(const double F[9], double q[4])
{
  double N[4][4] = {
    {F[0] + F[4] + F[8], F[7] - F[5], F[2] - F[6], F[3] - F[1]},
    {F[7] - F[5], F[0] - F[4] - F[8], F[1] + F[3], F[2] + F[6]},
    {F[2] - F[6], F[1] + F[3], -F[0] + F[4] - F[8], F[5] + F[7]},
    {F[3] - F[1], F[2] + F[6], F[5] + F[7], -F[0] - F[4] + F[8]},
  };
  double V[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
  for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; ++sweep) {
    double off = 0.0, diag = 0.0;
    for (int i = 0; i < 4; ++i) {
      diag += N[i][i] * N[i][i];
      for (int j = i + 1; j < 4; ++j) off += N[i][j] * N[i][j];
    }
    if (!(off > 1e-32 * diag) || off == 0.0) break;
    for (int p = 0; p < 3; ++p)
      for (int r = p + 1; r < 4; ++r) {
        if (N[p][r] == 0.0) continue;
        const double theta = (N[r][r] - N[p][p]) / (2.0 * N[p][r]);
        const double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        for (int k = 0; k < 4; ++k) { /* columns: N <- N P, V <- V P */
          const double a = N[k][p], b = N[k][r];
          N[k][p] = c * a - s * b;
          N[k][r] = s * a + c * b;
          const double va = V[k][p], vb = V[k][r];
          V[k][p] = c * va - s * vb;
          V[k][r] = s * va + c * vb;
        }
        for (int k = 0; k < 4; ++k) { /* rows: N <- P^T N */
          const double a = N[p][k], b = N[r][k];
          N[p][k] = c * a - s * b;
          N[r][k] = s * a + c * b;
        }
      }
  }
  int best = 0;
  for (int i = 1; i < 4; ++i)
    if (N[i][i] > N[best][best]) best = i;
  for (int k = 0; k < 4; ++k) q[k] = V[k][best];
  quat_normalize(q);
}

/* The scalar hot path: Newton steps (pbng_polar_newton_step) from the warm start qf, the rotation found at
 * this element's previous visit, at most POLAR_WARM_STEPS of them, each while H is SPD and the step below
 * 0.2 rad. Returns 1 with R and qf set once a step is final (pbng_polar_step_final: the remaining error is
 * below ~1e-13 rad); 0 when the general iteration must take over from q (unit, advanced by the steps
 * accepted). */
enum { POLAR_WARM_STEPS = 4 };
static int polar_warm_newton(const double F[9], double fsq, float qf[4], double R[9], double q[4])
{
  for (int k = 0; k < 4; ++k) q[k] = qf[k];
  const double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  if (!(fabs(n2 - 1.0) < 1e-5)) return 0; /* not a stored unit quaternion */
  for (int step = 0; step < POLAR_WARM_STEPS; ++step) {
    double next[4] = {q[0], q[1], q[2], q[3]};
    const pbng_polar_step st = pbng_polar_newton_step(F, next);
    if (!st.spd || !(st.angle_sq < 0.04)) return 0; /* a large step: the general iteration (exact exponential) takes it */
    for (int k = 0; k < 4; ++k) q[k] = next[k];
    if (pbng_polar_step_final(st, fsq)) {
      pbng_unit_quat_rotation(q, R);
      for (int k = 0; k < 4; ++k) qf[k] = (float)q[k];
      return 1;
    }
  }
  return 0;
}

void pbng_polar_rotation(const double F[9], double R[9], float qf[4])
{
  const double fsq = mat3_frobenius_sq(F);
  double q[4] = {1.0, 0.0, 0.0, 0.0};
  if (qf && polar_warm_newton(F, fsq, qf, R, q)) return;
  const double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  if (n2 > 0.81 && n2 < 1.21) /* a unit quaternion (up to rounding): warm start */
    quat_normalize(q);
  else /* cold start (no q, or q not a unit quaternion, e.g. zeros) */
    q[0] = 1.0, q[1] = q[2] = q[3] = 0.0;
  const double fnorm = sqrt(fsq);
  if (!polar_iterate(F, fnorm, q, R)) {
    horn_quaternion(F, q);
    polar_iterate(F, fnorm, q, R);
  }
  if (qf)
    for (int k = 0; k < 4; ++k) qf[k] = (float)q[k];
}

/* ---------------------------------------------------------------------------------------------------------
 * Energies and stresses. Every model but StVK and neohookean_log is k_shear * (shear term) + k_volume / 2 (J - 1 - j_rest)^2.
 * --------------------------------------------------------------------------------------------------------- */

/* seed Eq. 3: mu tr(E^2) + lambda/2 tr(E)^2, E = (F^T F - I) / 2. */
static double stvk_energy_density(const pbng_material *m, const double F[9])
{
  double C[9];
  mat3_tmul(F, F, C);
  C[0] -= 1.0, C[4] -= 1.0, C[8] -= 1.0; /* 2E */
  const double trE = 0.5 * (C[0] + C[4] + C[8]);
  return 0.25 * m->k_shear * mat3_frobenius_sq(C) + 0.5 * m->k_volume * trE * trE;
}

double pbng_stvk_energy_density_plastic(const pbng_material *m, const double F[9], const double ep[6])
{
  double E[9];
  mat3_tmul(F, F, E);
  for (int k = 0; k < 9; ++k) E[k] *= 0.5;
  E[0] -= 0.5, E[4] -= 0.5, E[8] -= 0.5;
  if (ep) {
    E[0] -= ep[0], E[4] -= ep[1], E[8] -= ep[2];
    E[5] -= ep[3], E[7] -= ep[3], E[2] -= ep[4], E[6] -= ep[4], E[1] -= ep[5], E[3] -= ep[5];
  }
  const double trE = E[0] + E[4] + E[8];
  return m->k_shear * mat3_frobenius_sq(E) + 0.5 * m->k_volume * trE * trE;
}

/* GPBD seed Eq. 20: mu/2 (|F|^2 - 3) - mu log J + lambda/2 (log J)^2; +INFINITY for J <= 0 (no value:
 * the barrier), NaN for a NaN F. */
static double log_neohookean_energy_density(const pbng_material *m, const double F[9])
{
  const double J = mat3_det(F);
  if (J <= 0.0) return INFINITY;
  const double L = log(J);
  return 0.5 * m->k_shear * (mat3_frobenius_sq(F) - 3.0) - m->k_shear * L + 0.5 * m->k_volume * L * L;
}

double pbng_energy_density(const pbng_material *m, const double F[9]) { return pbng_energy_density_warm(m, F, NULL); }

double pbng_energy_density_warm(const pbng_material *m, const double F[9], const float q[4])
{
  if (m->kind == PBNG_MATERIAL_STVK) return stvk_energy_density(m, F);
  if (m->kind == PBNG_MATERIAL_NEOHOOKEAN_LOG) return log_neohookean_energy_density(m, F);
  const double J = mat3_det(F);
  const double v = J - 1.0 - m->j_rest;
  const double volume = 0.5 * m->k_volume * v * v;
  switch (m->kind) {
  case PBNG_MATERIAL_COROTATED: { /* Eq. 7: mu |F - R|^2 + lambda/2 (J - 1)^2 */
    double R[9], D[9];
    float qcopy[4];
    if (q) memcpy(qcopy, q, sizeof qcopy);
    pbng_polar_rotation(F, R, q ? qcopy : NULL);
    for (int k = 0; k < 9; ++k) D[k] = F[k] - R[k];
    return m->k_shear * mat3_frobenius_sq(D) + volume;
  }
  case PBNG_MATERIAL_NEOHOOKEAN: /* Eq. 8: mu/2 |F|^2 + lh/2 (J - 1 - mu/lh)^2 */
    return 0.5 * m->k_shear * mat3_frobenius_sq(F) + volume;
  case PBNG_MATERIAL_STABLE_NEOHOOKEAN: { /* Eq. 10: mu'/2 (|F|^2 - 3) + lambda'/2 (J - 1 - 3mu'/(4lambda'))^2 - mu'/2 log(|F|^2 + 1) */
    const double i2 = mat3_frobenius_sq(F);
    return 0.5 * m->k_shear * (i2 - 3.0 - log(i2 + 1.0)) + volume;
  }
  default: pbng_material_kind_invalid(m->kind);
  }
}

void pbng_stress_and_cofactor(const pbng_material *m, const double F[9], double P[9], double cofF[9],
                              float q[4])
{
  mat3_cofactor(F, cofF);
  const double J = mat3_det_from_cofactor(F, cofF);
  double kv; /* d/dJ of the volume term; dJ/dF = cof F */
  if (m->kind == PBNG_MATERIAL_NEOHOOKEAN_LOG) {
    double dv;
    pbng_log_volume(m, J, &kv, &dv); /* (lambda log J - mu) / J, guarded below PBNG_LOG_J_MIN */
  } else {
    kv = m->k_volume * (J - 1.0 - m->j_rest);
  }
  switch (m->kind) {
  case PBNG_MATERIAL_COROTATED: { /* P = 2mu (F - R) + lambda (J - 1) cof F */
    double R[9];
    pbng_polar_rotation(F, R, q);
    const double ks = 2.0 * m->k_shear;
    for (int k = 0; k < 9; ++k) P[k] = ks * (F[k] - R[k]) + kv * cofF[k];
    break;
  }
  case PBNG_MATERIAL_NEOHOOKEAN:     /* P = mu F + lh (J - 1 - mu/lh) cof F */
  case PBNG_MATERIAL_NEOHOOKEAN_LOG: { /* P = mu F + (lambda log J - mu) F^{-T} = mu F + (lambda log J - mu) / J cof F */
    const double ks = m->k_shear;
    for (int k = 0; k < 9; ++k) P[k] = ks * F[k] + kv * cofF[k];
    break;
  }
  case PBNG_MATERIAL_STABLE_NEOHOOKEAN: { /* P = mu' (1 - 1/(|F|^2 + 1)) F + lambda' (J - 1 - 3mu'/(4lambda')) cof F */
    const double i2 = mat3_frobenius_sq(F);
    const double ks = m->k_shear * i2 / (i2 + 1.0);
    for (int k = 0; k < 9; ++k) P[k] = ks * F[k] + kv * cofF[k];
    break;
  }
  case PBNG_MATERIAL_STVK: { /* seed Eq. 7: P = F S, S = 2 mu E + lambda tr(E) I */
    double S[9];
    pbng_stvk_second_piola(m, F, S);
    mat3_mul(F, S, P);
    break;
  }
  default: pbng_material_kind_invalid(m->kind);
  }
}

void pbng_first_piola(const pbng_material *m, const double F[9], double P[9])
{
  double cofF[9];
  pbng_stress_and_cofactor(m, F, P, cofF, 0);
}
