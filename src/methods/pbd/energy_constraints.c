#include "methods/pbd/energy_constraints.h"
#include <float.h>
#include <math.h>
#include <string.h>
#include "core/mat3.h"
#include "problem/geometry.h"
#include "problem/sheet_terms.h"

static const char *const split_names[PBNG_SPLIT_COUNT] = {"stable", "macklin"};

const char *pbng_split_kind_name(pbng_split_kind kind) { return (int)kind >= 0 && kind < PBNG_SPLIT_COUNT ? split_names[kind] : "unknown"; }

/* L(I2) = log(I2 + 1) of the stable neo-Hookean energy, 0 for the neo-Hookean one. */
static double log_term(const pbng_energy_split *sp, double i2) { return sp->log_term ? log(i2 + 1.0) : 0.0; }

/* StVK (Table 2, first column): Psi = mu tr(E^2) + lambda/2 tr(E)^2 = k_0/2 tr(E^2) + k_1/2 tr(E)^2 with
 * k_0 = 2 mu, k_1 = lambda (alpha_A = 1/(2 mu): Table 2's P~_A = 2 F E is the derivative of tr(E^2), so its
 * Psi~_A is tr(E^2), not 2 tr(E^2)). Both terms vanish with their stresses at F = I: the split is stable in
 * the seed's sense, and it is the only one (Macklin's is a neo-Hookean split). lambda < 0 (nu < 0) has no
 * compliance: refused; lambda = 0 (nu = 0) leaves term 1 out. */
static int stvk_split_init(const pbng_material *m, pbng_split_kind kind, pbng_energy_split *sp)
{
  if (kind != PBNG_SPLIT_STABLE || !(m->k_volume >= 0.0)) return -1;
  memset(sp, 0, sizeof(*sp));
  sp->kind = kind;
  sp->stvk = 1;
  sp->stiffness[0] = 2.0 * m->k_shear;
  sp->stiffness[1] = m->k_volume;
  return 0;
}

int pbng_energy_split_init(const pbng_material *m, pbng_split_kind kind, pbng_energy_split *sp)
{
  if ((int)kind < 0 || kind >= PBNG_SPLIT_COUNT) return -1;
  if (m->kind == PBNG_MATERIAL_STVK) return stvk_split_init(m, kind, sp);
  if (m->kind != PBNG_MATERIAL_NEOHOOKEAN && m->kind != PBNG_MATERIAL_STABLE_NEOHOOKEAN) return -1;
  memset(sp, 0, sizeof(*sp));
  sp->kind = kind;
  sp->log_term = m->kind == PBNG_MATERIAL_STABLE_NEOHOOKEAN;
  sp->stiffness[0] = m->k_shear;  /* mu (Eq. 24-25) or mu' */
  sp->stiffness[1] = m->k_volume; /* lambda_hat = lambda + mu, or lambda' */
  /* Psi = k_s/2 (I2 - L(I2)) - 3 k_s/2 [snh] + k_v/2 (J - 1 - j_rest)^2 (material.c, Eq. 8 and 10 with Sec. 8) */
  const double snh_constant = sp->log_term ? 1.5 * m->k_shear : 0.0;
  if (kind == PBNG_SPLIT_MACKLIN) { /* Psi~_0 = I2 - L(I2), Psi~_1 = (J - 1 - j_rest)^2 */
    sp->c_volume = 1.0 + m->j_rest;
    sp->offset = snh_constant;
  } else { /* Eq. 24-25: Psi~_0 = I2 - 3 - (L(I2) - L(3)) - 2 beta (J - 1), Psi~_1 = (J - 1)^2 */
    sp->c_volume = 1.0;
    sp->beta = m->k_volume * m->j_rest / m->k_shear; /* 1 (neo-Hookean), 3/4 (stable neo-Hookean) */
    sp->offset = 0.5 * m->k_shear * (log_term(sp, 3.0) - 3.0) + snh_constant - 0.5 * m->k_volume * m->j_rest * m->j_rest;
  }
  return 0;
}

/* Term 0: Macklin's I2 - L(I2) (P~ = 2F (1 - L'(I2))), or the developed/stable
 * I2 - 3 - (L(I2) - L(3)) - 2 beta (J - 1) (Eq. 25; P~ = 2F (1 - L'(I2)) - 2 beta cof F, Eq. 27). */
static double shear_term(const pbng_energy_split *sp, const double F[9], double P[9], double *roundoff)
{
  const double i2 = mat3_frobenius_sq(F), L = log_term(sp, i2), dL = sp->log_term ? 1.0 / (i2 + 1.0) : 0.0;
  const double eJ = 8.0 * i2 * sqrt(i2); /* |fl(det F) - det F| <= 8 eps I2^(3/2) */
  for (int p = 0; p < 9; ++p) P[p] = 2.0 * (1.0 - dL) * F[p];
  if (sp->kind == PBNG_SPLIT_MACKLIN) {
    *roundoff = 10.0 * (i2 + fabs(L) + sp->log_term);
    return i2 - L;
  }
  double cof[9];
  mat3_cofactor(F, cof);
  const double J = mat3_det_from_cofactor(F, cof), L3 = log_term(sp, 3.0);
  for (int p = 0; p < 9; ++p) P[p] -= 2.0 * sp->beta * cof[p];
  *roundoff = 10.0 * (i2 + 3.0 + fabs(L) + L3 + 2.0 * sp->beta * (fabs(J) + 1.0) + sp->log_term) + 2.0 * sp->beta * eJ;
  return i2 - 3.0 - (L - L3) - 2.0 * sp->beta * (J - 1.0);
}

/* Term 1: (J - c)^2, P~ = 2 (J - c) cof F (Eq. 28; Table 2 with c = gamma for Macklin's split). */
static double volume_term(const pbng_energy_split *sp, const double F[9], double P[9], double *roundoff)
{
  double cof[9];
  mat3_cofactor(F, cof);
  const double J = mat3_det_from_cofactor(F, cof), d = J - sp->c_volume;
  const double i2 = mat3_frobenius_sq(F), ed = 8.0 * i2 * sqrt(i2) + fabs(J) + sp->c_volume; /* error of d, in eps */
  for (int p = 0; p < 9; ++p) P[p] = 2.0 * d * cof[p];
  *roundoff = 2.0 * fabs(d) * ed + DBL_EPSILON * ed * ed + d * d;
  return d * d;
}

/* StVK's terms (Table 2): 0: tr(E^2), P~ = 2 F E; 1: tr(E)^2, P~ = 2 tr(E) F; E = (F^T F - I) / 2. */
static double stvk_term(int k, const double F[9], double P[9], double *roundoff)
{
  double E[9];
  mat3_tmul(F, F, E);
  const double i2 = E[0] + E[4] + E[8]; /* |F|^2 */
  E[0] -= 1.0, E[4] -= 1.0, E[8] -= 1.0;
  for (int p = 0; p < 9; ++p) E[p] *= 0.5;
  const double trE = E[0] + E[4] + E[8], eE = 4.0 * (i2 + 3.0); /* |fl(E_ab) - E_ab| <= eE eps */
  if (k == 0) {
    mat3_mul(F, E, P);
    for (int p = 0; p < 9; ++p) P[p] *= 2.0;
    const double e2 = mat3_frobenius_sq(E);
    *roundoff = 2.0 * sqrt(9.0 * e2) * eE + 9.0 * DBL_EPSILON * eE * eE + 9.0 * e2;
    return e2;
  }
  for (int p = 0; p < 9; ++p) P[p] = 2.0 * trE * F[p];
  *roundoff = 6.0 * fabs(trE) * eE + 9.0 * DBL_EPSILON * eE * eE + trE * trE;
  return trE * trE;
}

double pbng_split_term(const pbng_energy_split *sp, int k, const double F[9], double P[9], double *roundoff)
{
  if (sp->stvk) return stvk_term(k, F, P, roundoff);
  return k == 0 ? shear_term(sp, F, P, roundoff) : volume_term(sp, F, P, roundoff);
}

int pbng_energy_constraint(const pbng_energy_split *sp, int k, const pbng_element_points *el, const double *x, double *S, double *C,
                           double (*G)[3])
{
  double sum = 0.0, bound = 0.0;
  for (int a = 0; a < el->nen; ++a) G[a][0] = G[a][1] = G[a][2] = 0.0;
  for (int q = 0; q < el->nq; ++q) { /* Alg. 2, lines 2-7 */
    const double *grad = &el->grad[3 * (int64_t)el->nen * q];
    double F[9], P[9], r;
    pbng_qp_deformation_gradient(el->nen, el->node, grad, x, F);
    sum += el->V[q] * pbng_split_term(sp, k, F, P, &r); /* Eq. 22 */
    bound += el->V[q] * r;
    for (int a = 0; a < el->nen; ++a) { /* Eq. 23: V_q P~(F_q) dN_a/dX */
      double Pg[3];
      mat3_vec(P, &grad[3 * a], Pg);
      for (int d = 0; d < 3; ++d) G[a][d] += el->V[q] * Pg[d];
    }
  }
  *S = sum;
  if (!(fabs(sum) > 4.0 * DBL_EPSILON * bound)) return 0; /* C at round-off (or not finite): skipped */
  *C = sqrt(fabs(sum));                                   /* Alg. 2, line 8 */
  const double s = 0.5 / *C;
  for (int a = 0; a < el->nen; ++a)
    for (int d = 0; d < 3; ++d) G[a][d] *= s;
  return 1;
}

/* One XPBD projection (Eq. 16-17) of a constraint of value C and gradient G on nodes node[0 .. n), with
 * alpha~ = at and multiplier lambda (updated). Returns the nodes that moved as bits. */
static uint32_t project_constraint(double C, const double (*G)[3], int n, const int32_t *node, double at, const double *w, double *lambda,
                                   double *x)
{
  double denom = 0.0;
  uint32_t moved = 0;
  for (int a = 0; a < n; ++a) denom += w[node[a]] * (G[a][0] * G[a][0] + G[a][1] * G[a][1] + G[a][2] * G[a][2]);
  if (!(denom + at > 0.0)) return 0; /* every node fixed */
  const double dl = (-C - at * *lambda) / (denom + at); /* Eq. 17 */
  if (!isfinite(dl)) return 0;
  *lambda += dl;
  for (int a = 0; a < n; ++a) { /* Eq. 16 */
    const double wa = w[node[a]];
    if (wa == 0.0) continue;
    for (int d = 0; d < 3; ++d) x[3 * node[a] + d] += wa * G[a][d] * dl;
    moved |= 1u << a;
  }
  return moved;
}

uint32_t pbng_project_energy_term(const pbng_energy_split *sp, int k, double inv_dt2, const pbng_element_points *el, const double *w,
                                  double *lambda, double *x)
{
  double G[PBNG_MAX_ELEMENT_NODES][3], S, C;
  if (sp->stiffness[k] == 0.0) return 0; /* no energy in this term (StVK with nu = 0) */
  if (!pbng_energy_constraint(sp, k, el, x, &S, &C, G)) return 0;
  /* alpha~ = alpha / dt^2, alpha = 1 / k */
  return project_constraint(C, (const double(*)[3])G, el->nen, el->node, inv_dt2 / sp->stiffness[k], w, lambda, x);
}

uint32_t pbng_project_energy_constraints(const pbng_energy_split *sp, double inv_dt2, const pbng_element_points *el, const double *w,
                                         double lambda[PBNG_SPLIT_TERMS], double *x)
{
  uint32_t moved = 0;
  for (int k = 0; k < PBNG_SPLIT_TERMS; ++k) moved |= pbng_project_energy_term(sp, k, inv_dt2, el, w, &lambda[k], x); /* Alg. 1, lines 5-11 */
  return moved;
}

/* The term's energy scale E_unit: a membrane's energy at a unit Green strain in each Voigt component,
 * h A tr(C) / 2; a stencil's at a fold of order one radian (|v|^2 = A0 + A1: E_b = k_b/2 3/(A0 + A1) |v|^2
 * = 3 k_b / 2). */
static double sheet_energy_scale(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r)
{
  if (kind != PBNG_ELEMENT_TRI3) return 1.5 * m->bending_stiffness;
  const double *C = &m->membrane.C[0][0];
  return 0.5 * m->membrane.thickness * r->membrane.area * (C[0] + C[4] + C[8]);
}

int pbng_sheet_constraint(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *node, const double *x,
                          double *C, double (*G)[3])
{
  const int n = kind == PBNG_ELEMENT_TRI3 ? 3 : 4;
  const double E = pbng_sheet_element_gradient(m, kind, r, node, x, G); /* grad E into G */
  if (!(E > PBNG_SHEET_CONSTRAINT_FLOOR * sheet_energy_scale(m, kind, r)) || !isfinite(E)) return 0; /* C ~ 0: satisfied */
  *C = sqrt(2.0 * E);
  for (int a = 0; a < n; ++a)
    for (int d = 0; d < 3; ++d) G[a][d] /= *C; /* grad C = grad E / C */
  return 1;
}

uint32_t pbng_project_sheet_constraint(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *node,
                                       double inv_dt2, const double *w, double *lambda, double *x)
{
  double G[4][3], C;
  if (!pbng_sheet_constraint(m, kind, r, node, x, &C, G)) return 0;
  return project_constraint(C, (const double(*)[3])G, kind == PBNG_ELEMENT_TRI3 ? 3 : 4, node, inv_dt2 /* alpha = 1 */, w, lambda, x);
}

double pbng_sheet_constraint_residual(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *node,
                                      double inv_dt2, double lambda, const double *x, double *force)
{
  double G[4][3], C = 0.0;
  const int active = pbng_sheet_constraint(m, kind, r, node, x, &C, G);
  const double h = C + inv_dt2 * lambda; /* Eq. 25 with alpha = 1 */
  for (int a = 0; active && a < (kind == PBNG_ELEMENT_TRI3 ? 3 : 4); ++a)
    for (int d = 0; d < 3; ++d) force[3 * node[a] + d] += G[a][d] * lambda; /* Eq. 24: grad C^T lambda */
  return h * h;
}
