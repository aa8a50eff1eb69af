/* Peridynamic membranes (src/core/peridynamics.c; docs/peridynamics.md):
 *  - materials: P = dPsi/dF by central differences, P+ + P- = P, the principal-stretch forms of Eq. 37
 *    and Eq. 39-41 on diagonal F, P(I) = 0;
 *  - K and F: an affine map y = A X + b of a flat one-ring gives F = A + (n' - A n) n^T (A on the bonds,
 *    the unit deformed normal n' on the normal), F = A when A n = n'; a rigid motion of a curved one-ring
 *    gives F = R; zero energy and force at rest; energy invariant under rotations and translations;
 *  - gradient by central differences: exact with the virtual bond held fixed (curved random rings, open
 *    and closed fans, both materials) and with the moving normal on flat rings; the size of the dropped
 *    normal term on curved rings is printed;
 *  - bending (the non-affine residual): zero for affine maps of flat rings and rigid motions of curved ones,
 *    positive for a bent ring, invariant under rigid motions, its gradient by central differences;
 *  - patch: a regular flat triangulated sheet under an affine in-plane stretch + shear and a rotation, the
 *    peridynamic forces against the FEM (linear triangles, the same material and Kirchhoff-Love normal). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/mat3.h"
#include "core/membrane.h"
#include "core/peridynamics.h"
#include "core/vec3.h"
#include "test_check.h"

#define PI 3.14159265358979323846

static const pbng_pd_material materials[2] = {{PBNG_PD_NEOHOOKEAN, 1.3, 4.1}, {PBNG_PD_STRETCHING, 2.2, 0}};

static double max_abs_diff(const double *a, const double *b, int n)
{
  double m = 0;
  for (int k = 0; k < n; ++k) m = fmax(m, fabs(a[k] - b[k]));
  return m;
}

static double max_abs(const double *a, int n)
{
  double m = 0;
  for (int k = 0; k < n; ++k) m = fmax(m, fabs(a[k]));
  return m;
}

/* y = A x + t for each of n points */
static void affine_points(const double A[9], const double t[3], const double (*x)[3], int n, double (*y)[3])
{
  for (int k = 0; k < n; ++k) {
    mat3_vec(A, x[k], y[k]);
    for (int a = 0; a < 3; ++a) y[k][a] += t[a];
  }
}

/* A random matrix near I with det A > 0.3. */
static void random_deformation(uint64_t *s, double amplitude, double A[9])
{
  do {
    for (int k = 0; k < 9; ++k) A[k] = (k % 4 == 0) + amplitude * (2 * next_random(s) - 1);
  } while (mat3_det(A) < 0.3);
}

static void random_rigid(uint64_t *s, double Q[9], double t[3])
{
  double R[3][3];
  random_rotation_matrix(s, R);
  memcpy(Q, R, sizeof(R));
  for (int a = 0; a < 3; ++a) t[a] = 4 * next_random(s) - 2;
}

/* A fan of n neighbours in counter-clockwise order around x_i in the plane of the rotation Q's first two
 * columns (the rest normal is Q e_z), at radii 0.6-1.4, lifted by curvature r^2 along the normal; closed
 * fans go once around, open ones over 1.3 pi. */
static void random_fan(uint64_t *s, int n, int closed, double curvature, double x_i[3], double (*ring)[3], double Q[9])
{
  double t[3];
  random_rigid(s, Q, t);
  const double span = closed ? 2 * PI : 1.3 * PI, step = closed ? span / n : span / (n - 1);
  double local[PBNG_PD_MAX_RING + 1][3] = {{0, 0, 0}};
  for (int k = 0; k < n; ++k) {
    const double th = k * step + 0.3 * step * (next_random(s) - 0.5), r = 0.6 + 0.8 * next_random(s);
    local[k + 1][0] = r * cos(th), local[k + 1][1] = r * sin(th), local[k + 1][2] = curvature * r * r * (0.5 + next_random(s));
  }
  double world[PBNG_PD_MAX_RING + 1][3];
  affine_points(Q, t, (const double(*)[3])local, n + 1, world);
  memcpy(x_i, world[0], sizeof(world[0]));
  memcpy(ring, world + 1, n * sizeof(world[0]));
}

/* ---- materials ---- */

static void test_materials(uint64_t *s)
{
  double worst_fd = 0, worst_split = 0;
  for (int trial = 0; trial < 50; ++trial)
    for (int mk = 0; mk < 2; ++mk) {
      const pbng_pd_material *m = &materials[mk];
      double F[9], P[9], Pp[9], Pm[9];
      random_deformation(s, 0.4, F);
      const double psi = pbng_pd_energy_density(m, F, P);
      double scale = max_abs(P, 9) + 1e-300;
      for (int k = 0; k < 9; ++k) {
        const double h = 1e-6, f0 = F[k];
        F[k] = f0 + h;
        const double ep = pbng_pd_energy_density(m, F, NULL);
        F[k] = f0 - h;
        const double em = pbng_pd_energy_density(m, F, NULL);
        F[k] = f0;
        worst_fd = fmax(worst_fd, fabs((ep - em) / (2 * h) - P[k]) / scale);
      }
      pbng_pd_stress_split(m, F, Pp, Pm);
      for (int k = 0; k < 9; ++k) Pp[k] += Pm[k];
      worst_split = fmax(worst_split, max_abs_diff(Pp, P, 9) / scale);
      check(psi >= -1e-12, "Psi >= 0", psi, 0);
    }
  printf("materials: P vs central differences of Psi, worst relative error %.2e; |P+ + P- - P| / |P| %.2e\n", worst_fd, worst_split);
  check(worst_fd < 1e-7, "P = dPsi/dF by central differences", worst_fd, 1e-7);
  check(worst_split < 1e-14, "P+ + P- = P", worst_split, 1e-14);

  /* principal forms on F = diag(l): Eq. 37 and Eq. 39-41 */
  const double l[3] = {1.3, 0.7, 1.1}, F[9] = {l[0], 0, 0, 0, l[1], 0, 0, 0, l[2]}, I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double J = l[0] * l[1] * l[2];
  double P[9], Pp[9], Pm[9], P0[9];
  for (int mk = 0; mk < 2; ++mk) {
    const pbng_pd_material *m = &materials[mk];
    const double psi = pbng_pd_energy_density(m, F, P);
    pbng_pd_stress_split(m, F, Pp, Pm);
    double psi_ref = 0;
    for (int a = 0; a < 3; ++a) {
      double p, pp, pm;
      if (m->kind == PBNG_PD_NEOHOOKEAN) {
        pp = 2 * m->s0 * l[a] + 2 * m->s1 * J * J / l[a], pm = -2 * (m->s0 / l[a] + m->s1 * J / l[a]);
        psi_ref += m->s0 * (l[a] * l[a] - 1 - 2 * log(l[a]));
      } else {
        pp = m->s0 * l[a] * l[a] * l[a] / 3, pm = -m->s0 / (3 * l[a] * l[a] * l[a]);
        psi_ref += m->s0 / 3 * ((pow(l[a], 4) - 1) / 4 + (pow(l[a], -2) - 1) / 2);
      }
      p = pp + pm;
      check(fabs(P[4 * a] - p) < 1e-13 * fabs(p) + 1e-14 && fabs(Pp[4 * a] - pp) < 1e-13 * pp && fabs(Pm[4 * a] - pm) < 1e-13 * fabs(pm),
            "principal stress, Eq. 37-38 / 41", P[4 * a], p);
    }
    if (m->kind == PBNG_PD_NEOHOOKEAN) psi_ref += m->s1 * (J - 1) * (J - 1);
    check(fabs(psi - psi_ref) < 1e-13 * psi_ref, "principal energy, Eq. 36 / 39-40", psi, psi_ref);
    check(pbng_pd_energy_density(m, I, P0) == 0 && max_abs(P0, 9) == 0, "Psi(I) = 0, P(I) = 0", max_abs(P0, 9), 0);
    const double Finv[9] = {1, 0, 0, 0, -1, 0, 0, 0, 1};
    check(isinf(pbng_pd_energy_density(m, Finv, NULL)), "inverted F: infinite energy", 0, 0);
  }
}

/* ---- K and F ---- */

static void test_affine_flat(uint64_t *s)
{
  double worst = 0, worst_kl = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 3 + trial % 10, closed = trial % 3 != 0;
    double X_i[3], X[PBNG_PD_MAX_RING][3], Q[9], A[9], b[3], y_i[3], y[PBNG_PD_MAX_RING][3], F[9], yp[3];
    random_fan(s, n, closed, 0.0, X_i, X, Q);
    pbng_pd_rest r;
    check(pbng_pd_rest_init(X_i, (const double(*)[3])X, n, closed, NULL, 0.05 + next_random(s), 1.0, &r) == 0, "rest one-ring accepted", n, closed);
    random_deformation(s, 0.6, A);
    for (int a = 0; a < 3; ++a) b[a] = next_random(s);
    affine_points(A, b, (const double(*)[3])X, n, y);
    affine_points(A, b, (const double(*)[3])&X_i, 1, (double(*)[3])y_i);
    pbng_pd_deformation_gradient(&r, y_i, (const double(*)[3])y, F, yp);
    /* expected: F = A + (n' - A n) n^T, n = Q e_z, n' = cof(A) n / |cof(A) n| */
    double n0[3] = {Q[2], Q[5], Q[8]}, C[9], n1[3], An[3], E[9];
    mat3_cofactor(A, C);
    mat3_vec(C, n0, n1);
    const double len = vec3_norm(n1);
    mat3_vec(A, n0, An);
    for (int a = 0; a < 3; ++a) n1[a] /= len;
    for (int rr = 0; rr < 3; ++rr)
      for (int c = 0; c < 3; ++c) E[3 * rr + c] = A[3 * rr + c] + (n1[rr] - An[rr]) * n0[c];
    worst = fmax(worst, max_abs_diff(F, E, 9));
    /* A Kirchhoff-Love map (normal to unit normal): F = A exactly */
    double Akl[9];
    memcpy(Akl, E, sizeof(E));
    affine_points(Akl, b, (const double(*)[3])X, n, y);
    affine_points(Akl, b, (const double(*)[3])&X_i, 1, (double(*)[3])y_i);
    pbng_pd_deformation_gradient(&r, y_i, (const double(*)[3])y, F, NULL);
    worst_kl = fmax(worst_kl, max_abs_diff(F, Akl, 9));
  }
  printf("flat one-rings, y = A X + b: max |F - (A + (n' - A n) n^T)| = %.2e; Kirchhoff-Love A (A n = n'): max |F - A| = %.2e\n", worst, worst_kl);
  check(worst < 1e-12, "flat ring: F = A on the bonds, n' on the normal", worst, 1e-12);
  check(worst_kl < 1e-12, "flat ring: F = A for A n = n'", worst_kl, 1e-12);
}

static void test_rigid_and_rest(uint64_t *s)
{
  double worst_F = 0, worst_rest_g = 0, worst_inv = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 3 + trial % 12, closed = trial % 4 != 0;
    double X_i[3], X[PBNG_PD_MAX_RING][3], Q[9], R[9], t[3], y_i[3], y[PBNG_PD_MAX_RING][3], F[9];
    random_fan(s, n, closed, 0.4 * (next_random(s) - 0.3), X_i, X, Q);
    pbng_pd_rest r;
    pbng_pd_rest_init(X_i, (const double(*)[3])X, n, closed, NULL, 0.1, 0.7, &r);
    const pbng_pd_material *m = &materials[trial % 2];
    /* at rest */
    double gi[3], gr[PBNG_PD_MAX_RING][3];
    const double W0 = pbng_pd_vertex_energy_gradient(m, &r, X_i, (const double(*)[3])X, gi, gr, NULL);
    worst_rest_g = fmax(worst_rest_g, fmax(fabs(W0), fmax(max_abs(gi, 3), max_abs(&gr[0][0], 3 * n))));
    /* rigid motion of the rest ring: F = R */
    random_rigid(s, R, t);
    affine_points(R, t, (const double(*)[3])X, n, y);
    affine_points(R, t, (const double(*)[3])&X_i, 1, (double(*)[3])y_i);
    pbng_pd_deformation_gradient(&r, y_i, (const double(*)[3])y, F, NULL);
    worst_F = fmax(worst_F, max_abs_diff(F, R, 9));
    /* invariance of W at a deformed state */
    double A[9], z_i[3], z[PBNG_PD_MAX_RING][3], zero[3] = {0, 0, 0};
    random_deformation(s, 0.3, A);
    affine_points(A, zero, (const double(*)[3])X, n, y);
    affine_points(A, zero, (const double(*)[3])&X_i, 1, (double(*)[3])y_i);
    for (int j = 0; j < n; ++j)
      for (int a = 0; a < 3; ++a) y[j][a] += 0.05 * (next_random(s) - 0.5);
    const double W = pbng_pd_vertex_energy_gradient(m, &r, y_i, (const double(*)[3])y, NULL, NULL, NULL);
    affine_points(R, t, (const double(*)[3])y, n, z);
    affine_points(R, t, (const double(*)[3])&y_i, 1, (double(*)[3])z_i);
    const double Wr = pbng_pd_vertex_energy_gradient(m, &r, z_i, (const double(*)[3])z, NULL, NULL, NULL);
    worst_inv = fmax(worst_inv, fabs(W - Wr) / fabs(W));
  }
  printf("curved one-rings: at rest max |W|, |grad| = %.2e; rigid motion max |F - R| = %.2e; |W(Qy + t) - W(y)| / W <= %.2e\n", worst_rest_g,
         worst_F, worst_inv);
  check(worst_rest_g < 1e-11, "zero energy and force at rest", worst_rest_g, 1e-13);
  check(worst_F < 1e-12, "rigid motion: F = R", worst_F, 1e-12);
  check(worst_inv < 1e-12, "energy invariant under rotations and translations", worst_inv, 1e-12);
}

/* ---- gradient by central differences ---- */

/* W_i with the virtual bond frozen at yp (moving = 0) or following the deformed fan (moving = 1). */
static double vertex_energy(const pbng_pd_material *m, const pbng_pd_rest *r, const double (*pts)[3], const double yp[3], int moving)
{
  if (moving) return pbng_pd_vertex_energy_gradient(m, r, pts[0], pts + 1, NULL, NULL, NULL);
  double F[9];
  pbng_pd_deformation_gradient_with(r, pts[0], pts + 1, yp, F);
  return r->volume * pbng_pd_energy_density(m, F, NULL);
}

/* Largest |central difference - gradient| over the fan's coordinates, relative to the largest gradient entry;
 * chain: the gradient includes the moving normal's chain (pbng_pd_virtual_bond_gradient). */
static double gradient_error(const pbng_pd_material *m, const pbng_pd_rest *r, double (*pts)[3], int moving, int chain)
{
  const int n = r->n;
  double g[PBNG_PD_MAX_RING + 1][3], yp[3], F[9], gp[3];
  pbng_pd_vertex_energy_gradient(m, r, pts[0], (const double(*)[3])pts + 1, g[0], g + 1, gp);
  if (chain) pbng_pd_virtual_bond_gradient(r, pts[0], (const double(*)[3])pts + 1, gp, g[0], g + 1);
  pbng_pd_deformation_gradient(r, pts[0], (const double(*)[3])pts + 1, F, yp);
  const double scale = max_abs(&g[0][0], 3 * (n + 1)), h = 1e-6;
  double worst = 0;
  for (int v = 0; v <= n; ++v)
    for (int a = 0; a < 3; ++a) {
      const double p0 = pts[v][a];
      pts[v][a] = p0 + h;
      const double ep = vertex_energy(m, r, (const double(*)[3])pts, yp, moving);
      pts[v][a] = p0 - h;
      const double em = vertex_energy(m, r, (const double(*)[3])pts, yp, moving);
      pts[v][a] = p0;
      worst = fmax(worst, fabs((ep - em) / (2 * h) - g[v][a]) / scale);
    }
  return worst;
}

static void test_gradient(uint64_t *s)
{
  double worst_frozen = 0, worst_flat = 0, worst_curved = 0, sum_curved = 0, worst_exact = 0;
  int curved_count = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int n = 3 + trial % 10, closed = trial % 3 != 0, flat = trial % 2;
    const pbng_pd_material *m = &materials[(trial / 2) % 2];
    double X[PBNG_PD_MAX_RING + 1][3], Q[9], A[9], y[PBNG_PD_MAX_RING + 1][3], zero[3] = {0, 0, 0};
    random_fan(s, n, closed, flat ? 0.0 : 0.5 * (next_random(s) - 0.3), X[0], X + 1, Q);
    pbng_pd_rest r;
    pbng_pd_rest_init(X[0], (const double(*)[3])X + 1, n, closed, NULL, 0.2, 0.9, &r);
    random_deformation(s, 0.3, A);
    affine_points(A, zero, (const double(*)[3])X, n + 1, y);
    if (flat) { /* keep the deformed fan flat: in-plane noise only */
      double nrm[3], Cof[9], n0[3] = {Q[2], Q[5], Q[8]};
      mat3_cofactor(A, Cof);
      mat3_vec(Cof, n0, nrm);
      const double len = vec3_norm(nrm);
      for (int v = 0; v <= n; ++v) {
        double d[3], dn = 0;
        for (int a = 0; a < 3; ++a) d[a] = 0.05 * (next_random(s) - 0.5);
        for (int a = 0; a < 3; ++a) dn += d[a] * nrm[a] / len;
        for (int a = 0; a < 3; ++a) y[v][a] += d[a] - dn * nrm[a] / len;
      }
    } else
      for (int v = 0; v <= n; ++v)
        for (int a = 0; a < 3; ++a) y[v][a] += 0.05 * (next_random(s) - 0.5);
    worst_frozen = fmax(worst_frozen, gradient_error(m, &r, y, 0, 0));
    worst_exact = fmax(worst_exact, gradient_error(m, &r, y, 1, 1));
    const double e = gradient_error(m, &r, y, 1, 0);
    if (flat)
      worst_flat = fmax(worst_flat, e);
    else
      worst_curved = fmax(worst_curved, e), sum_curved += e, ++curved_count;
  }
  printf("gradient vs central differences (relative to max |grad|): virtual bond held fixed %.2e; moving normal, flat rings %.2e; "
         "moving normal, curved rings: the dropped term is %.2e on average, %.2e at most;\n"
         "  with the normal's chain added (pbng_pd_virtual_bond_gradient), every ring: %.2e\n",
         worst_frozen, worst_flat, sum_curved / curved_count, worst_curved, worst_exact);
  check(worst_frozen < 1e-7, "gradient exact with the virtual bond fixed", worst_frozen, 1e-7);
  check(worst_flat < 1e-7, "gradient exact on flat rings with the moving normal", worst_flat, 1e-7);
  check(worst_exact < 1e-7, "gradient exact with the normal's chain", worst_exact, 1e-7);
}

/* ---- bending ---- */

static double bending_energy(const pbng_pd_rest *r, const double (*pts)[3], const double *yp)
{
  return pbng_pd_bending_energy_gradient(0.7, r, pts[0], pts + 1, yp, NULL, NULL, NULL);
}

static void test_bending(uint64_t *s)
{
  double worst_affine = 0, worst_rigid = 0, worst_inv = 0, worst_fd = 0, worst_moving = 0, worst_exact = 0, least_bent = INFINITY;
  for (int trial = 0; trial < 120; ++trial) {
    const int n = 3 + trial % 10, closed = trial % 3 != 0;
    double X[PBNG_PD_MAX_RING + 1][3], Q[9], A[9], R[9], t[3], y[PBNG_PD_MAX_RING + 1][3], z[PBNG_PD_MAX_RING + 1][3], yp[3], F[9];
    /* flat ring, affine map: zero */
    random_fan(s, n, closed, 0.0, X[0], X + 1, Q);
    pbng_pd_rest r;
    pbng_pd_rest_init(X[0], (const double(*)[3])X + 1, n, closed, NULL, 0.2, 0.9, &r);
    random_deformation(s, 0.5, A);
    random_rigid(s, R, t);
    affine_points(A, t, (const double(*)[3])X, n + 1, y);
    worst_affine = fmax(worst_affine, bending_energy(&r, (const double(*)[3])y, NULL));
    /* the same ring with one neighbour lifted along the normal by 0.1: bent, E > 0 */
    memcpy(z, X, sizeof(X));
    for (int a = 0; a < 3; ++a) z[1 + trial % n][a] += 0.1 * Q[3 * a + 2];
    least_bent = fmin(least_bent, bending_energy(&r, (const double(*)[3])z, NULL));
    /* curved ring: rigid motion gives zero; a deformed state is invariant; gradient by central differences */
    random_fan(s, n, closed, 0.5 * (next_random(s) - 0.3), X[0], X + 1, Q);
    pbng_pd_rest_init(X[0], (const double(*)[3])X + 1, n, closed, NULL, 0.2, 0.9, &r);
    affine_points(R, t, (const double(*)[3])X, n + 1, y);
    worst_rigid = fmax(worst_rigid, bending_energy(&r, (const double(*)[3])y, NULL));
    random_deformation(s, 0.3, A);
    affine_points(A, t, (const double(*)[3])X, n + 1, y);
    for (int v = 0; v <= n; ++v)
      for (int a = 0; a < 3; ++a) y[v][a] += 0.1 * (next_random(s) - 0.5);
    const double E = bending_energy(&r, (const double(*)[3])y, NULL);
    affine_points(R, t, (const double(*)[3])y, n + 1, z);
    worst_inv = fmax(worst_inv, fabs(bending_energy(&r, (const double(*)[3])z, NULL) - E) / E);
    double g[PBNG_PD_MAX_RING + 1][3];
    pbng_pd_deformation_gradient(&r, y[0], (const double(*)[3])y + 1, F, yp);
    double gp[3], gx[PBNG_PD_MAX_RING + 1][3];
    pbng_pd_bending_energy_gradient(0.7, &r, y[0], (const double(*)[3])y + 1, yp, g[0], g + 1, gp);
    memcpy(gx, g, sizeof(g));
    pbng_pd_virtual_bond_gradient(&r, y[0], (const double(*)[3])y + 1, gp, gx[0], gx + 1);
    const double scale = max_abs(&g[0][0], 3 * (n + 1)), h = 1e-6;
    for (int v = 0; v <= n; ++v)
      for (int a = 0; a < 3; ++a) {
        const double p0 = y[v][a];
        y[v][a] = p0 + h;
        const double ep = bending_energy(&r, (const double(*)[3])y, yp), mp = bending_energy(&r, (const double(*)[3])y, NULL);
        y[v][a] = p0 - h;
        const double em = bending_energy(&r, (const double(*)[3])y, yp), mm = bending_energy(&r, (const double(*)[3])y, NULL);
        y[v][a] = p0;
        worst_fd = fmax(worst_fd, fabs((ep - em) / (2 * h) - g[v][a]) / scale);
        worst_moving = fmax(worst_moving, fabs((mp - mm) / (2 * h) - g[v][a]) / scale);
        worst_exact = fmax(worst_exact, fabs((mp - mm) / (2 * h) - gx[v][a]) / scale);
      }
  }
  printf("bending: affine maps of flat rings max E = %.2e, rigid motions of curved rings %.2e, one neighbour lifted by 0.1: min E = %.2e;\n"
         "  |E(Qy + t) - E(y)| / E <= %.2e; gradient vs central differences %.2e with y_perp fixed, with the moving normal %.2e\n"
         "  (the normal's chain dropped) and %.2e (added, pbng_pd_virtual_bond_gradient)\n",
         worst_affine, worst_rigid, least_bent, worst_inv, worst_fd, worst_moving, worst_exact);
  check(worst_affine < 1e-24 && worst_rigid < 1e-24, "bending: zero for affine flat and rigid curved", worst_affine, worst_rigid);
  check(least_bent > 1e-6, "bending: a bent ring has energy", least_bent, 1e-6);
  check(worst_inv < 1e-11, "bending: invariant under rigid motions", worst_inv, 1e-11);
  check(worst_fd < 1e-7, "bending: gradient by central differences (y_perp fixed)", worst_fd, 1e-7);
  check(worst_exact < 1e-7, "bending: exact gradient with the normal's chain", worst_exact, 1e-7);
}

/* ---- patch: peridynamics against FEM ---- */

#define NX 9
#define NY 7
#define NV (NX * NY)
#define NT (2 * (NX - 1) * (NY - 1))

/* Neighbours of v in fan order (counter-clockwise) from the triangles (each counter-clockwise). */
static int vertex_fan(const int (*tri)[3], int nt, int v, int *ring, int *closed)
{
  int next[NV], has_prev[NV];
  for (int k = 0; k < NV; ++k) next[k] = -1, has_prev[k] = 0;
  for (int t = 0; t < nt; ++t)
    for (int c = 0; c < 3; ++c)
      if (tri[t][c] == v) {
        const int a = tri[t][(c + 1) % 3], b = tri[t][(c + 2) % 3];
        next[a] = b, has_prev[b] = 1;
      }
  int start = -1;
  for (int k = 0; k < NV; ++k)
    if (next[k] >= 0 && !has_prev[k]) start = k;
  *closed = start < 0;
  if (start < 0)
    for (int k = 0; k < NV && start < 0; ++k)
      if (next[k] >= 0) start = k;
  int n = 0, k = start;
  do {
    ring[n++] = k;
    k = next[k];
  } while (k >= 0 && k != start);
  return n;
}

static void test_patch_against_fem(uint64_t *s)
{
  const double h = 0.1, t = 0.01;
  double X[NV][3], y[NV][3];
  int tri[NT][3], nt = 0;
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) X[j * NX + i][0] = i * h, X[j * NX + i][1] = j * h, X[j * NX + i][2] = 0;
  for (int j = 0; j + 1 < NY; ++j)
    for (int i = 0; i + 1 < NX; ++i) {
      const int a = j * NX + i;
      tri[nt][0] = a, tri[nt][1] = a + 1, tri[nt][2] = a + NX + 1, ++nt;
      tri[nt][0] = a, tri[nt][1] = a + NX + 1, tri[nt][2] = a + NX, ++nt;
    }
  /* A = R [[a, c, 0], [0, b, 0], [0, 0, 1]]: in-plane stretch and shear, the normal kept unit, then rotated */
  double R[9], tr[3], S[9] = {1.3, 0.25, 0, -0.1, 0.8, 0, 0, 0, 1}, A[9];
  random_rigid(s, R, tr);
  mat3_mul(R, S, A);
  affine_points(A, tr, (const double(*)[3])X, NV, y);
  const pbng_pd_material *m = &materials[0];

  /* FEM: linear triangles, F = [F2 | n'] (the 3 x 2 membrane F and the unit deformed normal), grad_a = t A_e P g_a */
  double f_fem[NV][3] = {{0}}, W_fem = 0, worst_F = 0, area[NV] = {0};
  const double weft[3] = {1, 0, 0};
  for (int e = 0; e < nt; ++e) {
    double Xe[3][3], ye[3][3], F2[3][2], F[9], P[9], nrm[3];
    for (int c = 0; c < 3; ++c) memcpy(Xe[c], X[tri[e][c]], sizeof(Xe[c])), memcpy(ye[c], y[tri[e][c]], sizeof(ye[c]));
    pbng_membrane_rest r;
    pbng_membrane_rest_shape((const double(*)[3])Xe, weft, &r);
    pbng_membrane_deformation((const double(*)[3])ye, &r, F2);
    double u[3] = {F2[0][0], F2[1][0], F2[2][0]}, v[3] = {F2[0][1], F2[1][1], F2[2][1]};
    vec3_cross(u, v, nrm);
    const double len = vec3_norm(nrm);
    for (int a = 0; a < 3; ++a) F[3 * a] = u[a], F[3 * a + 1] = v[a], F[3 * a + 2] = nrm[a] / len;
    worst_F = fmax(worst_F, max_abs_diff(F, A, 9));
    W_fem += t * r.area * pbng_pd_energy_density(m, F, P);
    for (int c = 0; c < 3; ++c) {
      area[tri[e][c]] += r.area / 3;
      for (int a = 0; a < 3; ++a) f_fem[tri[e][c]][a] -= t * r.area * (P[3 * a] * r.g[c][0] + P[3 * a + 1] * r.g[c][1]);
    }
  }

  /* peridynamics: V_i = t * (one-ring area) / 3, omega = 1, thickness (Eq. 13) h; forces scattered per Eq. 8 */
  double f_pd[NV][3] = {{0}}, W_pd = 0, worst_Fi = 0;
  for (int v = 0; v < NV; ++v) {
    int ring[PBNG_PD_MAX_RING], closed;
    const int n = vertex_fan((const int(*)[3])tri, nt, v, ring, &closed);
    double Xr[PBNG_PD_MAX_RING][3], yr[PBNG_PD_MAX_RING][3], gi[3], gr[PBNG_PD_MAX_RING][3], F[9];
    for (int j = 0; j < n; ++j) memcpy(Xr[j], X[ring[j]], sizeof(Xr[j])), memcpy(yr[j], y[ring[j]], sizeof(yr[j]));
    pbng_pd_rest r;
    check(pbng_pd_rest_init(X[v], (const double(*)[3])Xr, n, closed, NULL, h, t * area[v], &r) == 0, "patch vertex rest data", v, n);
    pbng_pd_deformation_gradient(&r, y[v], (const double(*)[3])yr, F, NULL);
    worst_Fi = fmax(worst_Fi, max_abs_diff(F, A, 9));
    W_pd += pbng_pd_vertex_energy_gradient(m, &r, y[v], (const double(*)[3])yr, gi, gr, NULL);
    for (int a = 0; a < 3; ++a) f_pd[v][a] -= gi[a];
    for (int j = 0; j < n; ++j)
      for (int a = 0; a < 3; ++a) f_pd[ring[j]][a] -= gr[j][a];
  }

  /* compare: deep interior (whole ring interior), first interior layer, the boundary, resultants */
  const double scale = max_abs(&f_fem[0][0], 3 * NV);
  double deep = 0, deep_fem = 0, layer1 = 0, boundary = 0, res_pd[2][3] = {{0}}, res_fem[2][3] = {{0}}, sum_pd[3] = {0};
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) {
      const int v = j * NX + i, d = (int)fmin(fmin(i, NX - 1 - i), fmin(j, NY - 1 - j));
      const double diff = max_abs_diff(f_pd[v], f_fem[v], 3);
      if (d >= 2) deep = fmax(deep, max_abs(f_pd[v], 3)), deep_fem = fmax(deep_fem, max_abs(f_fem[v], 3));
      if (d == 1) layer1 = fmax(layer1, diff);
      if (d == 0) boundary = fmax(boundary, diff);
      for (int a = 0; a < 3; ++a) {
        sum_pd[a] += f_pd[v][a];
        if (i > NX / 2) res_pd[0][a] += f_pd[v][a], res_fem[0][a] += f_fem[v][a];
        if (j > NY / 2) res_pd[1][a] += f_pd[v][a], res_fem[1][a] += f_fem[v][a];
      }
    }
  const double res_diff = fmax(max_abs_diff(res_pd[0], res_fem[0], 3) / max_abs(res_fem[0], 3),
                              max_abs_diff(res_pd[1], res_fem[1], 3) / max_abs(res_fem[1], 3));
  printf("patch %dx%d, affine stretch + shear + rotation, neo-Hookean: max |F_i - A| = %.2e (FEM %.2e); |W_pd - W_fem| / W = %.2e;\n"
         "  forces / max |f_fem|: deep interior |f_pd| %.2e (|f_fem| %.2e), first interior layer |f_pd - f_fem| %.2e, boundary %.2e;\n"
         "  resultants on the right and the upper part |pd - fem| / |fem| %.2e; |sum f_pd| %.2e\n",
         NX, NY, worst_Fi, worst_F, fabs(W_pd - W_fem) / W_fem, deep / scale, deep_fem / scale, layer1 / scale, boundary / scale, res_diff,
         max_abs(sum_pd, 3) / scale);
  check(worst_Fi < 1e-12 && worst_F < 1e-12, "patch: F_i = F_e = A", worst_Fi, worst_F);
  check(fabs(W_pd - W_fem) < 1e-12 * W_fem, "patch: peridynamic energy = FEM energy", W_pd, W_fem);
  check(deep < 1e-12 * scale && deep_fem < 1e-12 * scale, "patch: zero force on the deep interior, as FEM", deep, deep_fem);
  check(max_abs(sum_pd, 3) < 1e-12 * scale, "patch: the forces sum to zero", max_abs(sum_pd, 3), 0);
  check(res_diff < 1e-12, "patch: resultant force across a cut = FEM's", res_diff, 1e-12);
}

int main(void)
{
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  test_materials(&seed);
  test_affine_flat(&seed);
  test_rigid_and_rest(&seed);
  test_gradient(&seed);
  test_bending(&seed);
  test_patch_against_fem(&seed);
  pbng_pd_rest r;
  const double X_i[3] = {0, 0, 0}, line[3][3] = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
  check(pbng_pd_rest_init(X_i, line, 3, 0, NULL, 0.1, 1, &r) == -1, "degenerate (collinear) fan refused", 0, 0);
  check(pbng_pd_rest_init(X_i, line, 1, 0, NULL, 0.1, 1, &r) == -1, "fan of one neighbour refused", 0, 0);
  printf("%d checks, %d failures\n", checks, failures);
  return failures != 0;
}
