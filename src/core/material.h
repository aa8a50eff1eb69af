/* Hyperelastic materials of the paper (Sec. 3.1, Sec. 8): energy density Psi(F), first Piola-Kirchhoff
 * stress P = dPsi/dF and PBNG's SPD modified Hessian (Eq. 36-37). Pure functions, no allocation. */
#ifndef PBNG_CORE_MATERIAL_H
#define PBNG_CORE_MATERIAL_H

#include "core/mat3.h" /* PBNG_HOT_INLINE */

typedef enum {
  PBNG_MATERIAL_COROTATED = 0,         /* Eq. 7:  mu |F - R|^2 + lambda/2 (J - 1)^2 */
  PBNG_MATERIAL_NEOHOOKEAN = 1,        /* Eq. 8 with Sec. 8: mu/2 |F|^2 + lh/2 (J - 1 - mu/lh)^2, lh = lambda + mu */
  PBNG_MATERIAL_STABLE_NEOHOOKEAN = 2, /* Eq. 10 with Sec. 8 (mu' = 4mu/3, lambda' = lambda + 5mu/6) */
  PBNG_MATERIAL_STVK = 3,              /* Saint-Venant-Kirchhoff (seed xpbd-high-order Eq. 3, 7): mu tr(E^2) + lambda/2 tr(E)^2 */
  PBNG_MATERIAL_NEOHOOKEAN_LOG = 4,    /* seed generalized-pbd Eq. 20: mu/2 (|F|^2 - 3) - mu log J + lambda/2 (log J)^2 (J <= 0: +inf) */
  PBNG_MATERIAL_COUNT
} pbng_material_kind;

typedef struct {
  pbng_material_kind kind;
  double youngs, poisson; /* E, nu as given */
  double mu, lambda;      /* Lame parameters from E, nu (Eq. 9) */
  double hessian_lambda;  /* lambda used in the modified Hessian (Eq. 36): max(lambda, 0) keeps it SPD */
  double k_shear;         /* model shear coefficient: mu (cor, nh, stvk, nh_log) or mu' (snh) */
  double k_volume;        /* model volume coefficient: lambda (cor, stvk, nh_log: of (log J)^2 / 2), lambda_hat (nh) or lambda' (snh) */
  double j_rest;          /* volume term rest point J - 1: 0 (cor, stvk, nh_log), mu/lambda_hat (nh), 3mu'/(4 lambda') (snh) */
} pbng_material;

/* Eq. 9: mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu)). */
void pbng_lame_parameters(double youngs, double poisson, double *mu, double *lambda);

/* The kind's name ("corotated", "neohookean", "stable_neohookean", "stvk", "neohookean_log"; -material's values). */
const char *pbng_material_kind_name(pbng_material_kind kind);

/* A kernel reached with a kind pbng_material_init rejects: an internal error, reported naming the kind,
 * then abort (every switch on the kind ends here instead of defaulting to a model). */
_Noreturn void pbng_material_kind_invalid(int kind);

/* Fills m. Returns 0, or -1 when E <= 0, nu outside (-1, 0.5) or either is not finite, and for
 * neohookean_log when nu < 0 (lambda < 0: mu/2 ... - mu log J + lambda/2 (log J)^2 is unbounded below as J -> 0). */
int pbng_material_init(pbng_material *m, pbng_material_kind kind, double youngs, double poisson);

/* Psi(F) (Eq. 7, 8, 10 as adjusted in Sec. 8; StVK: the seed's Eq. 3; neohookean_log: the GPBD seed's Eq. 20,
 * +INFINITY where J = det F <= 0: the log barrier has no value there). */
double pbng_energy_density(const pbng_material *m, const double F[9]);
/* The same; for the corotated model with its polar rotation found from the warm start q (read, not
 * written: see pbng_polar_rotation), or from the identity when q is NULL. */
double pbng_energy_density_warm(const pbng_material *m, const double F[9], const float q[4]);

/* P = dPsi/dF (neohookean_log: below J = PBNG_LOG_J_MIN, inverted F included, the derivative of the
 * guarded volume term, pbng_log_volume: finite for every finite F). */
void pbng_first_piola(const pbng_material *m, const double F[9], double P[9]);

/* Hot path of every node update: P and cof(F) = J F^{-T} together (the modified Hessian needs cof F).
 * For the corotated model, q (a unit quaternion, w x y z) warm-starts the polar decomposition and is
 * updated to the rotation found; q may be NULL (cold start). Other models ignore q. */
void pbng_stress_and_cofactor(const pbng_material *m, const double F[9], double P[9], double cofF[9],
                              float q[4]);

/* neohookean_log's volume term phi(J) = -mu log J + lambda/2 (log J)^2 has no value for J <= 0. Its
 * derivatives v = phi'(J) = (lambda log J - mu) / J and dv = phi''(J) = (lambda + mu - lambda log J) / J^2 are
 * used as they are for J >= PBNG_LOG_J_MIN; below, inverted elements included, the stress, the exact Hessian
 * and the modified Hessian use the second-order Taylor expansion of phi at J_min (v = v(J_min) +
 * dv(J_min) (J - J_min), dv = dv(J_min)): finite, pushing J back up (v < 0), and a Newton step on it from
 * any J < J_min lands near 2 J_min (docs/equations.md "neo-Hookean with the log barrier"). The energy
 * density itself stays the formula (+inf for J <= 0), so between 0 and J_min the stress is the guard's. */
#define PBNG_LOG_J_MIN 1e-3

PBNG_HOT_INLINE void pbng_log_volume(const pbng_material *m, double J, double *v, double *dv)
{
  const double mu = m->k_shear, lambda = m->k_volume;
  if (J >= PBNG_LOG_J_MIN) {
    const double L = log(J), iJ = 1.0 / J;
    *v = (lambda * L - mu) * iJ;
    *dv = (lambda + mu - lambda * L) * iJ * iJ;
  } else { /* the guard (NaN J falls through to here and stays NaN) */
    const double L = log(PBNG_LOG_J_MIN), iJ = 1.0 / PBNG_LOG_J_MIN;
    const double d = (lambda + mu - lambda * L) * iJ * iJ;
    *v = (lambda * L - mu) * iJ + d * (J - PBNG_LOG_J_MIN);
    *dv = d;
  }
}

/* Every model but StVK has a stress that splits as P = s F + v cof(F), minus s R for the corotated model (Eq. 7, 8, 10):
 * v is the volume term's dPsi/dJ (dJ/dF = cof F) and s the shear factor. v = k_volume (J - 1 - j_rest) for the
 * corotated, neo-Hookean and stable neo-Hookean models; v = (lambda log J - mu) / J for neohookean_log
 * (P = mu F + (lambda log J - mu) F^{-T}; guarded below PBNG_LOG_J_MIN, pbng_log_volume).
 * `kind` is passed separately so that kernels specialised on a constant kind fold the switch. */
PBNG_HOT_INLINE void pbng_stress_scalars(pbng_material_kind kind, const pbng_material *m, const double F[9], double J,
                                       double *s, double *v)
{
  if (kind == PBNG_MATERIAL_COROTATED) {
    *v = m->k_volume * (J - 1.0 - m->j_rest);
    *s = 2.0 * m->k_shear; /* P = 2 mu (F - R) + lambda (J - 1) cof F */
  } else if (kind == PBNG_MATERIAL_NEOHOOKEAN) {
    *v = m->k_volume * (J - 1.0 - m->j_rest);
    *s = m->k_shear;       /* P = mu F + lh (J - 1 - mu/lh) cof F */
  } else if (kind == PBNG_MATERIAL_STABLE_NEOHOOKEAN) { /* P = mu' (1 - 1/(|F|^2 + 1)) F + lambda' (J - 1 - 3mu'/(4 lambda')) cof F */
    *v = m->k_volume * (J - 1.0 - m->j_rest);
    double i2 = 0.0;
    for (int k = 0; k < 9; ++k) i2 += F[k] * F[k];
    *s = m->k_shear * i2 / (i2 + 1.0);
  } else if (kind == PBNG_MATERIAL_NEOHOOKEAN_LOG) { /* P = mu F + (lambda log J - mu) / J cof F */
    double dv;
    pbng_log_volume(m, J, v, &dv);
    *s = m->k_shear;
  } else { /* StVK's P = F S has no such split (pbng_stvk_second_piola) */
    pbng_material_kind_invalid(kind);
  }
}

/* The volume coefficient l of PBNG's modified Hessian (Eq. 36-37) at a point with det F = J: hessian_lambda
 * (max(lambda, 0)) for every model but neohookean_log, whose volume curvature phi''(J) grows without bound
 * as J -> 0: l = max(hessian_lambda, phi''(J) - mu), equal to lambda at rest and in tension (phi''(1) - mu =
 * lambda, phi'' decreases with J) and phi''(J) - mu in compression, where the constant lambda would let the
 * node step overshoot through the barrier (the extra mu as in Eq. 36, whose 2 mu |g|^2 I holds the rest). */
PBNG_HOT_INLINE double pbng_modified_hessian_lambda(pbng_material_kind kind, const pbng_material *m, double J)
{
  if (kind != PBNG_MATERIAL_NEOHOOKEAN_LOG) return m->hessian_lambda;
  if (J >= 1.0) return m->hessian_lambda; /* phi''(J) - mu <= lambda */
  const double Jc = J >= PBNG_LOG_J_MIN ? J : PBNG_LOG_J_MIN; /* the guard's curvature below J_min */
  /* phi''(J) - mu = (lambda (1 - log J) + mu (1 - J^2)) / J^2 */
  const double l = (m->k_volume * (1.0 - log(Jc)) + m->k_shear * (1.0 - Jc * Jc)) / (Jc * Jc);
  return l > m->hessian_lambda ? l : m->hessian_lambda;
}

/* Saint-Venant-Kirchhoff (seed Eq. 3, 7): Green strain E = (F^T F - I) / 2 and the second
 * Piola-Kirchhoff stress S = 2 mu E + lambda tr(E) I (symmetric); P = F S. */
PBNG_HOT_INLINE void pbng_stvk_second_piola(const pbng_material *m, const double F[9], double S[9])
{
  for (int a = 0; a < 3; ++a)
    for (int b = a; b < 3; ++b) {
      const double c = F[a] * F[b] + F[3 + a] * F[3 + b] + F[6 + a] * F[6 + b]; /* (F^T F)_ab */
      S[3 * a + b] = S[3 * b + a] = m->k_shear * (c - (a == b ? 1.0 : 0.0));
    }
  const double trE = 0.5 * (S[0] + S[4] + S[8]) / m->k_shear;
  for (int a = 0; a < 3; ++a) S[4 * a] += m->k_volume * trE;
}

/* Elastoplastic StVK (seed position-based-continuous-materials.txt Sec. 4.2, additive split E = E_el + eps_p):
 * S = C : (E - eps_p) = S(F) - (2 mu eps_p + lambda tr(eps_p) I), eps_p given as its Voigt 6-vector
 * (xx, yy, zz, yz, xz, xy; core/plasticity.h). dS/dE is unchanged, so every StVK kernel takes the shifted S. */
PBNG_HOT_INLINE void pbng_stvk_subtract_plastic(const pbng_material *m, const double ep[6], double S[9])
{
  const double tr = m->k_volume * (ep[0] + ep[1] + ep[2]), two_mu = 2.0 * m->k_shear;
  S[0] -= two_mu * ep[0] + tr, S[4] -= two_mu * ep[1] + tr, S[8] -= two_mu * ep[2] + tr;
  S[5] = S[7] = S[5] - two_mu * ep[3];
  S[2] = S[6] = S[2] - two_mu * ep[4];
  S[1] = S[3] = S[1] - two_mu * ep[5];
}

/* mu tr(E_el^2) + lambda/2 tr(E_el)^2 with E_el = E(F) - eps_p (Voigt 6-vector; NULL: the plain StVK energy). */
double pbng_stvk_energy_density_plastic(const pbng_material *m, const double F[9], const double ep[6]);

/* PBNG's node block for StVK, one point seen from the node with gradient g (the analogue of Eq. 36-37;
 * docs/equations.md "StVK"): the exact block d(P g)/dx_i = (g.S g) I + mu |g|^2 F F^T + (lambda + mu) w w^T,
 * w = F g, with the geometric term (g.S g) I clamped at zero (it is negative in compression):
 * A += V (max(g.S g, 0) I + mu |g|^2 F F^T + (lambda + mu) w w^T), symmetric positive semidefinite, definite
 * where F is invertible (lambda + mu > 0 for every nu in (-1, 1/2)). Sg = S g and w are given; lower
 * triangle only, as pbng_modified_hessian_add_lower. */
PBNG_HOT_INLINE void pbng_stvk_node_block_add_lower(const pbng_material *m, const double F[9], const double g[3], const double Sg[3],
                                                    const double w[3], double V, double A[9])
{
  const double gSg = g[0] * Sg[0] + g[1] * Sg[1] + g[2] * Sg[2];
  const double geo = V * (gSg > 0.0 ? gSg : 0.0), sh = V * m->k_shear * (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  const double vol = V * (m->k_volume + m->k_shear);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c <= r; ++c) {
      const double FFt = F[3 * r] * F[3 * c] + F[3 * r + 1] * F[3 * c + 1] + F[3 * r + 2] * F[3 * c + 2];
      A[3 * r + c] += (r == c ? geo : 0.0) + sh * FFt + vol * w[r] * w[c];
    }
}

/* Eq. 36-37 for one element seen from node i, given c = cof(F) g and gg = |g|^2 for g = dN_i/dX and the
 * volume coefficient lv (pbng_modified_hessian_lambda): A += V (2 mu |g|^2 I + lv c c^T). Only the lower
 * triangle (A[0], A[3], A[4], A[6], A[7], A[8]) is accumulated; pbng_symmetrize_lower completes it. */
PBNG_HOT_INLINE void pbng_modified_hessian_add_lower_coef(const pbng_material *m, double lv, const double c[3], double gg, double V, double A[9])
{
  const double d = 2.0 * m->mu * gg * V, l = lv * V;
  A[0] += d + l * c[0] * c[0];
  A[3] += l * c[1] * c[0];
  A[4] += d + l * c[1] * c[1];
  A[6] += l * c[2] * c[0];
  A[7] += l * c[2] * c[1];
  A[8] += d + l * c[2] * c[2];
}

/* The same with lv = hessian_lambda (every model at every F but neohookean_log in compression). */
PBNG_HOT_INLINE void pbng_modified_hessian_add_lower(const pbng_material *m, const double c[3], double gg, double V, double A[9])
{
  pbng_modified_hessian_add_lower_coef(m, m->hessian_lambda, c, gg, V, A);
}

PBNG_HOT_INLINE void pbng_symmetrize_lower(double A[9])
{
  A[1] = A[3];
  A[2] = A[6];
  A[5] = A[7];
}

/* Eq. 36-37 for one element seen from node i with shape-function gradient g = dN_i/dX:
 * A += V (2 mu |g|^2 I + lambda (cof(F) g)(cof(F) g)^T), symmetric positive definite for every F
 * (with hessian_lambda; neohookean_log's compression coefficient: pbng_modified_hessian_add_lower_coef). */
PBNG_HOT_INLINE void pbng_modified_hessian_add(const pbng_material *m, const double cofF[9], const double g[3],
                                             double V, double A[9])
{
  const double c[3] = {cofF[0] * g[0] + cofF[1] * g[1] + cofF[2] * g[2], cofF[3] * g[0] + cofF[4] * g[1] + cofF[5] * g[2],
                       cofF[6] * g[0] + cofF[7] * g[1] + cofF[8] * g[2]};
  double L[9] = {0};
  pbng_modified_hessian_add_lower(m, c, g[0] * g[0] + g[1] * g[1] + g[2] * g[2], V, L);
  pbng_symmetrize_lower(L);
  for (int k = 0; k < 9; ++k) A[k] += L[k];
}

/* The proper rotation of F's polar decomposition: argmin over R in SO(3) of |F - R|_F, also for
 * inverted F (det F < 0) and nearly singular F. q as in pbng_stress_and_cofactor (may be NULL). */
void pbng_polar_rotation(const double F[9], double R[9], float q[4]);

#endif
