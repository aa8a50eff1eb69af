/* GPBD's kernels (src/core/gpbd_strain.c, gpbd_local.c, and the seed's energies tests/gpbd_seed_energy.c; docs/gpbd.md):
 *  - tetrahedron strain: s = 0 at rest and under rigid motions, the Green strain entries (not doubled), the
 *    Jacobian by central differences (well-shaped and strongly sheared states);
 *  - tetrahedron energies (log-barrier neo-Hookean Eq. 20, stable neo-Hookean Eq. 21): zero energy and
 *    force at rest, linearised moduli mu, lambda, gradient and Hessian by central differences, the barrier
 *    (+inf for det F <= 0), bad parameters refused;
 *  - cloth strain: s = 0 at rest (flat and curved rest patches) and under rigid motions, a free edge
 *    contributes no bending, II of a patch bent on a cylinder of radius R is 1/R along the bend and 0
 *    across it, the 6 x 18 Jacobian (II rows included) by central differences;
 *  - cloth energy: dU/ds and d^2U/ds^2 by central differences, dU/dx exactly S^T dU/ds by central
 *    differences, d^2U/dx^2: exact for in-plane states, and in bent states equal to the central
 *    differences minus exactly the bending rows' curvature sum_k dU/ds_k d^2 s_k/dx^2 (Gauss-Newton);
 *  - Hessian modification: QR iterations keep the spectrum, the Gershgorin bound is below lambda_min, the
 *    seed's shift is H + tau I (nothing else) with lambda_min >= eps and tau >= eps - lambda_min(H); exact
 *    clamping gives eigenvalues max(lambda, eps) with H's eigenvectors (commutes with H);
 *  - local solve (Eq. 19) for both tetrahedron models and cloth, both fixes: the objective decreases, the
 *    exit gradient (recomputed here) is below tolerance, the QR and eigen fixes reach the same minimiser;
 *    the log barrier never returns det F <= 0 when pulled towards inversion;
 *  - inversion kernel: det F' > 0, centroid kept, singular values |sigma|, flat elements lifted by s_min;
 *  - k = 1 (App. A): one Newton step of the local solve with U = C^2 / (2 alpha) reproduces pbng's XPBD
 *    projection (methods/pbd/constraints.c, both element constraints in turn) and Eq. 11 to 1e-12. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/dense.h"
#include "core/element.h"
#include "gpbd_seed_energy.h"
#include "core/gpbd_local.h"
#include "core/gpbd_strain.h"
#include "core/inversion.h"
#include "core/mat3.h"
#include "core/material.h"
#include "core/vec3.h"
#include "methods/pbd/constraints.h"
#include "cloth_stencil.h"
#include "test_check.h"


/* x = A X + noise, A = I + strength * random, for n points. */
static void deform(uint64_t *s, int n, const double (*X)[3], double strength, double (*x)[3])
{
  double A[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) A[i][j] = (i == j) + strength * (2 * next_random(s) - 1);
  for (int a = 0; a < n; ++a)
    for (int i = 0; i < 3; ++i) x[a][i] = A[i][0] * X[a][0] + A[i][1] * X[a][1] + A[i][2] * X[a][2] + 0.1 * strength * (next_random(s) - 0.5);
}

static double max_abs(const double *v, int n)
{
  double m = 0;
  for (int i = 0; i < n; ++i) m = fmax(m, fabs(v[i]));
  return m;
}

/* Eigenvalues (ascending) and eigenvectors of a symmetric k x k matrix. */
static void eigen(int k, const double *H, double *w, double *V)
{
  double A[PBNG_GPBD_MAX_DOF * PBNG_GPBD_MAX_DOF];
  memcpy(A, H, sizeof(double) * k * k);
  dense_symmetric_eigen(k, A, w, V);
  for (int i = 0; i < k; ++i) /* selection sort, columns of V along */
    for (int j = i + 1; j < k; ++j)
      if (w[j] < w[i]) {
        double t = w[i];
        w[i] = w[j], w[j] = t;
        for (int r = 0; r < k; ++r) t = V[k * r + i], V[k * r + i] = V[k * r + j], V[k * r + j] = t;
      }
}

static double min_eigenvalue(int k, const double *H)
{
  double w[PBNG_GPBD_MAX_DOF], V[PBNG_GPBD_MAX_DOF * PBNG_GPBD_MAX_DOF];
  eigen(k, H, w, V);
  return w[0];
}

/* ---- tetrahedra ---- */

/* A random well-shaped rest tetrahedron (positively oriented). */
static void random_tet(uint64_t *s, double X[4][3])
{
  const double base[4][3] = {{0, 0, 0}, {1, 0, 0}, {0.3, 0.9, 0}, {0.35, 0.3, 0.85}};
  double R[3][3], t[3], P[4][3];
  random_rotation_matrix(s, R);
  for (int k = 0; k < 3; ++k) t[k] = 2 * next_random(s) - 1;
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 3; ++k) P[a][k] = base[a][k] + 0.15 * (next_random(s) - 0.5);
  rigid(4, R, t, (const double(*)[3])P, X);
}

static double tet_det(const pbng_gpbd_tet_rest *r, const double x[4][3])
{
  double F[9];
  pbng_gpbd_tet_deformation(r, x, F);
  return mat3_det(F);
}

static void check_tet_strain(void)
{
  uint64_t s = 3;
  double worst_rest = 0, worst_green = 0, worst_S = 0;
  for (int t = 0; t < 40; ++t) {
    double X[4][3], x[4][3], R[3][3], tr[3] = {0.3, -1, 2}, e[6], S[6][12], F[9], C[9];
    pbng_gpbd_tet_rest r;
    random_tet(&s, X);
    check(pbng_gpbd_tet_rest_shape(X, &r) == 0 && r.volume > 0, "tet rest shape accepted", 0, 0);
    random_rotation_matrix(&s, R);
    rigid(4, R, tr, (const double(*)[3])X, x);
    pbng_gpbd_tet_strain(&r, x, e, NULL);
    worst_rest = fmax(worst_rest, max_abs(e, 6));
    deform(&s, 4, (const double(*)[3])X, t < 20 ? 0.2 : 0.9, x); /* well-shaped, then strongly sheared */
    pbng_gpbd_tet_strain(&r, x, e, S);
    pbng_gpbd_tet_deformation(&r, x, F);
    mat3_tmul(F, F, C);
    const double expect[6] = {0.5 * (C[0] - 1), 0.5 * (C[4] - 1), 0.5 * (C[8] - 1), 0.5 * C[5], 0.5 * C[2], 0.5 * C[1]};
    for (int k = 0; k < 6; ++k) worst_green = fmax(worst_green, fabs(e[k] - expect[k]));
    const double h = 1e-6, scale = max_abs(&S[0][0], 72);
    for (int v = 0; v < 12; ++v) {
      double xp[4][3], xm[4][3], ep[6], em[6];
      memcpy(xp, x, sizeof(xp)), memcpy(xm, x, sizeof(xm));
      xp[v / 3][v % 3] += h, xm[v / 3][v % 3] -= h;
      pbng_gpbd_tet_strain(&r, xp, ep, NULL), pbng_gpbd_tet_strain(&r, xm, em, NULL);
      for (int k = 0; k < 6; ++k) worst_S = fmax(worst_S, fabs((ep[k] - em[k]) / (2 * h) - S[k][v]) / scale);
    }
  }
  check(worst_rest < 1e-14, "tet strain zero under rigid motions", worst_rest, 0);
  check(worst_green < 1e-14, "tet strain = (E_xx, E_yy, E_zz, E_yz, E_xz, E_xy), off-diagonals not doubled", worst_green, 0);
  check(worst_S < 1e-8, "tet strain Jacobian = central differences (relative)", worst_S, 0);
  const double flat[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}, mirrored[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, -1}};
  pbng_gpbd_tet_rest r;
  check(pbng_gpbd_tet_rest_shape(flat, &r) == -1 && pbng_gpbd_tet_rest_shape(mirrored, &r) == -1 && r.volume == 0,
        "tet rest shape: flat and negatively oriented refused", r.volume, 0);
}

static void check_tet_energies(void)
{
  uint64_t s = 5;
  const char *names[2] = {"log-barrier neo-Hookean (Eq. 20)", "stable neo-Hookean (Eq. 21)"};
  for (int model = 0; model < 2; ++model) {
    pbng_gpbd_tet_material m;
    check(pbng_gpbd_tet_material_init(model, 1e5, 0.45, &m) == NULL, "tet material accepted", 0, 0);
    const double mu = 1e5 / (2 * 1.45), lambda = 1e5 * 0.45 / (1.45 * 0.1), model_lambda = model == 0 ? lambda : lambda + mu;
    check(fabs(m.mu - mu) < 1e-9 * mu && fabs(m.lambda - model_lambda) < 1e-9 * lambda,
          "tet material: mu, lambda from E, nu (stable NH: lambda + mu, rest-consistent)", m.lambda, model_lambda);
    /* rest: Psi = 0, P = 0; linearised: dP/dF at I = mu (I + transpose swap) + lambda I (x) I with the Lame lambda */
    double F[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, P[9], D[81], worst_lin = 0;
    const double psi = pbng_gpbd_tet_density(&m, F, P, D);
    for (int i = 0; i < 3; ++i)
      for (int p = 0; p < 3; ++p)
        for (int j = 0; j < 3; ++j)
          for (int q = 0; q < 3; ++q) {
            const double lin = mu * ((i == j && p == q) + (i == q && p == j)) + lambda * (i == p && j == q);
            worst_lin = fmax(worst_lin, fabs(D[9 * (3 * i + p) + 3 * j + q] - lin) / lambda);
          }
    {
      char what[160];
      snprintf(what, sizeof(what), "%s: zero energy and stress at rest", names[model]);
      check(fabs(psi) < 1e-9 && max_abs(P, 9) < 1e-9, what, psi, max_abs(P, 9));
    }
    check(worst_lin < 1e-12, "tet energy: dP/dF at rest = linear elasticity with mu, lambda", worst_lin, 0);
    double worst_g = 0, worst_h = 0, worst_sym = 0;
    for (int t = 0; t < 40; ++t) {
      double X[4][3], x[4][3], g[12], H[144];
      pbng_gpbd_tet_rest r;
      random_tet(&s, X);
      pbng_gpbd_tet_rest_shape(X, &r);
      do deform(&s, 4, (const double(*)[3])X, t < 20 ? 0.2 : 0.6, x);
      while (tet_det(&r, x) < 0.2);
      const double U = pbng_gpbd_tet_energy(&m, &r, x, g, H);
      check(isfinite(U), "tet energy finite for det F > 0", U, 0);
      const double h = 1e-6 * cbrt(r.volume), gscale = max_abs(g, 12), hscale = max_abs(H, 144);
      for (int v = 0; v < 12; ++v) {
        double xp[4][3], xm[4][3], gp[12], gm[12];
        memcpy(xp, x, sizeof(xp)), memcpy(xm, x, sizeof(xm));
        xp[v / 3][v % 3] += h, xm[v / 3][v % 3] -= h;
        const double fd = (pbng_gpbd_tet_energy(&m, &r, xp, gp, NULL) - pbng_gpbd_tet_energy(&m, &r, xm, gm, NULL)) / (2 * h);
        worst_g = fmax(worst_g, fabs(fd - g[v]) / gscale);
        for (int u = 0; u < 12; ++u) worst_h = fmax(worst_h, fabs((gp[u] - gm[u]) / (2 * h) - H[12 * u + v]) / hscale);
      }
      for (int u = 0; u < 12; ++u)
        for (int v = 0; v < 12; ++v) worst_sym = fmax(worst_sym, fabs(H[12 * u + v] - H[12 * v + u]) / hscale);
    }
    char what[160];
    snprintf(what, sizeof(what), "%s: gradient = central differences (relative)", names[model]);
    check(worst_g < 1e-7, what, worst_g, 0);
    snprintf(what, sizeof(what), "%s: Hessian = central differences of the gradient (relative)", names[model]);
    check(worst_h < 1e-7, what, worst_h, 0);
    check(worst_sym < 1e-13, "tet Hessian symmetric", worst_sym, 0);
  }
  /* Eq. 21 with lambda + mu is pbng's neohookean material (core/material.h) up to a constant */
  {
    pbng_gpbd_tet_material g;
    pbng_material pm;
    pbng_gpbd_tet_material_init(PBNG_GPBD_STABLE_NEOHOOKEAN, 3e4, 0.4, &g);
    pbng_material_init(&pm, PBNG_MATERIAL_NEOHOOKEAN, 3e4, 0.4);
    double spread = 0, c0 = 0, scale = 0;
    for (int t = 0; t < 20; ++t) {
      double F[9];
      for (int k = 0; k < 9; ++k) F[k] = (k % 4 == 0) + 0.6 * (next_random(&s) - 0.5);
      const double diff = pbng_gpbd_tet_density(&g, F, NULL, NULL) - pbng_energy_density(&pm, F);
      if (t == 0) c0 = diff;
      spread = fmax(spread, fabs(diff - c0)), scale = fmax(scale, fabs(pbng_energy_density(&pm, F)));
    }
    check(spread < 1e-12 * scale, "stable NH (Eq. 21, lambda + mu) = pbng's neohookean material + a constant", spread, 0);
  }
  /* the barrier */
  pbng_gpbd_tet_material nh, snh;
  pbng_gpbd_tet_material_init(PBNG_GPBD_NEOHOOKEAN_LOG, 1e5, 0.3, &nh);
  pbng_gpbd_tet_material_init(PBNG_GPBD_STABLE_NEOHOOKEAN, 1e5, 0.3, &snh);
  const double Finv[9] = {1, 0, 0, 0, 1, 0, 0, 0, -0.5}, Fflat[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
  check(isinf(pbng_gpbd_tet_density(&nh, Finv, NULL, NULL)) && isinf(pbng_gpbd_tet_density(&nh, Fflat, NULL, NULL)),
        "log-barrier neo-Hookean: +inf for det F <= 0", 0, 0);
  check(isfinite(pbng_gpbd_tet_density(&snh, Finv, NULL, NULL)) && pbng_gpbd_tet_density(&snh, Finv, NULL, NULL) > 0,
        "stable neo-Hookean: finite and positive when inverted", pbng_gpbd_tet_density(&snh, Finv, NULL, NULL), 0);
  check(pbng_gpbd_tet_material_init(0, -1, 0.3, &nh) && pbng_gpbd_tet_material_init(0, 1, 0.5, &nh) && pbng_gpbd_tet_material_init(7, 1, 0.3, &nh),
        "tet material: E <= 0, nu = 0.5, an unknown model refused", 0, 0);
}

/* ---- cloth ---- */


static const int all_neighbours[3] = {1, 1, 1};
static const double weft_axis[3] = {0.3, 1, 0.1};

/* A bent state: an affine map and noise on every vertex, out of plane too. */
static void deform_stencil(uint64_t *s, const double X[6][3], double strength, double x[6][3]) { deform(s, 6, (const double(*)[3])X, strength, x); }

static void check_cloth_strain(void)
{
  uint64_t s = 17;
  double worst_rest = 0, worst_rigid = 0, worst_S = 0;
  for (int t = 0; t < 40; ++t) {
    double X[6][3], x[6][3], R[3][3], tr[3] = {1, 2, -3}, st[6], S[6][18];
    pbng_gpbd_cloth_rest r;
    random_stencil(&s, t % 2 ? 0.3 : 0.0, X); /* flat and curved rest patches */
    check(pbng_gpbd_cloth_rest_shape(X, all_neighbours, weft_axis, &r) == 0, "cloth rest shape accepted", 0, 0);
    if (t % 2 == 0) worst_rest = fmax(worst_rest, max_abs(r.II0, 3));
    pbng_gpbd_cloth_strain(&r, X, st, NULL);
    worst_rest = fmax(worst_rest, max_abs(st, 6));
    random_rotation_matrix(&s, R);
    rigid(6, R, tr, (const double(*)[3])X, x);
    pbng_gpbd_cloth_strain(&r, x, st, NULL);
    worst_rigid = fmax(worst_rigid, max_abs(st, 6));
    deform_stencil(&s, X, t < 20 ? 0.15 : 0.5, x);
    pbng_gpbd_cloth_strain(&r, x, st, S);
    const double h = 1e-6;
    double scale[6];
    for (int k = 0; k < 6; ++k) scale[k] = max_abs(S[k], 18) + 1e-12;
    for (int v = 0; v < 18; ++v) {
      double xp[6][3], xm[6][3], sp[6], sm[6];
      memcpy(xp, x, sizeof(xp)), memcpy(xm, x, sizeof(xm));
      xp[v / 3][v % 3] += h, xm[v / 3][v % 3] -= h;
      pbng_gpbd_cloth_strain(&r, xp, sp, NULL), pbng_gpbd_cloth_strain(&r, xm, sm, NULL);
      for (int k = 0; k < 6; ++k) worst_S = fmax(worst_S, fabs((sp[k] - sm[k]) / (2 * h) - S[k][v]) / scale[k]);
    }
  }
  check(worst_rest < 1e-12, "cloth strain zero at rest (II0 = 0 for a flat rest patch)", worst_rest, 0);
  check(worst_rigid < 1e-12, "cloth strain (bending rows included) zero under rigid motions of flat and curved rest patches", worst_rigid, 0);
  check(worst_S < 1e-7, "cloth strain Jacobian (I and II rows) = central differences (relative per row)", worst_S, 0);

  /* a right isosceles grid triangle of leg h with its three grid neighbours, wrapped on a cylinder of
   * radius R about y (then about x): II = 1/R along the bend (up to O(h^2)), 0 otherwise */
  const double hl = 0.05, Rc = 1.0;
  const double P[6][3] = {{0, 0, 0}, {hl, 0, 0}, {0, hl, 0}, {hl, hl, 0}, {-hl, hl, 0}, {hl, -hl, 0}};
  const double weft[3] = {1, 0, 0};
  pbng_gpbd_cloth_rest r;
  pbng_gpbd_cloth_rest_shape(P, all_neighbours, weft, &r);
  for (int axis = 0; axis < 2; ++axis) {
    double x[6][3], I[3], II[3];
    for (int a = 0; a < 6; ++a) {
      const double u = P[a][axis], v = P[a][1 - axis];
      x[a][axis] = Rc * sin(u / Rc), x[a][1 - axis] = v, x[a][2] = Rc * (1 - cos(u / Rc));
    }
    pbng_gpbd_cloth_fundamental_forms(&r, x, I, II);
    const double along = axis == 0 ? II[0] : II[2], across = axis == 0 ? II[2] : II[0];
    check(fabs(fabs(along) - 1 / Rc) < 1e-2 / Rc && fabs(across) < 1e-12 && fabs(II[1]) < 1e-12,
          axis == 0 ? "cloth II on a cylinder about y: II_xx = 1/R, II_xy = II_yy = 0" : "cloth II on a cylinder about x: II_yy = 1/R, II_xx = II_xy = 0",
          along, 1 / Rc);
  }
  /* a free edge contributes no bending: moving the vertex across a missing neighbour changes nothing */
  {
    double X[6][3], x[6][3], s0[6], s1[6], S[6][18];
    const int nb[3] = {1, 0, 1};
    random_stencil(&s, 0.0, X);
    pbng_gpbd_cloth_rest_shape(X, nb, weft_axis, &r);
    deform_stencil(&s, X, 0.3, x);
    pbng_gpbd_cloth_strain(&r, x, s0, S);
    x[4][0] += 0.7, x[4][2] -= 0.4;
    pbng_gpbd_cloth_strain(&r, x, s1, NULL);
    double col = 0;
    for (int k = 0; k < 6; ++k)
      for (int j = 0; j < 3; ++j) col = fmax(col, fabs(S[k][12 + j]));
    check(!memcmp(s0, s1, sizeof(s0)) && col == 0, "cloth: a free edge's (missing) neighbour has no influence", col, 0);
  }
}

static void check_cloth_energy(void)
{
  uint64_t s = 23;
  pbng_gpbd_cloth_material m;
  check(pbng_gpbd_cloth_material_init(500, 80, 20, 2e-3, &m) == NULL, "cloth material accepted", 0, 0);
  check(pbng_gpbd_cloth_material_init(0, 1, 0, 0, &m) && pbng_gpbd_cloth_material_init(1, 1, -1, 0, &m) && pbng_gpbd_cloth_material_init(1, 1, 0, NAN, &m),
        "cloth material: bad parameters refused", 0, 0);
  pbng_gpbd_cloth_material_init(500, 80, 20, 2e-3, &m);
  double worst_ds = 0, worst_ds2 = 0, worst_g = 0, worst_h_plane = 0, worst_h_bent = 0, worst_sym = 0;
  for (int t = 0; t < 30; ++t) {
    double X[6][3], x[6][3], st[6], dU[6], d2U[36], g[18], H[324];
    pbng_gpbd_cloth_rest r;
    random_stencil(&s, t % 3 == 2 ? 0.3 : 0.0, X);
    pbng_gpbd_cloth_rest_shape(X, all_neighbours, weft_axis, &r);
    /* dU^/ds, d^2U^/ds^2 at a random strain */
    for (int k = 0; k < 6; ++k) st[k] = 0.4 * (next_random(&s) - 0.5);
    pbng_gpbd_cloth_energy_strain(&m, r.area, r.l2, st, dU, d2U);
    const double hs = 1e-6;
    for (int k = 0; k < 6; ++k) {
      double sp[6], sm[6], dp[6], dm[6];
      memcpy(sp, st, sizeof(sp)), memcpy(sm, st, sizeof(sm));
      sp[k] += hs, sm[k] -= hs;
      const double fd = (pbng_gpbd_cloth_energy_strain(&m, r.area, r.l2, sp, dp, NULL) - pbng_gpbd_cloth_energy_strain(&m, r.area, r.l2, sm, dm, NULL)) / (2 * hs);
      worst_ds = fmax(worst_ds, fabs(fd - dU[k]) / (max_abs(dU, 6) + 1e-12));
      for (int l = 0; l < 6; ++l) worst_ds2 = fmax(worst_ds2, fabs((dp[l] - dm[l]) / (2 * hs) - d2U[6 * l + k]) / max_abs(d2U, 36));
    }
    /* in x: an in-plane state of a flat rest patch (II = II0 = 0) and bent states */
    const int in_plane = t % 3 == 0;
    if (in_plane) {
      double A[2][2];
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) A[i][j] = (i == j) + 0.3 * (2 * next_random(&s) - 1);
      /* deform in the patch's own plane: coordinates along two in-plane axes of the rest triangle */
      double e1[3], e2[3], n[3], c[3] = {0};
      for (int k = 0; k < 3; ++k) e1[k] = X[1][k] - X[0][k], e2[k] = X[2][k] - X[0][k];
      vec3_cross(e1, e2, n);
      const double l1 = vec3_norm(e1), ln = vec3_norm(n);
      for (int k = 0; k < 3; ++k) e1[k] /= l1, n[k] /= ln;
      vec3_cross(n, e1, e2);
      for (int a = 0; a < 6; ++a) {
        double d[3], u, v;
        vec3_sub(X[a], X[0], d);
        u = vec3_dot(d, e1), v = vec3_dot(d, e2);
        const double uu = A[0][0] * u + A[0][1] * v, vv = A[1][0] * u + A[1][1] * v;
        for (int k = 0; k < 3; ++k) x[a][k] = X[0][k] + c[k] + uu * e1[k] + vv * e2[k];
      }
    } else
      deform_stencil(&s, X, 0.3, x);
    pbng_gpbd_cloth_energy(&m, &r, x, g, H);
    double S[6][18], sx[6];
    pbng_gpbd_cloth_strain(&r, x, sx, S);
    pbng_gpbd_cloth_energy_strain(&m, r.area, r.l2, sx, dU, NULL);
    const double h = 1e-6, gscale = max_abs(g, 18) + 1e-12, hscale = max_abs(H, 324);
    for (int v = 0; v < 18; ++v) {
      double xp[6][3], xm[6][3], gp[18], gm[18], sp[6], sm[6], Sp[6][18], Sm[6][18];
      memcpy(xp, x, sizeof(xp)), memcpy(xm, x, sizeof(xm));
      xp[v / 3][v % 3] += h, xm[v / 3][v % 3] -= h;
      const double fd = (pbng_gpbd_cloth_energy(&m, &r, xp, gp, NULL) - pbng_gpbd_cloth_energy(&m, &r, xm, gm, NULL)) / (2 * h);
      worst_g = fmax(worst_g, fabs(fd - g[v]) / gscale);
      pbng_gpbd_cloth_strain(&r, xp, sp, Sp), pbng_gpbd_cloth_strain(&r, xm, sm, Sm);
      for (int u = 0; u < 18; ++u) {
        double fdh = (gp[u] - gm[u]) / (2 * h), bend = 0; /* the dropped curvature of the II rows, by differences of S */
        for (int k = 3; k < 6; ++k) bend += dU[k] * (Sp[k][u] - Sm[k][u]) / (2 * h);
        if (in_plane) worst_h_plane = fmax(worst_h_plane, fabs(fdh - H[18 * u + v]) / hscale);
        else worst_h_bent = fmax(worst_h_bent, fabs(fdh - bend - H[18 * u + v]) / hscale);
      }
    }
    for (int u = 0; u < 18; ++u)
      for (int v = 0; v < 18; ++v) worst_sym = fmax(worst_sym, fabs(H[18 * u + v] - H[18 * v + u]) / hscale);
  }
  check(worst_ds < 1e-8, "cloth dU/ds = central differences (relative)", worst_ds, 0);
  check(worst_ds2 < 1e-8, "cloth d2U/ds2 = central differences of dU/ds (relative)", worst_ds2, 0);
  check(worst_g < 1e-7, "cloth dU/dx = S^T dU/ds = central differences (relative)", worst_g, 0);
  check(worst_h_plane < 1e-7, "cloth d2U/dx2 exact in in-plane states (relative)", worst_h_plane, 0);
  check(worst_h_bent < 1e-6, "cloth d2U/dx2 = central differences minus only the II rows' curvature (relative)", worst_h_bent, 0);
  check(worst_sym < 1e-13, "cloth Hessian symmetric", worst_sym, 0);
}

/* ---- Hessian modification (Eq. 23) ---- */

static void check_hessian_fix(void)
{
  uint64_t s = 29;
  double worst_spec = 0, worst_bound = 0, worst_shift = 0, worst_pd = 0, worst_clamp = 0, worst_comm = 0, tighter = 0;
  int enough = 1;
  for (int t = 0; t < 200; ++t) {
    const int k = 1 + t % 6;
    double H[36], A[36], Hs[36], Hc[36], w[6], V[36], wa[6], Va[36];
    for (int i = 0; i < k; ++i)
      for (int j = 0; j <= i; ++j) H[k * i + j] = H[k * j + i] = (2 * next_random(&s) - 1) * (i == j ? 3 : 1);
    eigen(k, H, w, V);
    const double scale = fmax(fabs(w[0]), fabs(w[k - 1])), eps = 1e-3 * scale;
    pbng_gpbd_qr_iterations(k, 5, H, A);
    double Asym[36];
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) Asym[k * i + j] = 0.5 * (A[k * i + j] + A[k * j + i]);
    eigen(k, Asym, wa, Va);
    for (int i = 0; i < k; ++i) worst_spec = fmax(worst_spec, fabs(wa[i] - w[i]) / scale);
    const double bound = pbng_gpbd_gershgorin_bound(k, A);
    worst_bound = fmax(worst_bound, (bound - w[0]) / scale); /* must be <= 0 */
    tighter += (w[0] - bound) <= (w[0] - pbng_gpbd_gershgorin_bound(k, H)) + 1e-12 * scale;
    memcpy(Hs, H, sizeof(Hs));
    const double tau = pbng_gpbd_shift_qr_gershgorin(k, eps, Hs);
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) worst_shift = fmax(worst_shift, fabs(Hs[k * i + j] - H[k * i + j] - (i == j) * tau) / scale);
    enough &= tau >= fmax(0.0, eps - w[0]) - 1e-12 * scale;
    worst_pd = fmax(worst_pd, (eps - min_eigenvalue(k, Hs)) / scale - 1e-12);
    memcpy(Hc, H, sizeof(Hc));
    pbng_gpbd_clamp_eigenvalues(k, eps, Hc);
    double wc[6], Vc[36];
    eigen(k, Hc, wc, Vc);
    double expect[6];
    for (int i = 0; i < k; ++i) expect[i] = fmax(w[i], eps);
    for (int i = 0; i < k; ++i) /* sort expect */
      for (int j = i + 1; j < k; ++j)
        if (expect[j] < expect[i]) {
          const double tt = expect[i];
          expect[i] = expect[j], expect[j] = tt;
        }
    for (int i = 0; i < k; ++i) worst_clamp = fmax(worst_clamp, fabs(wc[i] - expect[i]) / scale);
    for (int i = 0; i < k; ++i) /* Hc H = H Hc: the same eigenvectors */
      for (int j = 0; j < k; ++j) {
        double a = 0, b = 0;
        for (int l = 0; l < k; ++l) a += Hc[k * i + l] * H[k * l + j], b += H[k * i + l] * Hc[k * l + j];
        worst_comm = fmax(worst_comm, fabs(a - b) / (scale * scale));
      }
  }
  check(worst_spec < 1e-12, "QR iterations keep the spectrum", worst_spec, 0);
  check(worst_bound <= 1e-12, "Eq. 23: the Gershgorin bound after QR is below lambda_min", worst_bound, 0);
  printf("  QR iterations tightened (or kept) the Gershgorin bound in %.0f of 200 matrices\n", tighter);
  check(worst_shift < 1e-15, "the seed's fix changes H by tau I only", worst_shift, 0);
  check(enough, "the seed's shift is at least eps - lambda_min(H)", 0, 0);
  check(worst_pd <= 0, "the seed's fix: lambda_min >= eps (exact eigenvalues)", worst_pd, 0);
  check(worst_clamp < 1e-12, "eigenvalue clamping: eigenvalues max(lambda, eps)", worst_clamp, 0);
  check(worst_comm < 1e-12, "eigenvalue clamping keeps H's eigenvectors (commutes with H)", worst_comm, 0);
}

/* ---- the local solve (Eq. 19) ---- */

/* |grad phi| at dl recomputed independently: S (d + dd + W dU/dx(x + dd)). */
static double stationarity(const pbng_gpbd_term *t, int k, const double *x, const double *w, const double *d, const double *S, const double *dd)
{
  const int n3 = 3 * t->nnodes;
  double y[18], gU[18], r[18], n2 = 0;
  for (int v = 0; v < n3; ++v) y[v] = x[v] + dd[v];
  t->energy(t->ctx, y, gU, NULL);
  for (int v = 0; v < n3; ++v) r[v] = d[v] + dd[v] + w[v / 3] * gU[v];
  for (int i = 0; i < k; ++i) {
    double g = 0;
    for (int v = 0; v < n3; ++v) g += S[n3 * i + v] * r[v];
    n2 += g * g;
  }
  return sqrt(n2);
}

static double phi_of(const pbng_gpbd_term *t, const double *x, const double *w, const double *d, const double *dd)
{
  double y[18], q = 0;
  for (int v = 0; v < 3 * t->nnodes; ++v) {
    y[v] = x[v] + dd[v];
    q += (d[v] + dd[v]) * (d[v] + dd[v]) / w[v / 3];
  }
  return 0.5 * q + t->energy(t->ctx, y, NULL, NULL);
}

static void check_local_solve(void)
{
  uint64_t s = 31;
  const char *names[3] = {"log-barrier NH", "stable NH", "cloth"};
  for (int kind = 0; kind < 3; ++kind) {
    int all_decreased = 1, all_converged = 1, agree = 1, steps[3] = {0, 0, 0}, most[3] = {0, 0, 0};
    double worst_stat = 0;
    for (int t = 0; t < 40; ++t) {
      double X[6][3], x[6][3], w[6], d[18], S[6 * 18], st[6];
      pbng_gpbd_tet_material tm;
      pbng_gpbd_tet_rest tr;
      pbng_gpbd_cloth_material cm;
      pbng_gpbd_cloth_rest cr;
      pbng_gpbd_tet_term tt = {&tm, &tr};
      pbng_gpbd_cloth_term ct = {&cm, &cr};
      pbng_gpbd_term term;
      const double dt = 1e-2;
      if (kind < 2) {
        pbng_gpbd_tet_material_init(kind, 1e5, t % 2 ? 0.3 : 0.49, &tm);
        random_tet(&s, X);
        pbng_gpbd_tet_rest_shape(X, &tr);
        do deform(&s, 4, (const double(*)[3])X, 0.4, x);
        while (tet_det(&tr, x) < 0.2);
        pbng_gpbd_tet_strain(&tr, x, st, (double(*)[12])S);
        term = (pbng_gpbd_term){4, 6, pbng_gpbd_tet_term_energy, &tt};
      } else {
        pbng_gpbd_cloth_material_init(50, 10, 20, 1e-3, &cm);
        random_stencil(&s, t % 2 ? 0.2 : 0.0, X);
        pbng_gpbd_cloth_rest_shape(X, all_neighbours, weft_axis, &cr);
        deform_stencil(&s, X, 0.2, x);
        pbng_gpbd_cloth_strain(&cr, x, st, (double(*)[18])S);
        term = (pbng_gpbd_term){6, 6, pbng_gpbd_cloth_term_energy, &ct};
      }
      const int n = term.nnodes;
      const double rho = kind < 2 ? 1e3 : 0.2, vol = kind < 2 ? tr.volume : cr.area;
      for (int a = 0; a < n; ++a) w[a] = dt * dt / (rho * vol / (kind < 2 ? 4 : 3) * (0.5 + next_random(&s)));
      for (int v = 0; v < 3 * n; ++v) d[v] = 0.01 * (next_random(&s) - 0.5);
      double dl[3][6], dd[3][18];
      pbng_gpbd_local_result res[3];
      const pbng_gpbd_hessian_fix fixes[3] = {PBNG_GPBD_FIX_QR_GERSHGORIN, PBNG_GPBD_FIX_EIGEN_CLAMP, PBNG_GPBD_FIX_QR_GERSHGORIN_WHEN_INDEFINITE};
      for (int f = 0; f < 3; ++f) {
        pbng_gpbd_newton_options o;
        pbng_gpbd_newton_defaults(&o);
        o.fix = fixes[f];
        o.newton_max = 100, o.rtol = 1e-8;
        pbng_gpbd_local_solve(&term, &x[0][0], w, d, S, &o, dl[f], dd[f], &res[f]);
        steps[f] += res[f].iterations, most[f] = res[f].iterations > most[f] ? res[f].iterations : most[f];
        all_converged &= res[f].status == PBNG_GPBD_CONVERGED;
        all_decreased &= res[f].decreased && res[f].phi < res[f].phi0 && fabs(phi_of(&term, &x[0][0], w, d, dd[f]) - res[f].phi) <= 1e-12 * fabs(res[f].phi);
        const double g = stationarity(&term, 6, &x[0][0], w, d, S, dd[f]);
        worst_stat = fmax(worst_stat, fmax(g, res[f].grad) / res[f].grad0); /* recomputed here, and as reported */
        double WSt = 0; /* dd = W S^T dl */
        for (int v = 0; v < 3 * n; ++v) {
          double e = 0;
          for (int i = 0; i < 6; ++i) e += w[v / 3] * S[3 * n * i + v] * dl[f][i];
          WSt = fmax(WSt, fabs(e - dd[f][v]));
        }
        check(WSt <= 1e-15 * (max_abs(dd[f], 3 * n) + 1e-300) * 10, "local solve: dd = W S^T dl", WSt, 0);
        if (res[f].status != PBNG_GPBD_CONVERGED) printf("  %s trial %d fix %d: status %d after %d steps, |g| %g of %g\n", names[kind], t, f, res[f].status, res[f].iterations, res[f].grad, res[f].grad0);
      }
      for (int f = 1; f < 3; ++f)
        for (int i = 0; i < 6; ++i) agree &= fabs(dl[0][i] - dl[f][i]) <= 1e-6 * (max_abs(dl[0], 6) + 1e-300);
    }
    char what[160];
    snprintf(what, sizeof(what), "local solve (%s): converged within 100 Newton steps, every fix", names[kind]);
    check(all_converged, what, 0, 0);
    snprintf(what, sizeof(what), "local solve (%s): the objective decreased (and phi reported = phi recomputed)", names[kind]);
    check(all_decreased, what, 0, 0);
    snprintf(what, sizeof(what), "local solve (%s): |grad phi| at exit (reported and recomputed) <= 1e-8 |grad phi(0)|", names[kind]);
    check(worst_stat <= 1e-8, what, worst_stat, 1e-8);
    snprintf(what, sizeof(what), "local solve (%s): QR + Gershgorin, eigen clamping and shift-when-indefinite reach the same dl", names[kind]);
    check(agree, what, 0, 0);
    printf("  %s, Newton steps over 40 solves (most in one): QR + Gershgorin %d (%d), eigen clamping %d (%d), shift when indefinite %d (%d)\n",
           names[kind], steps[0], most[0], steps[1], most[1], steps[2], most[2]);
  }
}

/* The log barrier pulled towards inversion: d set so that the inertia term alone would invert the element. */
static void check_barrier_solve(void)
{
  uint64_t s = 37;
  pbng_gpbd_tet_material m;
  pbng_gpbd_tet_material_init(PBNG_GPBD_NEOHOOKEAN_LOG, 1e5, 0.45, &m);
  int never_inverted = 1, solved = 0;
  double min_det = INFINITY;
  for (int t = 0; t < 60; ++t) {
    double X[4][3], x[4][3], w[4], d[12], S[72], st[6], dl[6], dd[12], y[4][3];
    pbng_gpbd_tet_rest r;
    random_tet(&s, X);
    pbng_gpbd_tet_rest_shape(X, &r);
    do deform(&s, 4, (const double(*)[3])X, 0.3, x);
    while (tet_det(&r, x) < 0.05);
    /* squash towards a plane: x nearly flat (det F small but positive) */
    const double squash = t < 30 ? 0.1 : 0.01;
    double c[3] = {0};
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) c[i] += 0.25 * x[a][i];
    double n[3] = {0, 0, 1};
    for (int a = 0; a < 4; ++a) x[a][2] = c[2] + squash * (x[a][2] - c[2]);
    if (tet_det(&r, x) <= 0) continue;
    /* d: the displacement whose removal (dd = -d) reflects the element through its centroid plane */
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) d[3 * a + i] = i == 2 ? 2.5 * (x[a][2] - c[2]) * n[2] : 0.0;
    for (int a = 0; a < 4; ++a) w[a] = (t % 3 == 0 ? 1e-2 : 1e-5) / (1e3 * r.volume / 4);
    pbng_gpbd_tet_strain(&r, x, st, (double(*)[12])S);
    pbng_gpbd_tet_term tt = {&m, &r};
    pbng_gpbd_term term = {4, 6, pbng_gpbd_tet_term_energy, &tt};
    pbng_gpbd_newton_options o;
    pbng_gpbd_newton_defaults(&o);
    pbng_gpbd_local_result res;
    pbng_gpbd_local_solve(&term, &x[0][0], w, d, S, &o, dl, dd, &res);
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) y[a][i] = x[a][i] + dd[3 * a + i];
    const double det = tet_det(&r, y);
    min_det = fmin(min_det, det);
    never_inverted &= det > 0 && res.decreased;
    solved += res.status == PBNG_GPBD_CONVERGED;
  }
  check(never_inverted, "log barrier: the local solve never returns det F <= 0 from det F > 0 (objective decreased)", min_det, 0);
  printf("  log barrier: %d of 60 pulled solves converged, smallest det F at exit %g\n", solved, min_det);
  /* an inverted start is refused, untouched */
  double X[4][3], x[4][3], w[4] = {1, 1, 1, 1}, d[12] = {0}, S[72], st[6], dl[6], dd[12];
  pbng_gpbd_tet_rest r;
  random_tet(&s, X);
  pbng_gpbd_tet_rest_shape(X, &r);
  memcpy(x, X, sizeof(x));
  for (int i = 0; i < 3; ++i) x[3][i] = X[0][i] - (X[3][i] - X[0][i]); /* mirrored fourth vertex: det F < 0 */
  pbng_gpbd_tet_strain(&r, x, st, (double(*)[12])S);
  pbng_gpbd_tet_term tt = {&m, &r};
  pbng_gpbd_term term = {4, 6, pbng_gpbd_tet_term_energy, &tt};
  pbng_gpbd_newton_options o;
  pbng_gpbd_newton_defaults(&o);
  check(pbng_gpbd_local_solve(&term, &x[0][0], w, d, S, &o, dl, dd, NULL) == PBNG_GPBD_INVALID_START && max_abs(dd, 12) == 0,
        "log barrier: an inverted start is refused (dd = 0)", 0, 0);
}

/* ---- inverted tetrahedra ---- */

static void check_uninvert(void)
{
  uint64_t s = 41;
  double worst_centroid = 0, worst_sigma = 0, min_det = INFINITY;
  int kept = 1;
  for (int t = 0; t < 60; ++t) {
    double X[4][3], x[4][3], xo[4][3], F[9], Fo[9], U[9], V[9], sg[3], so[3];
    pbng_gpbd_tet_rest r;
    random_tet(&s, X);
    pbng_gpbd_tet_rest_shape(X, &r);
    do deform(&s, 4, (const double(*)[3])X, 0.5, x);
    while (tet_det(&r, x) < 0.05);
    kept &= pbng_gpbd_tet_uninvert(&r, x, 0.0, xo) == 0 && !memcmp(x, xo, sizeof(x));
    /* invert: reflect a vertex through the opposite face's plane (beyond it) */
    const int a = t % 4, b = (a + 1) % 4, c = (a + 2) % 4, e = (a + 3) % 4;
    double u[3], v[3], nrm[3], p[3];
    vec3_sub(x[c], x[b], u), vec3_sub(x[e], x[b], v), vec3_cross(u, v, nrm);
    const double nn = vec3_norm(nrm);
    for (int k = 0; k < 3; ++k) nrm[k] /= nn;
    vec3_sub(x[a], x[b], p);
    const double hgt = vec3_dot(p, nrm), depth = 0.2 + 1.5 * next_random(&s);
    for (int k = 0; k < 3; ++k) x[a][k] -= (1 + depth) * hgt * nrm[k];
    pbng_gpbd_tet_deformation(&r, x, F);
    check(mat3_det(F) < 0, "uninvert: the test element is inverted", mat3_det(F), 0);
    check(pbng_gpbd_tet_uninvert(&r, x, 0.0, xo) == 1, "uninvert: an inverted element is moved", 0, 0);
    pbng_gpbd_tet_deformation(&r, xo, Fo);
    min_det = fmin(min_det, mat3_det(Fo));
    double c0[3] = {0}, c1[3] = {0};
    for (int q = 0; q < 4; ++q)
      for (int k = 0; k < 3; ++k) c0[k] += 0.25 * x[q][k], c1[k] += 0.25 * xo[q][k];
    for (int k = 0; k < 3; ++k) worst_centroid = fmax(worst_centroid, fabs(c0[k] - c1[k]));
    pbng_svd3_rotations(F, U, sg, V);
    pbng_svd3_rotations(Fo, U, so, V);
    for (int k = 0; k < 3; ++k) worst_sigma = fmax(worst_sigma, fabs(so[k] - fabs(sg[k])) / sg[0]);
  }
  check(kept, "uninvert: an element with det F > 0 is left as it is", 0, 0);
  check(min_det > 0, "uninvert: det F' > 0", min_det, 0);
  check(worst_centroid < 1e-14, "uninvert: the centroid kept", worst_centroid, 0);
  check(worst_sigma < 1e-12, "uninvert: singular values of F' = |singular values of F|", worst_sigma, 0);
  /* a flat element: negation leaves it flat, s_min lifts it */
  double X[4][3], x[4][3], xo[4][3], F[9], U[9], V[9], sg[3];
  pbng_gpbd_tet_rest r;
  random_tet(&s, X);
  pbng_gpbd_tet_rest_shape(X, &r);
  memcpy(x, X, sizeof(x));
  for (int a = 0; a < 4; ++a) x[a][2] = 0.5; /* all in a plane */
  pbng_gpbd_tet_uninvert(&r, x, 0.1, xo);
  pbng_gpbd_tet_deformation(&r, xo, F);
  pbng_svd3_rotations(F, U, sg, V);
  check(mat3_det(F) > 0 && fabs(sg[2] - 0.1) < 1e-12, "uninvert: a flat element lifted to the smallest singular value s_min", sg[2], 0.1);
}

/* ---- k = 1: XPBD (App. A) ---- */

/* A pbng XPBD element constraint as a GPBD k = 1 term: U = C^2 / (2 alpha), dU = C grad C / alpha and
 * (XPBD's assumption, App. A Eq. 31) d^2U = grad C grad C^T / alpha without C's own Hessian. */
typedef struct {
  const pbng_material *mat;
  const double *B;
  double alpha;
  int which; /* 0: |F| (neo-Hookean's first constraint), 1: det F - 1 - mu/lambda_hat */
} xpbd_term;

static double constraint_value(const xpbd_term *c, const double *y, double grad[12])
{
  double F[9], G[9], C;
  pbng_tet_deformation_gradient(&y[0], &y[3], &y[6], &y[9], c->B, F);
  if (c->which == 1) {
    mat3_cofactor(F, G);
    C = mat3_det_from_cofactor(F, G) - 1 - c->mat->j_rest;
  } else {
    C = sqrt(mat3_frobenius_sq(F));
    for (int k = 0; k < 9; ++k) G[k] = F[k] / C;
  }
  for (int a = 0; a < 4; ++a) {
    double g[3];
    pbng_tet_shape_gradient(c->B, a, g);
    mat3_vec(G, g, &grad[3 * a]);
  }
  return C;
}

static double xpbd_energy(const void *ctx, const double *y, double *grad, double *hess)
{
  const xpbd_term *c = ctx;
  double gC[12];
  const double C = constraint_value(c, y, gC);
  if (grad)
    for (int v = 0; v < 12; ++v) grad[v] = C * gC[v] / c->alpha;
  if (hess)
    for (int u = 0; u < 12; ++u)
      for (int v = 0; v < 12; ++v) hess[12 * u + v] = gC[u] * gC[v] / c->alpha;
  return 0.5 * C * C / c->alpha;
}

/* U = (a.y - b)^2 / (2 alpha), parameters (a[12], b, alpha). */
static double test_linear_energy(const void *ctx, const double *y, double *grad, double *hess)
{
  const double *p = ctx, alpha = p[13];
  double C = -p[12];
  for (int v = 0; v < 12; ++v) C += p[v] * y[v];
  if (grad)
    for (int v = 0; v < 12; ++v) grad[v] = C * p[v] / alpha;
  if (hess)
    for (int u = 0; u < 12; ++u)
      for (int v = 0; v < 12; ++v) hess[12 * u + v] = p[u] * p[v] / alpha;
  return 0.5 * C * C / alpha;
}

static void check_xpbd_equivalence(void)
{
  uint64_t s = 43;
  double worst_x = 0, worst_l = 0, worst_formula = 0;
  for (int t = 0; t < 30; ++t) {
    pbng_material mat;
    pbng_material_init(&mat, PBNG_MATERIAL_NEOHOOKEAN, 1e4 * (1 + next_random(&s)), 0.2 + 0.25 * next_random(&s));
    double X[4][3], x[12], xg[12], B[9], inv_mass[4], lambda[2], lambda0[2];
    random_tet(&s, X);
    const double V = pbng_tet_rest_shape(X[0], X[1], X[2], X[3], B), dt = t % 2 ? 1e-2 : 1e-3;
    double xd[4][3];
    deform(&s, 4, (const double(*)[3])X, 0.3, xd);
    memcpy(x, xd, sizeof(x)), memcpy(xg, xd, sizeof(xg));
    for (int a = 0; a < 4; ++a) inv_mass[a] = (a == t % 5) ? 0.0 : 1.0 / (1e3 * V / 4 * (0.5 + next_random(&s))); /* one node fixed in 4 of 5 */
    for (int k = 0; k < 2; ++k) lambda[k] = lambda0[k] = 1e-4 * (next_random(&s) - 0.5) * V;
    /* pbng's XPBD: both constraints in turn */
    pbng_projection proj = {&mat, 1.0 / (dt * dt)};
    const int32_t node[4] = {0, 1, 2, 3};
    pbng_project_element(&proj, node, B, V, inv_mass, lambda, NULL, x);
    /* GPBD k = 1, the same two terms in turn, W = dt^2 M^-1, d = M^-1 lambda grad C (App. A) */
    const double alpha[2] = {1.0 / (mat.k_shear * V), 1.0 / (mat.k_volume * V)};
    for (int k = 0; k < 2; ++k) {
      xpbd_term c = {&mat, B, alpha[k], k};
      pbng_gpbd_term term = {4, 1, xpbd_energy, &c};
      double gC[12], d[12], w[4], dl, dd[12];
      const double C = constraint_value(&c, xg, gC);
      for (int a = 0; a < 4; ++a) w[a] = dt * dt * inv_mass[a];
      for (int v = 0; v < 12; ++v) d[v] = inv_mass[v / 3] * lambda0[k] * gC[v];
      pbng_gpbd_newton_options o;
      pbng_gpbd_newton_defaults(&o);
      o.newton_max = 1, o.rtol = 0, o.line_search = 0; /* App. A: one Newton step */
      pbng_gpbd_local_solve(&term, xg, w, d, gC, &o, &dl, dd, NULL);
      for (int v = 0; v < 12; ++v) xg[v] += dd[v];
      /* Eq. 11 (pbng's form): dlambda = (-C - alpha~ lambda) / (sum_j w_j |grad_j C|^2 + alpha~), alpha~ = alpha / dt^2 */
      double wgg = 0;
      for (int v = 0; v < 12; ++v) wgg += inv_mass[v / 3] * gC[v] * gC[v];
      const double at = alpha[k] / (dt * dt), dlx = (-C - at * lambda0[k]) / (wgg + at);
      worst_formula = fmax(worst_formula, fabs(dt * dt * dl - dlx) / fabs(dlx));
      worst_l = fmax(worst_l, fabs(lambda0[k] + dt * dt * dl - lambda[k]) / fabs(lambda[k] - lambda0[k]));
    }
    for (int v = 0; v < 12; ++v) worst_x = fmax(worst_x, fabs(x[v] - xg[v]) / (fabs(x[v] - xd[v / 3][v % 3]) + 1e-3 * cbrt(V)));
  }
  check(worst_formula < 1e-12, "k = 1: the first Newton step of Eq. 19 is Eq. 11's dlambda (lambda_XPBD = dt^2 lambda_GPBD)", worst_formula, 0);
  check(worst_l < 1e-12, "k = 1: accumulated multipliers equal pbng's XPBD ones", worst_l, 0);
  check(worst_x < 1e-12, "k = 1: positions equal pbng's XPBD projection (both element constraints in turn)", worst_x, 0);
  /* a linear constraint (App. A exactly): Newton is exact, the line search takes the full step */
  double worst_lin = 0;
  for (int t = 0; t < 20; ++t) {
    double a[12], x[12], w[4], d[12], dl, dd[12], lam = next_random(&s) - 0.5, b = next_random(&s);
    for (int v = 0; v < 12; ++v) a[v] = 2 * next_random(&s) - 1, x[v] = next_random(&s);
    for (int q = 0; q < 4; ++q) w[q] = 0.1 + next_random(&s);
    const double alpha = 0.01 + next_random(&s), dt = 0.1;
    for (int v = 0; v < 12; ++v) d[v] = w[v / 3] * lam * a[v] / (dt * dt); /* d = M^-1 lambda grad c, W = dt^2 M^-1 */
    double C = -b, wgg = 0;
    for (int v = 0; v < 12; ++v) C += a[v] * x[v], wgg += w[v / 3] * a[v] * a[v] / (dt * dt);
    pbng_gpbd_newton_options o;
    pbng_gpbd_newton_defaults(&o);
    o.newton_max = 5;
    double prm[14];
    memcpy(prm, a, sizeof(a)), prm[12] = b, prm[13] = alpha;
    pbng_gpbd_term term = {4, 1, test_linear_energy, prm};
    pbng_gpbd_local_result res;
    pbng_gpbd_local_solve(&term, x, w, d, a, &o, &dl, dd, &res);
    const double at = alpha / (dt * dt), dlx = (-C - at * lam) / (wgg + at);
    worst_lin = fmax(worst_lin, fabs(dt * dt * dl - dlx) / fabs(dlx));
    check(res.iterations == 1 && res.status == PBNG_GPBD_CONVERGED, "k = 1 linear: one full Newton step converges", res.iterations, 1);
  }
  check(worst_lin < 1e-12, "k = 1 linear constraint (App. A): Eq. 19's minimiser is Eq. 11's dlambda, line search on", worst_lin, 0);
}

int main(void)
{
  check_tet_strain();
  check_tet_energies();
  check_cloth_strain();
  check_cloth_energy();
  check_hessian_fix();
  check_local_solve();
  check_barrier_solve();
  check_uninvert();
  check_xpbd_equivalence();
  printf("test_gpbd_kernels: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
