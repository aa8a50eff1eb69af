#include "core/inversion.h"
#include <math.h>
#include <string.h>
#include "core/mat3.h"
#include "core/vec3.h"

/* Eigen decomposition of the symmetric A (row-major) by cyclic Jacobi rotations: A = V diag(w) V^T, the
 * columns of V the eigenvectors. */
static void symmetric_eigen3(const double A[9], double w[3], double V[9])
{
  double a[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) a[i][j] = A[3 * i + j], V[3 * i + j] = i == j;
  for (int sweep = 0; sweep < 60; ++sweep) {
    const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
    const double diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
    if (off <= 1e-34 * diag || off == 0) break;
    for (int p = 0; p < 2; ++p)
      for (int q = p + 1; q < 3; ++q) {
        if (a[p][q] == 0) continue;
        const double theta = 0.5 * (a[q][q] - a[p][p]) / a[p][q];
        const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1)), c = 1 / sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; ++k) { /* a <- a J (columns p, q) */
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq, a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; ++k) { /* a <- J^T a (rows p, q) */
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk, a[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          const double vkp = V[3 * k + p], vkq = V[3 * k + q];
          V[3 * k + p] = c * vkp - s * vkq, V[3 * k + q] = s * vkp + c * vkq;
        }
      }
  }
  for (int i = 0; i < 3; ++i) w[i] = a[i][i];
}

static void column(const double M[9], int c, double v[3]) { v[0] = M[c], v[1] = M[3 + c], v[2] = M[6 + c]; }
static void set_column(double M[9], int c, const double v[3]) { M[c] = v[0], M[3 + c] = v[1], M[6 + c] = v[2]; }
/* A unit vector orthogonal to the unit vector a. */
static void orthogonal_unit(const double a[3], double b[3])
{
  const double e[3] = {fabs(a[0]) < 0.6 ? 1.0 : 0.0, fabs(a[0]) < 0.6 ? 0.0 : 1.0, 0.0};
  vec3_cross(a, e, b);
  const double n = sqrt(vec3_dot(b, b));
  for (int k = 0; k < 3; ++k) b[k] /= n;
}

void pbng_svd3_rotations(const double F[9], double U[9], double s[3], double V[9])
{
  double C[9], w[3], Vj[9];
  mat3_tmul(F, F, C); /* F^T F */
  symmetric_eigen3(C, w, Vj);
  int order[3] = {0, 1, 2}; /* decreasing eigenvalues */
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      if (w[order[j]] > w[order[i]]) {
        const int t = order[i];
        order[i] = order[j], order[j] = t;
      }
  for (int i = 0; i < 3; ++i) {
    double v[3];
    column(Vj, order[i], v);
    set_column(V, i, v);
    s[i] = sqrt(fmax(w[order[i]], 0.0));
  }
  double v0[3], v1[3], v2[3];
  column(V, 0, v0), column(V, 1, v1);
  vec3_cross(v0, v1, v2); /* V a rotation */
  set_column(V, 2, v2);
  /* U's columns F v_i / s_i, completed where s_i is (near) zero */
  double u[3][3];
  const double scale = s[0] > 0 ? s[0] : 1.0;
  for (int i = 0; i < 2; ++i) {
    double v[3];
    column(V, i, v);
    for (int r = 0; r < 3; ++r) u[i][r] = F[3 * r] * v[0] + F[3 * r + 1] * v[1] + F[3 * r + 2] * v[2];
    const double n = sqrt(vec3_dot(u[i], u[i]));
    s[i] = i == 0 ? n : fmin(n, s[0]); /* |F v_i|: exact to round-off where sqrt(w_i) is not (w_i ~ eps s0^2) */
    if (n > 1e-12 * scale) {
      for (int r = 0; r < 3; ++r) u[i][r] /= n;
      if (i == 1) { /* re-orthogonalise against u0 */
        const double d = vec3_dot(u[0], u[1]);
        for (int r = 0; r < 3; ++r) u[1][r] -= d * u[0][r];
        const double m = sqrt(vec3_dot(u[1], u[1]));
        for (int r = 0; r < 3; ++r) u[1][r] /= m;
      }
    } else if (i == 0) {
      u[0][0] = 1, u[0][1] = 0, u[0][2] = 0;
    } else {
      orthogonal_unit(u[0], u[1]);
    }
  }
  vec3_cross(u[0], u[1], u[2]); /* U a rotation */
  for (int i = 0; i < 3; ++i) set_column(U, i, u[i]);
  /* the third singular value with its sign: u2 . F v2 (negative when det F < 0) */
  double Fv2[3];
  for (int r = 0; r < 3; ++r) Fv2[r] = F[3 * r] * v2[0] + F[3 * r + 1] * v2[1] + F[3 * r + 2] * v2[2];
  s[2] = vec3_dot(u[2], Fv2);
}

/* The clamped stretches t of F = U diag(s) V^T (each s_i below PBNG_STVK_CLAMP_STRETCH replaced by it) and
 * their Green strains e_i = (t_i^2 - 1) / 2; returns tr E. */
static double clamped_strains(const double F[9], double U[9], double V[9], double t[3], double e[3])
{
  double s[3], tr = 0;
  pbng_svd3_rotations(F, U, s, V);
  for (int i = 0; i < 3; ++i) t[i] = s[i] < PBNG_STVK_CLAMP_STRETCH ? PBNG_STVK_CLAMP_STRETCH : s[i];
  for (int i = 0; i < 3; ++i) e[i] = 0.5 * (t[i] * t[i] - 1), tr += e[i];
  return tr;
}

double pbng_stvk_energy_inversion_safe(double mu, double lambda, const double F[9], double P[9])
{
  double U[9], V[9], t[3], e[3], ph[3];
  const double tr = clamped_strains(F, U, V, t, e);
  if (P) {
    for (int i = 0; i < 3; ++i) ph[i] = t[i] * (2 * mu * e[i] + lambda * tr);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) P[3 * r + c] = U[3 * r] * ph[0] * V[3 * c] + U[3 * r + 1] * ph[1] * V[3 * c + 1] + U[3 * r + 2] * ph[2] * V[3 * c + 2];
  }
  return mu * (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]) + 0.5 * lambda * tr * tr;
}
