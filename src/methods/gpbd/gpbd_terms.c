#include "methods/gpbd/gpbd_terms.h"
#include <math.h>
#include "core/element.h"
#include "core/stress_derivative.h"
#include <string.h>

double pbng_gpbd_material_tet_energy(const void *ctx, const double *y, double *grad, double *hess)
{
  const pbng_gpbd_material_tet *t = ctx;
  const double *B = t->rest->B, V = t->rest->volume;
  double F[9];
  pbng_gpbd_tet_deformation(t->rest, (const double(*)[3])y, F);
  const double U = V * pbng_energy_density(t->mat, F);
  if (!isfinite(U)) return INFINITY;
  if (grad) {
    double P[9], g[3];
    pbng_first_piola(t->mat, F, P);
    for (int a = 0; a < 4; ++a) {
      pbng_tet_shape_gradient(B, a, g);
      for (int i = 0; i < 3; ++i) grad[3 * a + i] = V * (P[3 * i] * g[0] + P[3 * i + 1] * g[1] + P[3 * i + 2] * g[2]);
    }
  }
  if (hess) {
    double D[81];
    pbng_stress_derivative(t->mat, F, D);
    pbng_tet_stiffness(D, B, V, hess);
  }
  return U;
}

/* ---- sheet terms ---- */

#include "core/contact_geometry.h"
#include "problem/sheet_terms.h"

static const int32_t corner_rows[6] = {0, 1, 2, 3, 4, 5}; /* y holds the element's corners in order */

static int sheet_corners(pbng_element_kind kind) { return kind == PBNG_ELEMENT_TRI3 ? 3 : kind == PBNG_ELEMENT_CLOTH6 ? 6 : 4; }

/* The kinds whose first three nodes are a triangle with a membrane (the mirror barrier's). */
static int has_triangle(pbng_element_kind kind) { return kind == PBNG_ELEMENT_TRI3 || kind == PBNG_ELEMENT_CLOTH6; }

void pbng_gpbd_sheet_reference_normal(pbng_gpbd_sheet_term *t, const double (*x)[3])
{
  if (has_triangle(t->kind)) pbng_triangle_normal(x[0], x[1], x[2], t->normal);
  else t->normal[0] = t->normal[1] = t->normal[2] = 0.0;
}

double pbng_gpbd_sheet_energy(const void *ctx, const double *y, double *grad, double *hess)
{
  const pbng_gpbd_sheet_term *t = ctx;
  double g[6][3];
  if (has_triangle(t->kind) && (t->normal[0] != 0.0 || t->normal[1] != 0.0 || t->normal[2] != 0.0)) {
    double n[3];
    pbng_triangle_normal(&y[0], &y[3], &y[6], n);
    if (!(n[0] * t->normal[0] + n[1] * t->normal[1] + n[2] * t->normal[2] > 0.0)) return INFINITY; /* mirrored: header */
  }
  const double U = grad ? pbng_sheet_element_gradient(t->mat, t->kind, t->rest, corner_rows, y, g)
                        : pbng_sheet_element_energy(t->mat, t->kind, t->rest, corner_rows, y);
  if (!isfinite(U)) return INFINITY;
  if (grad) memcpy(grad, g, sizeof(double) * 3 * (size_t)sheet_corners(t->kind));
  if (hess) pbng_sheet_element_hessian(t->mat, t->kind, t->rest, corner_rows, y, hess);
  return U;
}

/* The membrane rows of the fundamental-form strain, in the triangle's own frame. */
static void membrane_strain(const pbng_membrane_rest *m, const double (*x)[3], double s[3], double *S)
{
  pbng_gpbd_cloth_rest r = {.area = m->area, .l2 = 1.0};
  memcpy(r.g, m->g, sizeof(r.g));
  pbng_gpbd_cloth_membrane_strain(&r, x, s, (double(*)[9])S);
}

/* s = v = sum_a K_a x_a, S[r][3a + j] = K_a delta_rj (core/bending.h). */
static void bending_strain(const pbng_bending_stencil *b, const double (*x)[3], double s[3], double *S)
{
  for (int r = 0; r < 3; ++r) {
    s[r] = 0.0;
    for (int a = 0; a < 4; ++a) {
      s[r] += b->K[a] * x[a][r];
      if (S)
        for (int j = 0; j < 3; ++j) S[12 * r + 3 * a + j] = r == j ? b->K[a] : 0.0;
    }
  }
}

void pbng_gpbd_sheet_strain(const pbng_gpbd_sheet_term *t, const double (*x)[3], double *s, double *S)
{
  if (t->kind == PBNG_ELEMENT_CLOTH6) pbng_gpbd_cloth_strain(&t->rest->cloth, x, s, (double(*)[18])S); /* Sec. 4.2 */
  else if (t->kind == PBNG_ELEMENT_TRI3) membrane_strain(&t->rest->membrane, x, s, S);
  else bending_strain(&t->rest->bending, x, s, S);
}

/* The cloth6 stencil's scales (pbng_gpbd_sheet_force_scales). */
static void cloth_force_scales(const pbng_cloth6_material *m, const pbng_gpbd_cloth_rest *r, const double (*x)[3], double *fa)
{
  double F2 = 0.0;
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 2; ++c) {
      const double f = x[0][i] * r->g[0][c] + x[1][i] * r->g[1][c] + x[2][i] * r->g[2][c];
      F2 += f * f;
    }
  const double kmax = fmax(m->k_weft, fmax(m->k_warp, m->k_shear)), stretch = fmax(1.0, F2);
  const double bend = r->area * m->k_bend / (r->l2 * sqrt(r->l2)) * stretch;
  for (int a = 0; a < 6; ++a) fa[a] = bend + (a < 3 ? r->area * kmax * stretch * (fabs(r->g[a][0]) + fabs(r->g[a][1])) : 0.0);
}

void pbng_gpbd_sheet_force_scales(const pbng_gpbd_sheet_term *t, const double (*x)[3], double *fa)
{
  if (t->kind == PBNG_ELEMENT_CLOTH6) {
    cloth_force_scales(&t->mat->cloth6, &t->rest->cloth, x, fa);
    return;
  }
  if (t->kind == PBNG_ELEMENT_BEND4) {
    const pbng_bending_stencil *b = &t->rest->bending;
    double v = 0.0;
    for (int c = 0; c < 4; ++c) v += fabs(b->K[c]) * (fabs(x[c][0]) + fabs(x[c][1]) + fabs(x[c][2]));
    for (int a = 0; a < 4; ++a) fa[a] = t->mat->bending_stiffness * b->scale * fabs(b->K[a]) * v;
    return;
  }
  const pbng_membrane_rest *m = &t->rest->membrane;
  double F[3][2], F2 = 0.0, cmax = 0.0;
  pbng_membrane_deformation(x, m, F);
  for (int i = 0; i < 3; ++i) F2 += F[i][0] * F[i][0] + F[i][1] * F[i][1];
  for (int i = 0; i < 9; ++i) cmax = fmax(cmax, fabs(t->mat->membrane.C[i / 3][i % 3]));
  const double scale = t->mat->membrane.thickness * m->area * cmax * fmax(1.0, F2);
  for (int a = 0; a < 3; ++a) fa[a] = scale * (fabs(m->g[a][0]) + fabs(m->g[a][1]));
}
