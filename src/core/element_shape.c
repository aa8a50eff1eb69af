/* Shape functions of every element kind. The polynomial kinds are Lagrange bases on their reference
 * nodes: N_a(r) = sum_j C_ja m_j(r) over a monomial basis m (complete of degree p for the Pp
 * tetrahedra, tensor of degree q per axis for the Qq hexahedra, P1(r,s) x Q1(t) for the prism),
 * C = V^{-1} with the Vandermonde matrix V_bj = m_j(X_b), so that N_a(X_b) = delta_ab by
 * construction; evaluated by solving V^T N = m(r) (and V^T dN/dr_k = dm/dr_k). The pyramid's basis is
 * the rational one of Bedrosian (1992), as Gmsh's. */
#include "core/element.h"
#include <math.h>

/* The monomial exponents of kind t's basis: e[j] = {i, j, k} for r^i s^j t^k; returns their count. */
static int monomials(const pbng_element_type *t, int e[PBNG_MAX_ELEMENT_NODES][3])
{
  int n = 0;
  const int p = t->order;
  for (int k = 0; k <= p; ++k)
    for (int j = 0; j <= p; ++j)
      for (int i = 0; i <= p; ++i) {
        const int keep = t->shape == PBNG_SHAPE_TETRAHEDRON ? i + j + k <= p
                         : t->shape == PBNG_SHAPE_HEXAHEDRON ? 1
                         : t->shape == PBNG_SHAPE_TRIANGLE   ? i + j <= p && k == 0
                                                             : i + j <= p && k <= 1;
        if (keep) e[n][0] = i, e[n][1] = j, e[n][2] = k, ++n;
      }
  return n;
}

static double power(double x, int n) { return n == 0 ? 1.0 : n == 1 ? x : n == 2 ? x * x : x * x * x; }
static double dpower(double x, int n) { return n == 0 ? 0.0 : n == 1 ? 1.0 : n == 2 ? 2 * x : 3 * x * x; }

/* The monomials and their gradients at r: row 0 values, rows 1..3 d/dr, d/ds, d/dt. */
static void monomial_values(int n, const int e[][3], const double r[3], double m[4][PBNG_MAX_ELEMENT_NODES])
{
  for (int j = 0; j < n; ++j) {
    const double p0 = power(r[0], e[j][0]), p1 = power(r[1], e[j][1]), p2 = power(r[2], e[j][2]);
    m[0][j] = p0 * p1 * p2;
    m[1][j] = dpower(r[0], e[j][0]) * p1 * p2;
    m[2][j] = p0 * dpower(r[1], e[j][1]) * p2;
    m[3][j] = p0 * p1 * dpower(r[2], e[j][2]);
  }
}

/* Solves A X = B for the nrhs columns of B (in place, rows of length PBNG_MAX_ELEMENT_NODES) by
 * Gaussian elimination with partial pivoting; A (n x n) is overwritten. */
static void solve_dense(int n, double A[][PBNG_MAX_ELEMENT_NODES], int nrhs, double B[][PBNG_MAX_ELEMENT_NODES])
{
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int i = c + 1; i < n; ++i)
      if (fabs(A[i][c]) > fabs(A[piv][c])) piv = i;
    for (int k = 0; k < n; ++k) {
      const double tmp = A[c][k];
      A[c][k] = A[piv][k], A[piv][k] = tmp;
    }
    for (int h = 0; h < nrhs; ++h) {
      const double tmp = B[h][c];
      B[h][c] = B[h][piv], B[h][piv] = tmp;
    }
    for (int i = c + 1; i < n; ++i) {
      const double f = A[i][c] / A[c][c];
      for (int k = c; k < n; ++k) A[i][k] -= f * A[c][k];
      for (int h = 0; h < nrhs; ++h) B[h][i] -= f * B[h][c];
    }
  }
  for (int h = 0; h < nrhs; ++h)
    for (int i = n - 1; i >= 0; --i) {
      double s = B[h][i];
      for (int k = i + 1; k < n; ++k) s -= A[i][k] * B[h][k];
      B[h][i] = s / A[i][i];
    }
}

static void lagrange_shape(const pbng_element_type *t, const double r[3], double *N, double (*dN)[3])
{
  int e[PBNG_MAX_ELEMENT_NODES][3];
  double VT[PBNG_MAX_ELEMENT_NODES][PBNG_MAX_ELEMENT_NODES], m[4][PBNG_MAX_ELEMENT_NODES], node_m[4][PBNG_MAX_ELEMENT_NODES];
  const int n = monomials(t, e);
  for (int b = 0; b < n; ++b) { /* VT[j][b] = V_bj = m_j(X_b) */
    monomial_values(n, e, t->ref_nodes[b], node_m);
    for (int j = 0; j < n; ++j) VT[j][b] = node_m[0][j];
  }
  monomial_values(n, e, r, m);
  solve_dense(n, VT, 4, m);
  for (int a = 0; a < n; ++a) {
    N[a] = m[0][a];
    for (int k = 0; k < 3; ++k) dN[a][k] = m[1 + k][a];
  }
}

/* Bedrosian's pyramid: with D = 1 - t and (xi_a, eta_a) the base corner's signs,
 *   N_a = [(D + xi_a r)(D + eta_a s) + xi_a eta_a r s t / D] / (4 D)  (a = 0..3),  N_4 = t. */
static void pyramid_shape(const pbng_element_type *t, const double r[3], double *N, double (*dN)[3])
{
  const double x = r[0], y = r[1], z = r[2], D = 1.0 - z;
  for (int a = 0; a < 4; ++a) {
    const double xi = t->ref_nodes[a][0], eta = t->ref_nodes[a][1];
    const double num = (D + xi * x) * (D + eta * y) + xi * eta * x * y * z / D;
    const double dnum_dz = -(2 * D + xi * x + eta * y) + xi * eta * x * y / (D * D);
    N[a] = num / (4 * D);
    dN[a][0] = (xi * (D + eta * y) + xi * eta * y * z / D) / (4 * D);
    dN[a][1] = (eta * (D + xi * x) + xi * eta * x * z / D) / (4 * D);
    dN[a][2] = (dnum_dz * D + num) / (4 * D * D);
  }
  N[4] = z, dN[4][0] = 0, dN[4][1] = 0, dN[4][2] = 1;
}

void pbng_element_shape(const pbng_element_type *t, const double r[3], double *N, double (*dN)[3])
{
  if (t->shape == PBNG_SHAPE_PYRAMID) pyramid_shape(t, r, N, dN);
  else lagrange_shape(t, r, N, dN);
}
