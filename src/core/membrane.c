#include "core/membrane.h"
#include <math.h>
#include <string.h>
#include "core/vec3.h"

static int positive_finite(double v) { return v > 0 && isfinite(v); }

/* ---- materials ---- */

const char *pbng_membrane_orthotropic(double k_weft, double k_warp, double k_shear, double nu_weft, double nu_warp, double thickness,
                                      pbng_membrane_material *m)
{
  if (!positive_finite(k_weft)) return "membrane: k_weft must be positive and finite";
  if (!positive_finite(k_warp)) return "membrane: k_warp must be positive and finite";
  if (!positive_finite(k_shear)) return "membrane: k_shear must be positive and finite";
  if (!(nu_weft >= 0 && nu_weft < 1)) return "membrane: nu_weft must be in [0, 1)";
  if (!(nu_warp >= 0 && nu_warp < 1)) return "membrane: nu_warp must be in [0, 1)";
  if (!positive_finite(thickness)) return "membrane: the thickness must be positive and finite";
  const double s = 1.0 / (1.0 - nu_weft * nu_warp), c = 0.5 * (k_weft * nu_warp + k_warp * nu_weft) * s;
  if (!(k_weft * s * k_warp * s > c * c)) return "membrane: k_weft, k_warp, nu_weft, nu_warp give an elasticity tensor that is not positive definite";
  memset(m, 0, sizeof(*m));
  m->C[0][0] = k_weft * s, m->C[1][1] = k_warp * s, m->C[0][1] = m->C[1][0] = c, m->C[2][2] = k_shear;
  m->thickness = thickness;
  return NULL;
}

const char *pbng_membrane_isotropic(double E, double nu, double thickness, pbng_membrane_material *m)
{
  if (!positive_finite(E)) return "membrane: Young's modulus must be positive and finite";
  if (!(nu >= 0 && nu < 0.5)) return "membrane: Poisson's ratio must be in [0, 0.5)";
  return pbng_membrane_orthotropic(E, E, E / (2 * (1 + nu)), nu, nu, thickness, m);
}

/* ---- rest shape ---- */

/* The local frame of the rest triangle (module comment in membrane.h): e1, e2. Returns 0 or -1. */
static int local_frame(const double X[3][3], const double weft[3], double e1[3], double e2[3], double *twice_area)
{
  double a[3], b[3], c[3], n[3];
  for (int k = 0; k < 3; ++k) a[k] = X[1][k] - X[0][k], b[k] = X[2][k] - X[0][k], c[k] = X[2][k] - X[1][k];
  vec3_cross(a, b, n);
  const double len = sqrt(vec3_dot(n, n)), longest = fmax(vec3_dot(a, a), fmax(vec3_dot(b, b), vec3_dot(c, c)));
  *twice_area = len;
  const double wl = sqrt(vec3_dot(weft, weft));
  if (!(len > 1e-12 * longest) || !(wl > 0) || !isfinite(len) || !isfinite(wl)) return -1;
  for (int k = 0; k < 3; ++k) n[k] /= len;
  const double wn = vec3_dot(weft, n) / wl;
  double t[3];
  if (fabs(wn) > 1 - 1e-6) memcpy(t, a, sizeof(t)); /* the weft axis along the normal: the first edge */
  else
    for (int k = 0; k < 3; ++k) t[k] = weft[k] / wl - wn * n[k];
  const double tl = sqrt(vec3_dot(t, t));
  for (int k = 0; k < 3; ++k) e1[k] = t[k] / tl;
  vec3_cross(n, e1, e2);
  return 0;
}

int pbng_membrane_rest_shape(const double X[3][3], const double weft[3], pbng_membrane_rest *r)
{
  double e1[3], e2[3], twice_area, D[2][2];
  memset(r, 0, sizeof(*r));
  if (local_frame(X, weft, e1, e2, &twice_area)) return -1;
  for (int j = 0; j < 2; ++j) { /* Dm = [X1 - X0 | X2 - X0] in the local frame (columns) */
    double d[3];
    for (int k = 0; k < 3; ++k) d[k] = X[j + 1][k] - X[0][k];
    D[0][j] = vec3_dot(d, e1), D[1][j] = vec3_dot(d, e2);
  }
  const double det = D[0][0] * D[1][1] - D[0][1] * D[1][0];
  const double inv[2][2] = {{D[1][1] / det, -D[0][1] / det}, {-D[1][0] / det, D[0][0] / det}};
  /* F = Ds Dm^{-1}: g_1, g_2 the rows of Dm^{-1}, g_0 = -(g_1 + g_2) */
  for (int c = 0; c < 2; ++c) r->g[1][c] = inv[0][c], r->g[2][c] = inv[1][c], r->g[0][c] = -(inv[0][c] + inv[1][c]);
  r->area = 0.5 * twice_area;
  return 0;
}

/* ---- stress ---- */

void pbng_membrane_deformation(const double x[3][3], const pbng_membrane_rest *r, double F[3][2])
{
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 2; ++c) F[i][c] = x[0][i] * r->g[0][c] + x[1][i] * r->g[1][c] + x[2][i] * r->g[2][c];
}

double pbng_membrane_stress(const pbng_membrane_material *m, const double F[3][2], double S[2][2])
{
  double E[2][2];
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) E[a][b] = 0.5 * (F[0][a] * F[0][b] + F[1][a] * F[1][b] + F[2][a] * F[2][b] - (a == b));
  const double e[3] = {E[0][0], E[1][1], 2 * E[0][1]}; /* Voigt, engineering shear */
  double s[3];
  for (int i = 0; i < 3; ++i) s[i] = m->C[i][0] * e[0] + m->C[i][1] * e[1] + m->C[i][2] * e[2];
  S[0][0] = s[0], S[1][1] = s[1], S[0][1] = S[1][0] = s[2];
  return 0.5 * (e[0] * s[0] + e[1] * s[1] + e[2] * s[2]);
}

double pbng_membrane_energy(const pbng_membrane_material *m, const pbng_membrane_rest *r, const double x[3][3])
{
  double F[3][2], S[2][2];
  pbng_membrane_deformation(x, r, F);
  return m->thickness * r->area * pbng_membrane_stress(m, F, S);
}

double pbng_membrane_gradient(const pbng_membrane_material *m, const pbng_membrane_rest *r, const double x[3][3], double grad[3][3])
{
  double F[3][2], S[2][2], P[3][2];
  pbng_membrane_deformation(x, r, F);
  const double psi = pbng_membrane_stress(m, F, S), scale = m->thickness * r->area;
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 2; ++c) P[i][c] = F[i][0] * S[0][c] + F[i][1] * S[1][c]; /* Eq. 7: P = F S */
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < 3; ++i) grad[a][i] = scale * (P[i][0] * r->g[a][0] + P[i][1] * r->g[a][1]);
  return scale * psi;
}

/* ---- second derivatives ---- */

/* The positive part of a symmetric 2 x 2 matrix: its eigen decomposition with the negative eigenvalues
 * set to zero. */
static void positive_part(const double S[2][2], double Sp[2][2])
{
  const double mean = 0.5 * (S[0][0] + S[1][1]), half = 0.5 * (S[0][0] - S[1][1]);
  const double radius = sqrt(half * half + S[0][1] * S[0][1]);
  const double l1 = mean + radius, l2 = mean - radius; /* l1 >= l2 */
  if (l2 >= 0) {
    memcpy(Sp, S, sizeof(double) * 4);
    return;
  }
  memset(Sp, 0, sizeof(double) * 4);
  if (l1 <= 0) return;
  double v[2]; /* unit eigenvector of l1 */
  if (radius == 0) v[0] = 1, v[1] = 0;
  else if (half >= 0) {
    v[0] = half + radius, v[1] = S[0][1];
  } else {
    v[0] = S[0][1], v[1] = radius - half;
  }
  const double len = sqrt(v[0] * v[0] + v[1] * v[1]);
  v[0] /= len, v[1] /= len;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) Sp[i][j] = l1 * v[i] * v[j];
}

/* M = F B_a^T C B_b F^T (3 x 3, row-major): the material (Gauss-Newton) part of the (a, b) block. */
static void material_block(const pbng_membrane_material *m, const double F[3][2], const double ga[2], const double gb[2], double M[9])
{
  const double Ba[3][2] = {{ga[0], 0}, {0, ga[1]}, {ga[1], ga[0]}}, Bb[3][2] = {{gb[0], 0}, {0, gb[1]}, {gb[1], gb[0]}};
  double K[2][2]; /* B_a^T C B_b */
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 2; ++q) {
      double s = 0;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) s += Ba[i][p] * m->C[i][j] * Bb[j][q];
      K[p][q] = s;
    }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int p = 0; p < 2; ++p)
        for (int q = 0; q < 2; ++q) s += F[i][p] * K[p][q] * F[j][q];
      M[3 * i + j] = s;
    }
}

static double quadratic2(const double g[2], const double S[2][2], const double h[2])
{
  return g[0] * (S[0][0] * h[0] + S[0][1] * h[1]) + g[1] * (S[1][0] * h[0] + S[1][1] * h[1]);
}

void pbng_membrane_node_terms(const pbng_membrane_material *m, const pbng_membrane_rest *r, const double x[3][3], int a, double grad[3], double H[9])
{
  double F[3][2], S[2][2], Sp[2][2];
  pbng_membrane_deformation(x, r, F);
  pbng_membrane_stress(m, F, S);
  const double scale = m->thickness * r->area, *g = r->g[a];
  for (int i = 0; i < 3; ++i) /* P g_a with P = F S (Eq. 7) */
    grad[i] = scale * ((F[i][0] * S[0][0] + F[i][1] * S[1][0]) * g[0] + (F[i][0] * S[0][1] + F[i][1] * S[1][1]) * g[1]);
  if (!H) return;
  positive_part(S, Sp);
  material_block(m, F, g, g, H);
  const double geo = quadratic2(g, Sp, g);
  for (int k = 0; k < 9; ++k) H[k] = scale * (H[k] + (k % 4 == 0 ? geo : 0.0));
}

void pbng_membrane_node_block(const pbng_membrane_material *m, const pbng_membrane_rest *r, const double x[3][3], int a, double H[9])
{
  double grad[3];
  pbng_membrane_node_terms(m, r, x, a, grad, H);
}

void pbng_membrane_hessian(const pbng_membrane_material *m, const pbng_membrane_rest *r, const double x[3][3], double H[9][9])
{
  double F[3][2], S[2][2], M[9];
  pbng_membrane_deformation(x, r, F);
  pbng_membrane_stress(m, F, S);
  const double scale = m->thickness * r->area;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      material_block(m, F, r->g[a], r->g[b], M);
      const double geo = quadratic2(r->g[a], S, r->g[b]);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) H[3 * a + i][3 * b + j] = scale * (M[3 * i + j] + (i == j ? geo : 0.0));
    }
}
