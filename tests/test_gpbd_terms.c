/* GPBD's adapter of pbng's materials (src/methods/gpbd/gpbd_terms.c): for every material kind, on a well-shaped
 * and a strongly sheared (and an inverted) linear tetrahedron, U = V Psi(F) against the material's own
 * pbng_energy_density, the gradient (12) against central differences of U and the Hessian (144) against
 * central differences of the gradient; the Hessian symmetric; zero force at rest; +inf where the material
 * is not defined (neohookean_log's barrier at det F <= 0).
 * Sheet terms (a tri3 membrane, k = 3, and a bend4 stencil, k = 3): U against problem/sheet_terms' energy,
 * gradient and Hessian against central differences, the strain's Jacobian S against central differences of
 * s, and the gradient in the row space of S (dU/dx = S^T c: the term's force lies in its strain directions,
 * so GPBD's update can satisfy Eq. 7). */
#include "methods/gpbd/gpbd_terms.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/dense.h"
#include "core/element.h"
#include "problem/sheet_terms.h"
#include "test_check.h"

static void deformed(uint64_t *s, const double X[4][3], double strength, double x[4][3])
{
  double A[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) A[i][j] = (i == j) + strength * (2 * next_random(s) - 1);
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i) x[a][i] = A[i][0] * X[a][0] + A[i][1] * X[a][1] + A[i][2] * X[a][2] + 0.05 * strength * (next_random(s) - 0.5);
}

static void check_state(const pbng_material *m, const pbng_gpbd_tet_rest *r, const double x[4][3], const char *what)
{
  const pbng_gpbd_material_tet ctx = {m, r};
  double grad[12], hess[144], g1[12], g2[12], y[12];
  const double U = pbng_gpbd_material_tet_energy(&ctx, &x[0][0], grad, hess);
  double F[9];
  pbng_gpbd_tet_deformation(r, x, F);
  char msg[160];
  if (!isfinite(pbng_energy_density(m, F))) { /* a barrier (neohookean_log at det F <= 0): +inf, nothing else */
    snprintf(msg, sizeof(msg), "%s %s: +inf outside the energy's domain", pbng_material_kind_name(m->kind), what);
    check(U == INFINITY, msg, U, INFINITY);
    return;
  }
  snprintf(msg, sizeof(msg), "%s %s: U = V Psi(F)", pbng_material_kind_name(m->kind), what);
  check(fabs(U - r->volume * pbng_energy_density(m, F)) <= 1e-14 * fabs(U) + 1e-300, msg, U, r->volume * pbng_energy_density(m, F));
  double gmax = 0, hmax = 0, gerr = 0, herr = 0, asym = 0;
  for (int j = 0; j < 12; ++j) gmax = fmax(gmax, fabs(grad[j]));
  for (int j = 0; j < 144; ++j) hmax = fmax(hmax, fabs(hess[j]));
  const double h = 1e-6;
  for (int j = 0; j < 12; ++j) {
    memcpy(y, &x[0][0], sizeof(y));
    y[j] += h;
    const double Up = pbng_gpbd_material_tet_energy(&ctx, y, g1, NULL);
    y[j] -= 2 * h;
    const double Um = pbng_gpbd_material_tet_energy(&ctx, y, g2, NULL);
    gerr = fmax(gerr, fabs((Up - Um) / (2 * h) - grad[j]));
    for (int i = 0; i < 12; ++i) herr = fmax(herr, fabs((g1[i] - g2[i]) / (2 * h) - hess[12 * i + j]));
  }
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j) asym = fmax(asym, fabs(hess[12 * i + j] - hess[12 * j + i]));
  snprintf(msg, sizeof(msg), "%s %s: gradient = central differences", pbng_material_kind_name(m->kind), what);
  check(gerr <= 1e-6 * gmax + 1e-12, msg, gerr, gmax);
  snprintf(msg, sizeof(msg), "%s %s: Hessian = central differences of the gradient", pbng_material_kind_name(m->kind), what);
  check(herr <= 1e-6 * hmax, msg, herr, hmax);
  snprintf(msg, sizeof(msg), "%s %s: Hessian symmetric", pbng_material_kind_name(m->kind), what);
  check(asym <= 1e-12 * hmax, msg, asym, hmax);
}

/* |g - S^T c| for the least-squares c (S k x dof): the part of g outside the row space of S. */
static double outside_row_space(int k, int dof, const double *S, const double *g)
{
  double A[36], c[6], r = 0.0;
  for (int i = 0; i < k; ++i) {
    c[i] = 0.0;
    for (int j = 0; j < dof; ++j) c[i] += S[dof * i + j] * g[j];
    for (int l = 0; l < k; ++l) {
      A[k * i + l] = 0.0;
      for (int j = 0; j < dof; ++j) A[k * i + l] += S[dof * i + j] * S[dof * l + j];
    }
  }
  if (dense_spd_solve(k, A, c)) return INFINITY;
  for (int j = 0; j < dof; ++j) {
    double v = g[j];
    for (int i = 0; i < k; ++i) v -= S[dof * i + j] * c[i];
    r = fmax(r, fabs(v));
  }
  return r;
}

static void check_sheet_state(const pbng_gpbd_sheet_term *t, const double (*x)[3], const char *what)
{
  const int n = t->kind == PBNG_ELEMENT_TRI3 ? 3 : 4, dof = 3 * n;
  const int32_t rows[4] = {0, 1, 2, 3};
  double grad[12], hess[144], g1[12], g2[12], y[12], s[3], S[36], s1[3], s2[3];
  char msg[160];
  const double U = pbng_gpbd_sheet_energy(t, &x[0][0], grad, hess);
  const double U0 = pbng_sheet_element_energy(t->mat, t->kind, t->rest, rows, &x[0][0]);
  snprintf(msg, sizeof(msg), "%s %s: U = the sheet term's energy", t->kind == PBNG_ELEMENT_TRI3 ? "tri3" : "bend4", what);
  check(U == U0, msg, U, U0);
  pbng_gpbd_sheet_strain(t, x, s, S);
  double gmax = 0, hmax = 0, smax = 0, gerr = 0, herr = 0, serr = 0;
  for (int j = 0; j < dof; ++j) gmax = fmax(gmax, fabs(grad[j]));
  for (int j = 0; j < dof * dof; ++j) hmax = fmax(hmax, fabs(hess[j]));
  for (int j = 0; j < 3 * dof; ++j) smax = fmax(smax, fabs(S[j]));
  const double h = 1e-6;
  for (int j = 0; j < dof; ++j) {
    memcpy(y, &x[0][0], sizeof(double) * (size_t)dof);
    y[j] += h;
    const double Up = pbng_gpbd_sheet_energy(t, y, g1, NULL);
    pbng_gpbd_sheet_strain(t, (const double(*)[3])y, s1, NULL);
    y[j] -= 2 * h;
    const double Um = pbng_gpbd_sheet_energy(t, y, g2, NULL);
    pbng_gpbd_sheet_strain(t, (const double(*)[3])y, s2, NULL);
    gerr = fmax(gerr, fabs((Up - Um) / (2 * h) - grad[j]));
    for (int i = 0; i < dof; ++i) herr = fmax(herr, fabs((g1[i] - g2[i]) / (2 * h) - hess[dof * i + j]));
    for (int r = 0; r < 3; ++r) serr = fmax(serr, fabs((s1[r] - s2[r]) / (2 * h) - S[dof * r + j]));
  }
  snprintf(msg, sizeof(msg), "%s %s: gradient = central differences", t->kind == PBNG_ELEMENT_TRI3 ? "tri3" : "bend4", what);
  check(gerr <= 1e-6 * gmax + 1e-12, msg, gerr, gmax);
  snprintf(msg, sizeof(msg), "%s %s: Hessian = central differences of the gradient", t->kind == PBNG_ELEMENT_TRI3 ? "tri3" : "bend4", what);
  check(herr <= 1e-6 * hmax + 1e-9, msg, herr, hmax);
  snprintf(msg, sizeof(msg), "%s %s: strain Jacobian = central differences", t->kind == PBNG_ELEMENT_TRI3 ? "tri3" : "bend4", what);
  check(serr <= 1e-7 * smax, msg, serr, smax);
  const double out = outside_row_space(3, dof, S, grad);
  snprintf(msg, sizeof(msg), "%s %s: dU/dx in the row space of S", t->kind == PBNG_ELEMENT_TRI3 ? "tri3" : "bend4", what);
  check(out <= 1e-10 * gmax + 1e-14, msg, out, gmax);
}

static void check_sheet_terms(uint64_t *seed)
{
  pbng_sheet_material m = {.bending_stiffness = 2e-3, .weft = {1, 0, 0}, .density = 200};
  check(pbng_membrane_orthotropic(1e6, 5e5, 2e5, 0.3, 0.15, 1e-3, &m.membrane) == NULL, "membrane", 0, 0);
  const double X[4][3] = {{0, 0, 0}, {1.0, 0.1, 0}, {0.3, 0.9, 0}, {0.8, -0.8, 0.05}}; /* x0 x1 shared, x2, x3 */
  pbng_sheet_rest tri, bend;
  check(pbng_membrane_rest_shape(X, m.weft, &tri.membrane) == 0, "tri3 rest", 0, 0);
  check(pbng_bending_rest(X, &bend.bending) == 0, "bend4 rest", 0, 0);
  const pbng_gpbd_sheet_term terms[2] = {{&m, PBNG_ELEMENT_TRI3, &tri, {0, 0, 0}}, {&m, PBNG_ELEMENT_BEND4, &bend, {0, 0, 0}}};
  for (int t = 0; t < 2; ++t)
    for (int trial = 0; trial < 4; ++trial) {
      double R[3][3], x[4][3];
      random_rotation_matrix(seed, R);
      const double strength = trial < 2 ? 0.1 : 0.5;
      for (int a = 0; a < 4; ++a)
        for (int i = 0; i < 3; ++i) {
          x[a][i] = 0.3 * (2 * next_random(seed) - 1);
          for (int j = 0; j < 3; ++j) x[a][i] += R[i][j] * (X[a][j] + strength * (next_random(seed) - 0.5));
        }
      check_sheet_state(&terms[t], (const double(*)[3])x, trial < 2 ? "mild" : "strong");
    }
  /* the mirror barrier: with the rest triangle as reference, its mirror image in its own plane (same I, zero
   * energy) is +inf, the rest triangle itself is not */
  pbng_gpbd_sheet_term ref = terms[0];
  pbng_gpbd_sheet_reference_normal(&ref, X);
  double mirrored[3][3];
  for (int a = 0; a < 3; ++a) mirrored[a][0] = -X[a][0], mirrored[a][1] = X[a][1], mirrored[a][2] = X[a][2];
  check(pbng_gpbd_sheet_energy(&ref, &X[0][0], NULL, NULL) == 0.0, "tri3: zero energy at rest with the reference normal", 0, 0);
  check(pbng_gpbd_sheet_energy(&terms[0], &mirrored[0][0], NULL, NULL) < 1e-12, "tri3: the mirror image has zero membrane energy", 0, 0);
  check(pbng_gpbd_sheet_energy(&ref, &mirrored[0][0], NULL, NULL) == INFINITY, "tri3: the mirror image is +inf against the reference normal", 0, 0);
}

int main(void)
{
  const double X[4][3] = {{0.1, 0.0, 0.05}, {1.1, 0.1, 0.0}, {0.2, 0.9, 0.1}, {0.0, 0.2, 1.2}};
  pbng_gpbd_tet_rest r;
  check(pbng_gpbd_tet_rest_shape(X, &r) == 0, "rest shape", 0, 0);
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int kind = 0; kind < PBNG_MATERIAL_COUNT; ++kind) {
    pbng_material m;
    check(pbng_material_init(&m, (pbng_material_kind)kind, 1e5, 0.3) == 0, "material", kind, 0);
    /* rest: no force */
    const pbng_gpbd_material_tet ctx = {&m, &r};
    double grad[12], gmax = 0;
    pbng_gpbd_material_tet_energy(&ctx, &X[0][0], grad, NULL);
    for (int j = 0; j < 12; ++j) gmax = fmax(gmax, fabs(grad[j]));
    check(gmax <= 1e-9 * m.mu, "zero force at rest", gmax, 0);
    for (int t = 0; t < 3; ++t) {
      double x[4][3];
      deformed(&seed, X, 0.15, x);
      check_state(&m, &r, x, "mild");
      deformed(&seed, X, 0.6, x);
      check_state(&m, &r, x, "sheared");
    }
    double x[4][3]; /* inverted: node 3 through the opposite face */
    memcpy(x, X, sizeof(x));
    x[3][2] = -0.4;
    check_state(&m, &r, x, "inverted");
  }
  check_sheet_terms(&seed);
  printf("test_gpbd_terms: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
