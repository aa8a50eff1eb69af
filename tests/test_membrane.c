/* Membrane and bending terms of sheets (src/core/membrane.c, bending.c; docs/cloth.md):
 *  - materials: the isotropic membrane is the orthotropic one with equal parameters and has
 *    lambda' = E nu / (1 - nu^2), mu = E / (2 (1 + nu)); uniaxial stress along weft and along warp
 *    (the other normal stress zero) has the stiffness k_weft and k_warp; impossible parameters refused;
 *  - rest shape: the local frame's x axis is the weft axis projected on the triangle, F = I at rest,
 *    zero energy and force under rigid motions, the gradients sum to zero;
 *  - derivatives by central differences: energy -> gradient, gradient -> exact Hessian (random
 *    stretched, compressed and sheared states, orthotropic and isotropic); the exact Hessian symmetric;
 *  - PBNG's block: positive semi-definite in every state, equal to the exact diagonal block while S is
 *    positive semi-definite, and above it (block - exact PSD) under compression;
 *  - patch test: a sheet of triangles under a uniform in-plane stretch has the same S in every triangle
 *    and no net force on its interior nodes;
 *  - energy invariant under rotating the sheet together with its weft axis;
 *  - bending: K sums to zero and annihilates a flat rest stencil; zero energy for rigid motions of a flat
 *    rest shape; a hinge folded rigidly by theta has E = k_b/2 * 3/(A0 + A1) * (2 |e| sin(theta/2))^2;
 *    the gradient by central differences; degenerate stencils refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/bending.h"
#include "core/membrane.h"
#include "test_check.h"

#define PI 3.14159265358979323846

static void rotate(const double R[3][3], const double p[3], const double t[3], double q[3])
{
  for (int i = 0; i < 3; ++i) q[i] = R[i][0] * p[0] + R[i][1] * p[1] + R[i][2] * p[2] + t[i];
}

/* A random well-shaped rest triangle in 3-D and a deformed state: the rest corners through a random
 * 3 x 3 map of the given strength plus noise. */
static void random_triangle(uint64_t *s, double X[3][3])
{
  const double base[3][3] = {{0, 0, 0}, {1, 0, 0}, {0.3, 0.9, 0}};
  double R[3][3], t[3];
  random_rotation_matrix(s, R);
  for (int k = 0; k < 3; ++k) t[k] = 2 * next_random(s) - 1;
  for (int a = 0; a < 3; ++a) {
    double p[3];
    for (int k = 0; k < 3; ++k) p[k] = base[a][k] + 0.2 * (next_random(s) - 0.5) * (k < 2);
    rotate(R, p, t, X[a]);
  }
}

static void deform(uint64_t *s, const double X[3][3], double strength, double x[3][3])
{
  double A[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) A[i][j] = (i == j) + strength * (2 * next_random(s) - 1);
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < 3; ++i) x[a][i] = A[i][0] * X[a][0] + A[i][1] * X[a][1] + A[i][2] * X[a][2] + 0.05 * strength * (next_random(s) - 0.5);
}

static double max_abs(const double *v, int n)
{
  double m = 0;
  for (int i = 0; i < n; ++i) m = fmax(m, fabs(v[i]));
  return m;
}

/* Smallest eigenvalue of a symmetric 3 x 3 matrix by Jacobi rotations. */
static double min_eigenvalue3(const double H[9])
{
  double A[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) A[i][j] = 0.5 * (H[3 * i + j] + H[3 * j + i]);
  for (int sweep = 0; sweep < 50; ++sweep)
    for (int p = 0; p < 3; ++p)
      for (int q = p + 1; q < 3; ++q) {
        if (fabs(A[p][q]) < 1e-300) continue;
        const double theta = 0.5 * atan2(2 * A[p][q], A[q][q] - A[p][p]), c = cos(theta), s = sin(theta);
        for (int k = 0; k < 3; ++k) {
          const double akp = A[k][p], akq = A[k][q];
          A[k][p] = c * akp - s * akq, A[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; ++k) {
          const double apk = A[p][k], aqk = A[q][k];
          A[p][k] = c * apk - s * aqk, A[q][k] = s * apk + c * aqk;
        }
      }
  return fmin(A[0][0], fmin(A[1][1], A[2][2]));
}

static void check_materials(void)
{
  pbng_membrane_material iso, ortho;
  const double E = 2.5e3, nu = 0.3;
  check(pbng_membrane_isotropic(E, nu, 0.01, &iso) == NULL, "isotropic membrane accepted", 0, 0);
  check(pbng_membrane_orthotropic(E, E, E / (2 * (1 + nu)), nu, nu, 0.01, &ortho) == NULL && !memcmp(&iso, &ortho, sizeof(iso)),
        "isotropic = orthotropic with equal parameters", iso.C[0][1], ortho.C[0][1]);
  const double lambda_ps = E * nu / (1 - nu * nu), mu = E / (2 * (1 + nu));
  check(fabs(iso.C[0][0] - (lambda_ps + 2 * mu)) < 1e-12 * E && fabs(iso.C[0][1] - lambda_ps) < 1e-12 * E && fabs(iso.C[2][2] - mu) < 1e-12 * E,
        "isotropic: C = [[lambda' + 2 mu, lambda'], [lambda', lambda' + 2 mu]], mu", iso.C[0][0], lambda_ps + 2 * mu);
  /* uniaxial stress along weft and warp: E_other chosen so that the other normal stress is zero */
  const double kw = 3000, kp = 1200, ks = 500, nw = 0.4, np = nw * kp / kw; /* reciprocal: kw np = kp nw */
  check(pbng_membrane_orthotropic(kw, kp, ks, nw, np, 1, &ortho) == NULL, "orthotropic accepted", 0, 0);
  for (int axis = 0; axis < 2; ++axis) {
    const int o = 1 - axis;
    const double e = 1e-3, eo = -ortho.C[o][axis] / ortho.C[o][o] * e; /* S_oo = C_oa e + C_oo eo = 0 */
    const double stiffness = (ortho.C[axis][axis] * e + ortho.C[axis][o] * eo) / e, expect = axis == 0 ? kw : kp;
    check(fabs(stiffness - expect) < 1e-10 * expect, axis == 0 ? "orthotropic: uniaxial stiffness along weft = k_weft" : "orthotropic: uniaxial stiffness along warp = k_warp",
          stiffness, expect);
  }
  check(ortho.C[2][2] == ks, "orthotropic: shear modulus", ortho.C[2][2], ks);
  const struct {
    double kw, kp, ks, nw, np, t;
    const char *expect;
  } bad[] = {
    {0, 1, 1, 0.3, 0.3, 1, "k_weft"},           {1, -1, 1, 0.3, 0.3, 1, "k_warp"},       {1, 1, NAN, 0.3, 0.3, 1, "k_shear"},
    {1, 1, 1, 1.0, 0.3, 1, "nu_weft"},          {1, 1, 1, 0.3, -0.1, 1, "nu_warp"},      {1, 1, 1, 0.3, 0.3, 0, "thickness"},
    {1, 100, 1, 0.99, 0.0, 1, "not positive definite"},
  };
  for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); ++k) {
    pbng_membrane_material m = ortho;
    const char *msg = pbng_membrane_orthotropic(bad[k].kw, bad[k].kp, bad[k].ks, bad[k].nw, bad[k].np, bad[k].t, &m);
    char what[160];
    snprintf(what, sizeof(what), "bad orthotropic parameters %zu refused naming '%s' (got '%s'), material unchanged", k, bad[k].expect, msg ? msg : "(null)");
    check(msg && strstr(msg, bad[k].expect) && !memcmp(&m, &ortho, sizeof(m)), what, 0, 0);
  }
  check(pbng_membrane_isotropic(1, 0.5, 1, &iso) != NULL && pbng_membrane_isotropic(-1, 0.3, 1, &iso) != NULL, "isotropic: nu = 0.5 and E < 0 refused", 0, 0);
}

static void check_rest_shapes(void)
{
  uint64_t s = 7;
  pbng_membrane_material m;
  pbng_membrane_isotropic(1000, 0.3, 0.02, &m);
  for (int t = 0; t < 50; ++t) {
    double X[3][3], x[3][3], F[3][2], R[3][3], tr[3], grad[3][3];
    const double weft[3] = {1, 0.2, -0.3};
    pbng_membrane_rest r;
    random_triangle(&s, X);
    check(pbng_membrane_rest_shape(X, weft, &r) == 0, "rest shape of a well-shaped triangle", 0, 0);
    /* F^T F = I at rest and after a rigid motion; zero energy and force */
    random_rotation_matrix(&s, R);
    for (int k = 0; k < 3; ++k) tr[k] = next_random(&s);
    for (int a = 0; a < 3; ++a) rotate(R, X[a], tr, x[a]);
    pbng_membrane_deformation(X, &r, F);
    double C00 = F[0][0] * F[0][0] + F[1][0] * F[1][0] + F[2][0] * F[2][0], C01 = F[0][0] * F[0][1] + F[1][0] * F[1][1] + F[2][0] * F[2][1];
    check(fabs(C00 - 1) < 1e-12 && fabs(C01) < 1e-12, "rest: F^T F = I", C00, 1);
    /* the local x axis is the weft axis projected: F e_x (rest) is the projected weft direction */
    double n[3], a1[3], a2[3];
    for (int k = 0; k < 3; ++k) a1[k] = X[1][k] - X[0][k], a2[k] = X[2][k] - X[0][k];
    n[0] = a1[1] * a2[2] - a1[2] * a2[1], n[1] = a1[2] * a2[0] - a1[0] * a2[2], n[2] = a1[0] * a2[1] - a1[1] * a2[0];
    const double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    double wp[3], wl = 0, wn = (weft[0] * n[0] + weft[1] * n[1] + weft[2] * n[2]) / nn;
    for (int k = 0; k < 3; ++k) wp[k] = weft[k] - wn * n[k] / nn, wl += wp[k] * wp[k];
    wl = sqrt(wl);
    check(fabs(F[0][0] - wp[0] / wl) < 1e-12 && fabs(F[1][0] - wp[1] / wl) < 1e-12 && fabs(F[2][0] - wp[2] / wl) < 1e-12,
          "rest: the local x axis is the weft axis projected on the triangle", F[0][0], wp[0] / wl);
    check(fabs(r.area - 0.5 * nn) < 1e-14, "rest: area", r.area, 0.5 * nn);
    const double energy = pbng_membrane_gradient(&m, &r, x, grad);
    check(fabs(energy) < 1e-12 && max_abs(&grad[0][0], 9) < 1e-9, "rigid motion: zero energy and force", energy, max_abs(&grad[0][0], 9));
    deform(&s, X, 0.3, x);
    pbng_membrane_gradient(&m, &r, x, grad);
    double sum[3] = {0, 0, 0};
    for (int a = 0; a < 3; ++a)
      for (int k = 0; k < 3; ++k) sum[k] += grad[a][k];
    check(max_abs(sum, 3) < 1e-10 * (1 + max_abs(&grad[0][0], 9)), "gradients sum to zero", max_abs(sum, 3), 0);
  }
  const double flat[3][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, weft[3] = {1, 0, 0}, zero[3] = {0, 0, 0}, good[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  pbng_membrane_rest r;
  check(pbng_membrane_rest_shape(flat, weft, &r) == -1 && r.area == 0, "degenerate rest triangle refused", r.area, 0);
  check(pbng_membrane_rest_shape(good, zero, &r) == -1, "zero weft axis refused", 0, 0);
  const double normal_weft[3] = {0, 0, 1};
  check(pbng_membrane_rest_shape(good, normal_weft, &r) == 0 && fabs(r.g[1][0] - 1) < 1e-15, "weft along the normal: the first edge is the x axis", r.g[1][0], 1);
}

/* Central differences of the energy (gradient) and of the gradient (Hessian) at random states. */
static void check_derivatives(void)
{
  uint64_t s = 11;
  pbng_membrane_material mats[2];
  pbng_membrane_isotropic(800, 0.35, 0.5, &mats[0]);
  pbng_membrane_orthotropic(3000, 1000, 400, 0.3, 0.1, 0.2, &mats[1]);
  const double weft[3] = {0.3, 1, 0.1};
  double worst_g = 0, worst_h = 0, worst_sym = 0;
  for (int t = 0; t < 60; ++t) {
    const pbng_membrane_material *m = &mats[t % 2];
    double X[3][3], x[3][3], g[3][3], H[9][9];
    pbng_membrane_rest r;
    random_triangle(&s, X);
    pbng_membrane_rest_shape(X, weft, &r);
    deform(&s, X, t < 20 ? 0.1 : t < 40 ? 0.4 : 0.8, x);
    pbng_membrane_gradient(m, &r, x, g);
    pbng_membrane_hessian(m, &r, x, H);
    const double h = 1e-6;
    double gscale = max_abs(&g[0][0], 9) + 1e-3, hscale = max_abs(&H[0][0], 81) + 1e-3;
    for (int a = 0; a < 3; ++a)
      for (int i = 0; i < 3; ++i) {
        double xp[3][3], xm[3][3], gp[3][3], gm[3][3];
        memcpy(xp, x, sizeof(xp)), memcpy(xm, x, sizeof(xm));
        xp[a][i] += h, xm[a][i] -= h;
        const double fd = (pbng_membrane_energy(m, &r, xp) - pbng_membrane_energy(m, &r, xm)) / (2 * h);
        worst_g = fmax(worst_g, fabs(fd - g[a][i]) / gscale);
        pbng_membrane_gradient(m, &r, xp, gp), pbng_membrane_gradient(m, &r, xm, gm);
        for (int b = 0; b < 3; ++b)
          for (int j = 0; j < 3; ++j) worst_h = fmax(worst_h, fabs((gp[b][j] - gm[b][j]) / (2 * h) - H[3 * b + j][3 * a + i]) / hscale);
      }
    for (int p = 0; p < 9; ++p)
      for (int q = 0; q < 9; ++q) worst_sym = fmax(worst_sym, fabs(H[p][q] - H[q][p]) / hscale);
  }
  check(worst_g < 1e-7, "membrane gradient = central differences of the energy (relative)", worst_g, 1e-7);
  check(worst_h < 1e-7, "membrane Hessian = central differences of the gradient (relative)", worst_h, 1e-7);
  check(worst_sym < 1e-14, "membrane Hessian symmetric", worst_sym, 1e-14);
}

/* PBNG's block against the exact diagonal block. */
static void check_blocks(void)
{
  uint64_t s = 23;
  pbng_membrane_material m;
  pbng_membrane_orthotropic(2000, 1500, 600, 0.25, 0.2, 0.1, &m);
  const double weft[3] = {1, 0, 0};
  double worst_psd = 0, worst_equal = 0, worst_above = 0;
  int compressed = 0, stretched = 0;
  for (int t = 0; t < 400; ++t) {
    double X[3][3], x[3][3], H[9][9], F[3][2], S[2][2];
    pbng_membrane_rest r;
    random_triangle(&s, X);
    pbng_membrane_rest_shape(X, weft, &r);
    deform(&s, X, 0.5, x);
    pbng_membrane_hessian(&m, &r, x, H);
    pbng_membrane_deformation(x, &r, F);
    pbng_membrane_stress(&m, F, S);
    const double det = S[0][0] * S[1][1] - S[0][1] * S[0][1], tr = S[0][0] + S[1][1];
    const int psd = det >= 0 && tr >= 0;
    psd ? ++stretched : ++compressed;
    const double scale = max_abs(&H[0][0], 81);
    for (int a = 0; a < 3; ++a) {
      double B[9], D[9];
      pbng_membrane_node_block(&m, &r, x, a, B);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) D[3 * i + j] = B[3 * i + j] - H[3 * a + i][3 * a + j];
      worst_psd = fmin(worst_psd, min_eigenvalue3(B) / scale);
      if (psd) worst_equal = fmax(worst_equal, max_abs(D, 9) / scale);
      else worst_above = fmin(worst_above, min_eigenvalue3(D) / scale);
    }
  }
  check(compressed > 50 && stretched > 50, "blocks: both stretched and compressed states sampled", compressed, stretched);
  check(worst_psd > -1e-13, "PBNG block positive semi-definite in every state", worst_psd, 0);
  check(worst_equal < 1e-13, "PBNG block = exact diagonal block while S is PSD", worst_equal, 0);
  check(worst_above > -1e-13, "PBNG block - exact diagonal block PSD under compression", worst_above, 0);
}

/* A 4 x 4 grid of squares split into triangles, in a random plane, under a uniform in-plane stretch:
 * every triangle has the same S, and the forces on each interior node cancel. */
static void check_patch(void)
{
  uint64_t s = 31;
  pbng_membrane_material m;
  pbng_membrane_orthotropic(2000, 900, 300, 0.3, 0.135, 0.1, &m);
  double R[3][3], t[3] = {0.1, 0.2, 0.3}, Xn[25][3], xn[25][3], f[25][3];
  random_rotation_matrix(&s, R);
  const double weft2[3] = {1, 0.4, 0}; /* the weft axis in the sheet's plane, before rotating */
  double weft[3];
  const double origin[3] = {0, 0, 0};
  rotate(R, weft2, origin, weft);
  const double A[2][2] = {{1.3, 0.2}, {-0.1, 0.8}}; /* in-plane affine map */
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 5; ++i) {
      const double p[3] = {0.25 * i + 0.03 * (j % 2), 0.25 * j, 0}, q[3] = {A[0][0] * p[0] + A[0][1] * p[1], A[1][0] * p[0] + A[1][1] * p[1], 0};
      rotate(R, p, t, Xn[5 * j + i]), rotate(R, q, t, xn[5 * j + i]);
    }
  memset(f, 0, sizeof(f));
  double S0[2][2] = {{0}}, worst_s = 0;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) {
      const int c[2][3] = {{5 * j + i, 5 * j + i + 1, 5 * (j + 1) + i + 1}, {5 * j + i, 5 * (j + 1) + i + 1, 5 * (j + 1) + i}};
      for (int k = 0; k < 2; ++k) {
        double X[3][3], x[3][3], g[3][3], F[3][2], S[2][2];
        pbng_membrane_rest r;
        for (int a = 0; a < 3; ++a) memcpy(X[a], Xn[c[k][a]], sizeof(X[a])), memcpy(x[a], xn[c[k][a]], sizeof(x[a]));
        pbng_membrane_rest_shape(X, weft, &r);
        pbng_membrane_deformation(x, &r, F);
        pbng_membrane_stress(&m, F, S);
        if (i == 0 && j == 0 && k == 0) memcpy(S0, S, sizeof(S));
        for (int p = 0; p < 2; ++p)
          for (int q = 0; q < 2; ++q) worst_s = fmax(worst_s, fabs(S[p][q] - S0[p][q]));
        pbng_membrane_gradient(&m, &r, x, g);
        for (int a = 0; a < 3; ++a)
          for (int d = 0; d < 3; ++d) f[c[k][a]][d] += g[a][d];
      }
    }
  double worst_f = 0, scale = max_abs(&S0[0][0], 4);
  for (int j = 1; j < 4; ++j)
    for (int i = 1; i < 4; ++i) worst_f = fmax(worst_f, max_abs(f[5 * j + i], 3));
  check(scale > 1 && worst_s < 1e-10 * scale, "patch test: the same stress S in every triangle", worst_s, 0);
  check(worst_f < 1e-10 * scale, "patch test: no net force on the interior nodes", worst_f, 0);
  /* the sheet and its weft axis turned together: the same energy */
  double R2[3][3], weft_b[3], e1 = 0, e2 = 0;
  random_rotation_matrix(&s, R2);
  rotate(R2, weft, origin, weft_b);
  for (int k = 0; k < 2; ++k) {
    double X[3][3], x[3][3], Xb[3][3], xb[3][3];
    const int c[3] = {k, 6 + k, 5 + k};
    pbng_membrane_rest r, rb;
    for (int a = 0; a < 3; ++a) {
      memcpy(X[a], Xn[c[a]], sizeof(X[a])), memcpy(x[a], xn[c[a]], sizeof(x[a]));
      rotate(R2, X[a], origin, Xb[a]), rotate(R2, x[a], t, xb[a]);
    }
    pbng_membrane_rest_shape(X, weft, &r), pbng_membrane_rest_shape(Xb, weft_b, &rb);
    e1 += pbng_membrane_energy(&m, &r, x), e2 += pbng_membrane_energy(&m, &rb, xb);
  }
  check(e1 > 0 && fabs(e1 - e2) < 1e-12 * e1, "energy invariant under turning the sheet with its weft axis", e1, e2);
}

static void check_bending(void)
{
  uint64_t s = 41;
  const double k_b = 0.7;
  double worst_flat = 0, worst_rigid = 0, worst_hinge = 0, worst_g = 0;
  for (int t = 0; t < 100; ++t) {
    double R[3][3], tr[3], X[4][3], x[4][3], g[4][3];
    const double P[4][3] = {{0, 0, 0}, {1 + 0.3 * next_random(&s), 0, 0}, {0.2 + 0.6 * next_random(&s), 0.5 + 0.5 * next_random(&s), 0},
                            {0.1 + 0.8 * next_random(&s), -0.4 - 0.6 * next_random(&s), 0}};
    random_rotation_matrix(&s, R);
    for (int k = 0; k < 3; ++k) tr[k] = next_random(&s);
    for (int a = 0; a < 4; ++a) rotate(R, P[a], tr, X[a]);
    pbng_bending_stencil st;
    check(pbng_bending_rest(X, &st) == 0, "bending: a well-shaped stencil", 0, 0);
    double ksum = st.K[0] + st.K[1] + st.K[2] + st.K[3], v[3] = {0, 0, 0};
    for (int a = 0; a < 4; ++a)
      for (int k = 0; k < 3; ++k) v[k] += st.K[a] * X[a][k];
    worst_flat = fmax(worst_flat, fmax(fabs(ksum), max_abs(v, 3)));
    /* rigid motion of the flat rest shape */
    double R2[3][3], t2[3] = {1, -2, 3};
    random_rotation_matrix(&s, R2);
    for (int a = 0; a < 4; ++a) rotate(R2, X[a], t2, x[a]);
    worst_rigid = fmax(worst_rigid, pbng_bending_energy(&st, k_b, x));
    /* fold triangle (x0, x1, x3) about the edge by theta: E = k_b/2 * scale * (2 |e| sin(theta/2))^2 */
    const double theta = 0.05 + 2.5 * next_random(&s), L = P[1][0];
    double Pf[4][3];
    memcpy(Pf, P, sizeof(Pf));
    Pf[3][1] = P[3][1] * cos(theta), Pf[3][2] = P[3][1] * sin(theta); /* about the x axis (the edge) */
    for (int a = 0; a < 4; ++a) rotate(R, Pf[a], tr, x[a]);
    const double expect = 0.5 * k_b * st.scale * pow(2 * L * sin(theta / 2), 2), got = pbng_bending_energy(&st, k_b, x);
    worst_hinge = fmax(worst_hinge, fabs(got - expect) / expect);
    /* gradient by central differences at a perturbed state */
    for (int a = 0; a < 4; ++a)
      for (int k = 0; k < 3; ++k) x[a][k] += 0.1 * (next_random(&s) - 0.5);
    pbng_bending_gradient(&st, k_b, x, g);
    const double h = 1e-6, scale = max_abs(&g[0][0], 12) + 1e-6;
    for (int a = 0; a < 4; ++a)
      for (int k = 0; k < 3; ++k) {
        double xp[4][3], xm[4][3];
        memcpy(xp, x, sizeof(xp)), memcpy(xm, x, sizeof(xm));
        xp[a][k] += h, xm[a][k] -= h;
        worst_g = fmax(worst_g, fabs((pbng_bending_energy(&st, k_b, xp) - pbng_bending_energy(&st, k_b, xm)) / (2 * h) - g[a][k]) / scale);
      }
    /* Q symmetric, PSD (rank one): Q_ii >= 0 */
    for (int i = 0; i < 4; ++i) check(pbng_bending_q(&st, i, i) >= 0, "bending: Q_ii >= 0", pbng_bending_q(&st, i, i), 0);
  }
  check(worst_flat < 1e-12, "bending: K sums to zero and annihilates the flat rest stencil", worst_flat, 0);
  check(worst_rigid < 1e-20, "bending: zero energy for rigid motions of a flat rest shape", worst_rigid, 0);
  check(worst_hinge < 1e-10, "bending: a rigidly folded hinge, E = k_b/2 scale (2 |e| sin(theta/2))^2", worst_hinge, 0);
  check(worst_g < 1e-8, "bending gradient = central differences of the energy (relative)", worst_g, 0);
  const double degenerate[4][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0.5, -1, 0}};
  pbng_bending_stencil st;
  check(pbng_bending_rest(degenerate, &st) == -1 && st.scale == 0, "bending: a degenerate triangle refused", st.scale, 0);
}

int main(void)
{
  check_materials();
  check_rest_shapes();
  check_derivatives();
  check_blocks();
  check_patch();
  check_bending();
  printf("test_membrane: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
