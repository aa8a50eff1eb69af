#include "problem/sheet_terms.h"
#include <string.h>
#include "core/vec3.h"

/* The element's corner positions x_t[a] from the global array. */
static void gather(const int32_t *t, int n, const double *x, double (*xe)[3])
{
  for (int a = 0; a < n; ++a) memcpy(xe[a], &x[3 * (int64_t)t[a]], sizeof(xe[a]));
}

double pbng_sheet_element_energy(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *t, const double *x)
{
  double xe[6][3];
  if (kind == PBNG_ELEMENT_CLOTH6) {
    gather(t, 6, x, xe);
    return pbng_cloth6_energy(&m->cloth6, &r->cloth, (const double(*)[3])xe, NULL, NULL);
  }
  if (kind == PBNG_ELEMENT_TRI3) {
    gather(t, 3, x, xe);
    return pbng_membrane_energy(&m->membrane, &r->membrane, (const double(*)[3])xe);
  }
  gather(t, 4, x, xe);
  return pbng_bending_energy(&r->bending, m->bending_stiffness, (const double(*)[3])xe);
}

/* H += s n n^T, n the unit normal of triangle xe (nothing for a collapsed one). */
static void add_normal_shift(const double (*xe)[3], double s, double H[9])
{
  double u[3], v[3], n[3];
  vec3_sub(xe[1], xe[0], u);
  vec3_sub(xe[2], xe[0], v);
  vec3_cross(u, v, n);
  const double len = vec3_norm(n);
  if (!(len > 0)) return;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) H[3 * i + j] += s * n[i] * n[j] / (len * len);
}

double pbng_sheet_element_gradient(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *t, const double *x,
                                   double (*grad)[3])
{
  double xe[6][3];
  if (kind == PBNG_ELEMENT_CLOTH6) {
    gather(t, 6, x, xe);
    return pbng_cloth6_energy(&m->cloth6, &r->cloth, (const double(*)[3])xe, &grad[0][0], NULL);
  }
  if (kind == PBNG_ELEMENT_TRI3) {
    gather(t, 3, x, xe);
    return pbng_membrane_gradient(&m->membrane, &r->membrane, (const double(*)[3])xe, grad);
  }
  gather(t, 4, x, xe);
  return pbng_bending_gradient(&r->bending, m->bending_stiffness, (const double(*)[3])xe, grad);
}

void pbng_sheet_node_terms(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *t, int a, const double *x,
                           double f[3], double H[9])
{
  double xe[6][3], grad[6][3];
  if (kind == PBNG_ELEMENT_CLOTH6) { /* the Gauss-Newton block and the membrane rows' positive part; the shift as a membrane's */
    gather(t, 6, x, xe);
    pbng_cloth6_node_terms(&m->cloth6, &r->cloth, (const double(*)[3])xe, a, grad[a], H);
    if (H) add_normal_shift((const double(*)[3])xe, 1e-2 * (H[0] + H[4] + H[8]) / 3, H);
  } else if (kind == PBNG_ELEMENT_TRI3) {
    gather(t, 3, x, xe);
    pbng_membrane_node_terms(&m->membrane, &r->membrane, (const double(*)[3])xe, a, grad[a], H);
    if (H) add_normal_shift((const double(*)[3])xe, 1e-2 * (H[0] + H[4] + H[8]) / 3, H);
  } else {
    (void)pbng_sheet_element_gradient(m, kind, r, t, x, grad); /* bending: v = sum K_i x_i once, cheap */
    if (H) {
      const double q = m->bending_stiffness * pbng_bending_q(&r->bending, a, a);
      for (int k = 0; k < 9; ++k) H[k] = k % 4 == 0 ? q : 0.0;
    }
  }
  for (int d = 0; d < 3; ++d) f[d] = -grad[a][d];
}

void pbng_sheet_element_hessian(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *t, const double *x,
                                double *Ke)
{
  if (kind == PBNG_ELEMENT_CLOTH6) {
    double xe[6][3];
    gather(t, 6, x, xe);
    (void)pbng_cloth6_energy(&m->cloth6, &r->cloth, (const double(*)[3])xe, NULL, Ke);
    return;
  }
  if (kind == PBNG_ELEMENT_TRI3) {
    double xe[3][3], H[9][9];
    gather(t, 3, x, xe);
    pbng_membrane_hessian(&m->membrane, &r->membrane, (const double(*)[3])xe, H);
    memcpy(Ke, H, sizeof(H));
    return;
  }
  for (int a = 0; a < 4; ++a) /* k_b Q_ab I */
    for (int b = 0; b < 4; ++b) {
      const double q = m->bending_stiffness * pbng_bending_q(&r->bending, a, b);
      for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) Ke[12 * (3 * a + i) + 3 * b + k] = i == k ? q : 0.0;
    }
}

double pbng_sheet_corner_mass(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, int a)
{
  if (kind == PBNG_ELEMENT_CLOTH6) return a < 3 ? m->density * m->membrane.thickness * r->cloth.area / 3.0 : 0.0; /* the triangle's corners */
  return kind == PBNG_ELEMENT_TRI3 ? m->density * m->membrane.thickness * r->membrane.area / 3.0 : 0.0;
}
