/* GPBD's adapter of pbng's materials (src/solvers/gpbd_terms.c): for every material kind, on a well-shaped
 * and a strongly sheared (and an inverted) linear tetrahedron, U = V Psi(F) against the material's own
 * pbng_energy_density, the gradient (12) against central differences of U and the Hessian (144) against
 * central differences of the gradient; the Hessian symmetric; zero force at rest; +inf where the material
 * is not defined (neohookean_log's barrier at det F <= 0). */
#include "solvers/gpbd_terms.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/element.h"
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
  printf("test_gpbd_terms: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
