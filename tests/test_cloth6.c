/* The six-dimensional cloth stencil's energy (src/core/cloth6.c, issue 43 item 4; docs/cloth.md#the-six-dimensional-cloth-stencil):
 *  - dU/dx against central differences of U, and the exact Hessian (membrane and II rows' curvature) against
 *    central differences of dU/dx, on random stencils (flat and curved rest patches, with a free edge or not)
 *    in random bent states, a stretched state (10 % along weft) and a state bent by 30 degrees across one edge,
 *    with beta = 0 and beta > 0; the Hessian symmetric;
 *  - the check can fail: the Hessian without the II rows' curvature (Gauss-Newton bending) misses the central
 *    differences in a bent state by more than the tolerance;
 *  - U(s) itself: the stiffening law's derivatives by central differences in s, zero at rest and under a rigid
 *    motion, and the moduli from a membrane (uniaxial stiffness and shear modulus, times the thickness);
 *  - PBNG's node terms: the gradient equal to the element gradient's rows, the block symmetric positive
 *    semidefinite and at least the Gauss-Newton block. */
#include <math.h>
#include <string.h>
#include "core/cloth6.h"
#include "core/dense.h"
#include "core/membrane.h"
#include "cloth_stencil.h"
#include "test_check.h"

static const double pi = 3.14159265358979323846;

/* x = A X + noise, A = I + strength * random. */
static void deform(uint64_t *s, const double X[6][3], double strength, double x[6][3])
{
  double A[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) A[i][j] = (i == j) + strength * (2 * next_random(s) - 1);
  for (int a = 0; a < 6; ++a)
    for (int i = 0; i < 3; ++i) x[a][i] = A[i][0] * X[a][0] + A[i][1] * X[a][1] + A[i][2] * X[a][2] + 0.1 * strength * (next_random(s) - 0.5);
}

static const double weft_axis[3] = {0.3, 1, 0.1};

/* Relative errors of the gradient and the Hessian against central differences (h = 1e-6) at x; gn: the Hessian
 * without the II rows' curvature (to show the check can fail). */
static void derivative_errors(const pbng_cloth6_material *m, const pbng_gpbd_cloth_rest *r, const double x0[6][3], int gn, double *err_g,
                              double *err_h, double *asym)
{
  double x[6][3], g[18], H[324], gp[18], gm[18];
  memcpy(x, x0, sizeof(x));
  pbng_cloth6_energy(m, r, x, g, H);
  if (gn) { /* remove the II rows' curvature again */
    double s[6], dU[6], mdU[3], C[18][18];
    pbng_gpbd_cloth_strain(r, x, s, NULL);
    pbng_cloth6_energy_strain(m, r->area, r->l2, s, dU, NULL);
    memset(C, 0, sizeof(C));
    for (int k = 0; k < 3; ++k) mdU[k] = -dU[3 + k];
    pbng_gpbd_cloth_bending_curvature(r, x, mdU, C);
    for (int k = 0; k < 324; ++k) H[k] += C[k / 18][k % 18];
  }
  double sg = 0, sh = 0, eg = 0, eh = 0, as = 0;
  for (int v = 0; v < 18; ++v) {
    const double h = 1e-6, keep = x[v / 3][v % 3];
    x[v / 3][v % 3] = keep + h;
    const double Up = pbng_cloth6_energy(m, r, x, gp, NULL);
    x[v / 3][v % 3] = keep - h;
    const double Um = pbng_cloth6_energy(m, r, x, gm, NULL);
    x[v / 3][v % 3] = keep;
    eg = fmax(eg, fabs(g[v] - (Up - Um) / (2 * h))), sg = fmax(sg, fabs(g[v]));
    for (int u = 0; u < 18; ++u) {
      eh = fmax(eh, fabs(H[18 * u + v] - (gp[u] - gm[u]) / (2 * h))), sh = fmax(sh, fabs(H[18 * u + v]));
      as = fmax(as, fabs(H[18 * u + v] - H[18 * v + u]));
    }
  }
  *err_g = eg / fmax(sg, 1e-300), *err_h = eh / fmax(sh, 1e-300), *asym = as / fmax(sh, 1e-300);
}

/* The stencil at rest in the xy plane (grid triangle and its three neighbours), each of whose free edges free[i]. */
static void grid_stencil(double X[6][3])
{
  const double P[6][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {-1, 1, 0}, {1, -1, 0}};
  memcpy(X, P, sizeof(P));
}

static void check_derivatives(void)
{
  uint64_t s = 7;
  pbng_cloth6_material mats[2] = {{2.0, 1.5, 0.7, 0.0, 0.05}, {2.0, 1.5, 0.7, 40.0, 0.05}};
  double worst_g = 0, worst_h = 0, worst_as = 0, gn_miss = 0;
  int cases = 0;
  for (int t = 0; t < 24; ++t) {
    double X[6][3], x[6][3];
    const int nb[3] = {1, t % 3 != 1, 1}; /* every third with a free edge */
    pbng_gpbd_cloth_rest r;
    random_stencil(&s, t % 2 ? 0.3 : 0.0, X);
    check(pbng_gpbd_cloth_rest_shape(X, nb, weft_axis, &r) == 0, "cloth6: rest shape accepted", 0, 0);
    deform(&s, X, 0.15, x);
    double eg, eh, as;
    derivative_errors(&mats[t % 2 ? 1 : 0], &r, x, 0, &eg, &eh, &as);
    worst_g = fmax(worst_g, eg), worst_h = fmax(worst_h, eh), worst_as = fmax(worst_as, as), ++cases;
    derivative_errors(&mats[t % 2 ? 1 : 0], &r, x, 1, &eg, &eh, &as);
    gn_miss = fmax(gn_miss, eh);
  }
  /* stretched 10 % along the weft (local x), and bent 30 degrees about edge 0 (x1 - x2: node 3 rotated) */
  double X[6][3], x[6][3];
  const int all[3] = {1, 1, 1};
  const double along_x[3] = {1, 0, 0};
  pbng_gpbd_cloth_rest r;
  grid_stencil(X);
  pbng_gpbd_cloth_rest_shape(X, all, along_x, &r);
  for (int a = 0; a < 6; ++a) x[a][0] = 1.1 * X[a][0], x[a][1] = X[a][1], x[a][2] = X[a][2];
  for (int k = 0; k < 2; ++k) {
    double eg, eh, as;
    derivative_errors(&mats[k], &r, x, 0, &eg, &eh, &as);
    worst_g = fmax(worst_g, eg), worst_h = fmax(worst_h, eh), worst_as = fmax(worst_as, as), ++cases;
  }
  memcpy(x, X, sizeof(x));
  { /* node 3 = (1, 1, 0) rotated about the edge x1 x2 (the line x + y = 1) by 30 degrees */
    const double d = 1 / sqrt(2.0), th = pi / 6;
    for (int i = 0; i < 2; ++i) x[3][i] = 0.5 + d * cos(th) / sqrt(2.0);
    x[3][2] = d * sin(th);
  }
  for (int k = 0; k < 2; ++k) {
    double eg, eh, as;
    derivative_errors(&mats[k], &r, x, 0, &eg, &eh, &as);
    worst_g = fmax(worst_g, eg), worst_h = fmax(worst_h, eh), worst_as = fmax(worst_as, as), ++cases;
    derivative_errors(&mats[k], &r, x, 1, &eg, &eh, &as);
    gn_miss = fmax(gn_miss, eh);
  }
  printf("cloth6: %d states, gradient %.2e, Hessian %.2e, asymmetry %.2e (relative); without the II curvature %.2e\n", cases, worst_g, worst_h,
         worst_as, gn_miss);
  check(worst_g < 1e-7, "cloth6: dU/dx = central differences of U", worst_g, 1e-7);
  check(worst_h < 1e-6, "cloth6: exact Hessian = central differences of dU/dx", worst_h, 1e-6);
  check(worst_as < 1e-12, "cloth6: Hessian symmetric", worst_as, 1e-12);
  check(gn_miss > 1e-3, "cloth6: the check can fail (Gauss-Newton bending misses the differences)", gn_miss, 1e-3);
}

static void check_energy_law(void)
{
  const pbng_cloth6_material m = {2.0, 1.5, 0.7, 40.0, 0.05};
  const double s0[6] = {0.08, -0.05, 0.03, 2e-3, -1e-3, 4e-3}, area = 0.4, l2 = 0.9;
  double dU[6], d2U[6], worst1 = 0, worst2 = 0;
  pbng_cloth6_energy_strain(&m, area, l2, s0, dU, d2U);
  for (int k = 0; k < 6; ++k) {
    double sp[6], sm[6], dp[6], dm[6];
    const double h = 1e-6;
    memcpy(sp, s0, sizeof(sp)), memcpy(sm, s0, sizeof(sm));
    sp[k] += h, sm[k] -= h;
    const double Up = pbng_cloth6_energy_strain(&m, area, l2, sp, dp, NULL), Um = pbng_cloth6_energy_strain(&m, area, l2, sm, dm, NULL);
    worst1 = fmax(worst1, fabs(dU[k] - (Up - Um) / (2 * h)) / fabs(dU[k]));
    worst2 = fmax(worst2, fabs(d2U[k] - (dp[k] - dm[k]) / (2 * h)) / d2U[k]);
  }
  check(worst1 < 1e-8, "cloth6: dU/ds = central differences", worst1, 1e-8);
  check(worst2 < 1e-8, "cloth6: d2U/ds2 (diagonal) = central differences", worst2, 1e-8);
  /* stiffening: the tangent stiffness k (1 + 3 beta s^2) */
  check(fabs(d2U[0] - area * 2.0 * (1 + 3 * 40.0 * 0.08 * 0.08)) < 1e-12, "cloth6: tangent stiffness k (1 + 3 beta s^2)", d2U[0], 0);
  /* zero at rest and under a rigid motion */
  uint64_t s = 3;
  double X[6][3], x[6][3], R[3][3], t[3] = {0.3, -1, 2}, g[18];
  const int all[3] = {1, 1, 1};
  pbng_gpbd_cloth_rest r;
  random_stencil(&s, 0.3, X);
  pbng_gpbd_cloth_rest_shape(X, all, weft_axis, &r);
  random_rotation_matrix(&s, R);
  rigid(6, R, t, (const double(*)[3])X, x);
  const double U0 = pbng_cloth6_energy(&m, &r, X, NULL, NULL), U1 = pbng_cloth6_energy(&m, &r, x, g, NULL);
  double gmax = 0;
  for (int v = 0; v < 18; ++v) gmax = fmax(gmax, fabs(g[v]));
  check(fabs(U0) < 1e-20 && fabs(U1) < 1e-20 && gmax < 1e-12, "cloth6: zero energy and force at rest and rigidly moved", U1, gmax);
  /* the moduli of a membrane */
  pbng_membrane_material mm;
  pbng_cloth6_material c6;
  pbng_membrane_isotropic(1e5, 0.3, 2e-3, &mm);
  check(pbng_cloth6_material_from_membrane(mm.C, 2e-3, 0, 1e-3, &c6) == NULL, "cloth6: a membrane's moduli accepted", 0, 0);
  check(fabs(c6.k_weft - 200.0) < 1e-9 && fabs(c6.k_warp - 200.0) < 1e-9 && fabs(c6.k_shear - 2e-3 * 1e5 / 2.6) < 1e-9,
        "cloth6: isotropic membrane -> k = E h (uniaxial), k_shear = mu h", c6.k_weft, c6.k_shear);
  check(pbng_cloth6_material_from_membrane(mm.C, 2e-3, -1, 1e-3, &c6) != NULL && pbng_cloth6_material_from_membrane(mm.C, 0, 0, 1e-3, &c6) != NULL,
        "cloth6: a negative stiffening factor or zero thickness refused", 0, 0);
}

/* Smallest eigenvalue of a symmetric 3 x 3 (cyclic Jacobi, core/dense.h). */
static double min_eigen3(const double A[9])
{
  double B[9], w[3], V[9];
  memcpy(B, A, sizeof(B));
  dense_symmetric_eigen(3, B, w, V);
  return fmin(w[0], fmin(w[1], w[2]));
}

static void check_node_terms(void)
{
  uint64_t s = 11;
  const pbng_cloth6_material m = {2.0, 1.5, 0.7, 40.0, 0.05};
  double worst_g = 0, worst_sym = 0, worst_min = 0, worst_gn = 0;
  for (int t = 0; t < 12; ++t) {
    double X[6][3], x[6][3], g[18];
    const int nb[3] = {1, 1, t % 2};
    pbng_gpbd_cloth_rest r;
    random_stencil(&s, 0.2, X);
    pbng_gpbd_cloth_rest_shape(X, nb, weft_axis, &r);
    deform(&s, X, t % 3 == 0 ? -0.1 : 0.15, x); /* compressed states too (negative membrane curvature) */
    pbng_cloth6_energy(&m, &r, x, g, NULL);
    double gs = 0;
    for (int v = 0; v < 18; ++v) gs = fmax(gs, fabs(g[v]));
    for (int a = 0; a < 6; ++a) {
      double ga[3], H[9], s6[6], S[6][18], dU[6], d2U[6], scale = 0;
      pbng_cloth6_node_terms(&m, &r, x, a, ga, H);
      for (int j = 0; j < 3; ++j) worst_g = fmax(worst_g, fabs(ga[j] - g[3 * a + j]) / gs);
      pbng_gpbd_cloth_strain(&r, x, s6, S);
      pbng_cloth6_energy_strain(&m, r.area, r.l2, s6, dU, d2U);
      double D[9];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          double gn = 0;
          for (int k = 0; k < 6; ++k) gn += d2U[k] * S[k][3 * a + i] * S[k][3 * a + j];
          D[3 * i + j] = H[3 * i + j] - gn;
          scale = fmax(scale, fabs(H[3 * i + j]));
          worst_sym = fmax(worst_sym, fabs(H[3 * i + j] - H[3 * j + i]));
        }
      if (scale == 0) continue;
      worst_min = fmin(worst_min, min_eigen3(H) / scale);
      worst_gn = fmin(worst_gn, min_eigen3(D) / scale);
    }
  }
  { /* the membrane curvature's corner block = the full curvature's (a, a) block */
    double X[6][3], x[6][3], C[18][18], B[9], worst = 0, scale = 0;
    const int nb[3] = {1, 1, 1};
    const double c[3] = {0.7, -0.4, 1.3};
    pbng_gpbd_cloth_rest r;
    random_stencil(&s, 0.2, X);
    pbng_gpbd_cloth_rest_shape(X, nb, weft_axis, &r);
    deform(&s, X, 0.15, x);
    memset(C, 0, sizeof(C));
    pbng_gpbd_cloth_membrane_curvature(&r, x, c, C);
    for (int a = 0; a < 3; ++a) {
      pbng_gpbd_cloth_membrane_curvature_block(&r, x, c, a, B);
      for (int k = 0; k < 9; ++k) worst = fmax(worst, fabs(B[k] - C[3 * a + k / 3][3 * a + k % 3])), scale = fmax(scale, fabs(B[k]));
    }
    check(worst <= 1e-14 * scale && scale > 0, "cloth6: the membrane curvature's corner block = the full one's", worst, scale);
  }
  check(worst_g < 1e-14, "cloth6 node terms: gradient = the element gradient's rows", worst_g, 1e-14);
  check(worst_sym < 1e-12, "cloth6 node terms: block symmetric", worst_sym, 1e-12);
  check(worst_min > -1e-12, "cloth6 node terms: block positive semidefinite", worst_min, -1e-12);
  check(worst_gn > -1e-12, "cloth6 node terms: block >= the Gauss-Newton block", worst_gn, -1e-12);
}

int main(void)
{
  check_derivatives();
  check_energy_law();
  check_node_terms();
  printf("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
