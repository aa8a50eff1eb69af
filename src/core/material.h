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
  PBNG_MATERIAL_COUNT
} pbng_material_kind;

typedef struct {
  pbng_material_kind kind;
  double youngs, poisson; /* E, nu as given */
  double mu, lambda;      /* Lame parameters from E, nu (Eq. 9) */
  double hessian_lambda;  /* lambda used in the modified Hessian (Eq. 36): max(lambda, 0) keeps it SPD */
  double k_shear;         /* model shear coefficient: mu (cor, nh, stvk) or mu' (snh) */
  double k_volume;        /* model volume coefficient: lambda (cor, stvk), lambda_hat (nh) or lambda' (snh) */
  double j_rest;          /* volume term rest point: 0 (cor, stvk), mu/lambda_hat (nh), 3mu'/(4 lambda') (snh) */
} pbng_material;

/* Eq. 9: mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu)). */
void pbng_lame_parameters(double youngs, double poisson, double *mu, double *lambda);

/* Name <-> kind ("corotated", "neohookean", "stable_neohookean", "stvk"). Returns 0, or -1 for an unknown name. */
int pbng_material_kind_from_name(const char *name, pbng_material_kind *kind);
const char *pbng_material_kind_name(pbng_material_kind kind);

/* A kernel reached with a kind pbng_material_init rejects: an internal error, reported naming the kind,
 * then abort (every switch on the kind ends here instead of defaulting to a model). */
_Noreturn void pbng_material_kind_invalid(int kind);

/* Fills m. Returns 0, or -1 when E <= 0, nu outside (-1, 0.5) or either is not finite. */
int pbng_material_init(pbng_material *m, pbng_material_kind kind, double youngs, double poisson);

/* Psi(F) (Eq. 7, 8, 10 as adjusted in Sec. 8; StVK: the seed's Eq. 3). */
double pbng_energy_density(const pbng_material *m, const double F[9]);

/* P = dPsi/dF. */
void pbng_first_piola(const pbng_material *m, const double F[9], double P[9]);

/* Hot path of every node update: P and cof(F) = J F^{-T} together (the modified Hessian needs cof F).
 * For the corotated model, q (a unit quaternion, w x y z) warm-starts the polar decomposition and is
 * updated to the rotation found; q may be NULL (cold start). Other models ignore q. */
void pbng_stress_and_cofactor(const pbng_material *m, const double F[9], double P[9], double cofF[9],
                              float q[4]);

/* Every model but StVK has a stress that splits as P = s F + v cof(F), minus s R for the corotated model (Eq. 7, 8, 10):
 * v = k_volume (J - 1 - j_rest) is the volume term's dPsi/dJ (dJ/dF = cof F) and s the shear factor.
 * `kind` is passed separately so that kernels specialised on a constant kind fold the switch. */
PBNG_HOT_INLINE void pbng_stress_scalars(pbng_material_kind kind, const pbng_material *m, const double F[9], double J,
                                       double *s, double *v)
{
  *v = m->k_volume * (J - 1.0 - m->j_rest);
  if (kind == PBNG_MATERIAL_COROTATED) {
    *s = 2.0 * m->k_shear; /* P = 2 mu (F - R) + lambda (J - 1) cof F */
  } else if (kind == PBNG_MATERIAL_NEOHOOKEAN) {
    *s = m->k_shear;       /* P = mu F + lh (J - 1 - mu/lh) cof F */
  } else if (kind == PBNG_MATERIAL_STABLE_NEOHOOKEAN) { /* P = mu' (1 - 1/(|F|^2 + 1)) F + lambda' (J - 1 - 3mu'/(4 lambda')) cof F */
    double i2 = 0.0;
    for (int k = 0; k < 9; ++k) i2 += F[k] * F[k];
    *s = m->k_shear * i2 / (i2 + 1.0);
  } else { /* StVK's P = F S has no such split (pbng_stvk_second_piola) */
    pbng_material_kind_invalid(kind);
  }
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

/* Eq. 36-37 for one element seen from node i, given c = cof(F) g and gg = |g|^2 for g = dN_i/dX:
 * A += V (2 mu |g|^2 I + lambda c c^T). Only the lower triangle (A[0], A[3], A[4], A[6], A[7], A[8])
 * is accumulated; pbng_symmetrize_lower completes it. */
PBNG_HOT_INLINE void pbng_modified_hessian_add_lower(const pbng_material *m, const double c[3], double gg, double V, double A[9])
{
  const double d = 2.0 * m->mu * gg * V, l = m->hessian_lambda * V;
  A[0] += d + l * c[0] * c[0];
  A[3] += l * c[1] * c[0];
  A[4] += d + l * c[1] * c[1];
  A[6] += l * c[2] * c[0];
  A[7] += l * c[2] * c[1];
  A[8] += d + l * c[2] * c[2];
}

PBNG_HOT_INLINE void pbng_symmetrize_lower(double A[9])
{
  A[1] = A[3];
  A[2] = A[6];
  A[5] = A[7];
}

/* Eq. 36-37 for one element seen from node i with shape-function gradient g = dN_i/dX:
 * A += V (2 mu |g|^2 I + lambda (cof(F) g)(cof(F) g)^T), symmetric positive definite for every F. */
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
