#include "methods/pbd/constraints.h"
#include <math.h>
#include <stddef.h>
#include "core/element.h"
#include "core/mat3.h"

int pbng_material_has_constraints(const pbng_material *mat)
{
  return mat->kind == PBNG_MATERIAL_COROTATED || mat->kind == PBNG_MATERIAL_NEOHOOKEAN;
}

/* Compliances of the element's constraints (after Eq. 23), in the material's own coefficients. */
static void element_compliances(const pbng_material *mat, double V, double alpha[2])
{
  const double shear = mat->kind == PBNG_MATERIAL_COROTATED ? 2.0 * mat->k_shear : mat->k_shear;
  alpha[0] = 1.0 / (shear * V);
  alpha[1] = 1.0 / (mat->k_volume * V);
}

/* Constraint k (0: Eq. 22/23 first, 1: volume) of the element at x: value and dC/dF. */
static double element_constraint(const pbng_material *mat, int k, const double F[9], float q[4], double G[9])
{
  if (k == 1) {
    mat3_cofactor(F, G); /* d det F / dF = cof F */
    return mat3_det_from_cofactor(F, G) - 1.0 - mat->j_rest;
  }
  double R[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, norm2 = 0.0;
  if (mat->kind == PBNG_MATERIAL_COROTATED) pbng_polar_rotation(F, R, q); /* d|F - R|/dF = (F - R)/|F - R| */
  for (int p = 0; p < 9; ++p) {
    G[p] = F[p] - R[p];
    norm2 += G[p] * G[p];
  }
  const double norm = sqrt(norm2);
  for (int p = 0; p < 9; ++p) G[p] = norm > 0 ? G[p] / norm : 0.0; /* at C = 0 the gradient is undefined: no step */
  return norm;
}

static void deformation_gradient(const int32_t node[4], const double B[9], const double *x, double F[9])
{
  pbng_tet_deformation_gradient(&x[3 * node[0]], &x[3 * node[1]], &x[3 * node[2]], &x[3 * node[3]], B, F);
}

/* grad_{x_a} C = G dN_a/dX for the element's four nodes. */
static void node_gradients(const double G[9], const double B[9], double grad[4][3])
{
  for (int a = 0; a < 4; ++a) {
    double g[3];
    pbng_tet_shape_gradient(B, a, g);
    mat3_vec(G, g, grad[a]);
  }
}

int pbng_project_element(const pbng_projection *p, const int32_t node[4], const double B[9], double V, const double *w,
                         double lambda[2], float q[4], double *x)
{
  double alpha[2];
  int moved = 0;

  element_compliances(p->mat, V, alpha);
  for (int k = 0; k < 2; ++k) { /* Eq. 26-28, one constraint after the other */
    double F[9], G[9], grad[4][3], denom = 0.0;
    deformation_gradient(node, B, x, F);
    const double C = element_constraint(p->mat, k, F, q, G);
    node_gradients(G, B, grad);
    for (int a = 0; a < 4; ++a) denom += w[node[a]] * (grad[a][0] * grad[a][0] + grad[a][1] * grad[a][1] + grad[a][2] * grad[a][2]);
    const double at = alpha[k] * p->inv_dt2; /* alpha~; 0 for PBD */
    if (!(denom + at > 0.0)) continue;      /* every node fixed, or no gradient (PBD) */
    const double dl = (-C - at * lambda[k]) / (denom + at);
    if (!isfinite(dl)) continue; /* a collapsed element (e.g. PBD with contradictory constraints) */
    lambda[k] += dl;
    for (int a = 0; a < 4; ++a) {
      if (w[node[a]] == 0.0) continue;
      for (int d = 0; d < 3; ++d) x[3 * node[a] + d] += w[node[a]] * grad[a][d] * dl;
      moved |= 1 << a;
    }
  }
  return moved;
}

/* C split along n and across it; alpha~ of both parts (negative: that part has no stiffness). */
static void weak_parts(const pbng_projection *p, const pbng_weak_constraint *c, const double *x, double *Cn, double Ct[3], double at[2])
{
  double C[3];
  pbng_weak_constraint_violation(c, x, C);
  *Cn = c->n[0] * C[0] + c->n[1] * C[1] + c->n[2] * C[2];
  for (int d = 0; d < 3; ++d) Ct[d] = C[d] - *Cn * c->n[d];
  at[0] = c->k_n > 0 ? p->inv_dt2 / c->k_n : -1.0;
  at[1] = c->k_t > 0 ? p->inv_dt2 / c->k_t : -1.0;
}

void pbng_project_weak(const pbng_projection *p, const pbng_weak_constraint *c, const double *w, double lambda[3], double *x)
{
  double Cn, Ct[3], at[2], s = 0.0, step[3] = {0, 0, 0};

  weak_parts(p, c, x, &Cn, Ct, at);
  for (int j = 0; j < c->nnodes; ++j) s += w[c->node[j]] * c->a[j] * c->a[j]; /* |grad C|^2_M along any direction */
  const double ln = lambda[0] * c->n[0] + lambda[1] * c->n[1] + lambda[2] * c->n[2];
  if (at[0] >= 0 && s + at[0] > 0) { /* along n */
    double dl = (-Cn - at[0] * ln) / (s + at[0]);
    if (c->unilateral && ln + dl < 0) dl = -ln; /* an inequality: the accumulated multiplier stays >= 0 (it only pushes) */
    for (int d = 0; d < 3; ++d) step[d] += dl * c->n[d];
  }
  if (at[1] >= 0 && s + at[1] > 0) /* across n: isotropic in the tangent plane */
    for (int d = 0; d < 3; ++d) step[d] += (-Ct[d] - at[1] * (lambda[d] - ln * c->n[d])) / (s + at[1]);
  for (int d = 0; d < 3; ++d) lambda[d] += step[d];
  for (int j = 0; j < c->nnodes; ++j)
    for (int d = 0; d < 3; ++d) x[3 * c->node[j] + d] += w[c->node[j]] * c->a[j] * step[d];
}

double pbng_element_constraint_residual(const pbng_projection *p, const int32_t node[4], const double B[9], double V,
                                        const double lambda[2], const double *x, double *force)
{
  double alpha[2], F[9], h2 = 0.0;

  element_compliances(p->mat, V, alpha);
  deformation_gradient(node, B, x, F);
  for (int k = 0; k < 2; ++k) {
    double G[9], grad[4][3];
    const double C = element_constraint(p->mat, k, F, NULL, G), h = C + alpha[k] * p->inv_dt2 * lambda[k];
    h2 += h * h;
    node_gradients(G, B, grad);
    for (int a = 0; a < 4; ++a)
      for (int d = 0; d < 3; ++d) force[3 * node[a] + d] += grad[a][d] * lambda[k]; /* Eq. 24: grad C^T lambda */
  }
  return h2;
}

double pbng_weak_constraint_residual(const pbng_projection *p, const pbng_weak_constraint *c, const double lambda[3], const double *x,
                                     double *force)
{
  double Cn, Ct[3], at[2], h2 = 0.0;

  weak_parts(p, c, x, &Cn, Ct, at);
  const double ln = lambda[0] * c->n[0] + lambda[1] * c->n[1] + lambda[2] * c->n[2];
  if (at[0] >= 0) {
    /* unilateral: complementarity, lambda_n >= 0, C_n + alpha~ lambda_n >= 0, their product 0 */
    const double hn = c->unilateral && !(ln > 0) ? (Cn < 0 ? Cn : 0.0) : Cn + at[0] * ln;
    h2 += hn * hn;
  }
  if (at[1] >= 0)
    for (int d = 0; d < 3; ++d) {
      const double h = Ct[d] + at[1] * (lambda[d] - ln * c->n[d]);
      h2 += h * h;
    }
  for (int j = 0; j < c->nnodes; ++j)
    for (int d = 0; d < 3; ++d) force[3 * c->node[j] + d] += c->a[j] * lambda[d];
  return h2;
}
