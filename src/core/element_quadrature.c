/* Quadrature rules of the element kinds, each exact for polynomials up to the degree its type states
 * (docs/high_order.md): the energy of an order-p element with a linear material needs degree 2(p-1)
 * on tetrahedra, and tensor Gauss rules with p+1 points per axis on hexahedra. */
#include "core/element.h"
#include <math.h>

/* Gauss-Legendre on [-1, 1] with n = 2 or 3 points: point i and weight. */
static void gauss_legendre(int n, int i, double *x, double *w)
{
  if (n == 2) {
    *x = (i == 0 ? -1.0 : 1.0) / sqrt(3.0), *w = 1.0;
  } else {
    static const double x3[3] = {-0.774596669241483377, 0.0, 0.774596669241483377}, w3[3] = {5.0 / 9, 8.0 / 9, 5.0 / 9};
    *x = x3[i], *w = w3[i];
  }
}

/* Tetrahedron rules (reference volume 1/6). One point (degree 1); four points (degree 2); the
 * 14-point rule of degree 5 with positive weights (Walkington 2000): 4 + 4 points (a, a, a) with
 * their permutations and 6 points with barycentric coordinates (c, c, 1/2 - c, 1/2 - c). */
static void tet_rule(int npoints, int q, double r[3], double *w)
{
  if (npoints == 1) {
    r[0] = r[1] = r[2] = 0.25, *w = 1.0 / 6;
    return;
  }
  if (npoints == 4) {
    const double a = 0.585410196624968500, b = 0.138196601125010500;
    r[0] = r[1] = r[2] = b;
    if (q > 0) r[q - 1] = a;
    *w = 1.0 / 24;
    return;
  }
  static const double a[2] = {0.0927352503108912264, 0.3108859192633006097}, wa[2] = {0.0122488405193936582, 0.0187813209530026417};
  static const double c = 0.0455037041256496494, wc = 0.0070910034628469110;
  if (q < 8) {
    const double s = a[q / 4];
    r[0] = r[1] = r[2] = s;
    if (q % 4 > 0) r[q % 4 - 1] = 1 - 3 * s;
    *w = wa[q / 4];
    return;
  }
  static const int pairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}; /* barycentric slots holding c */
  double lambda[4];
  for (int k = 0; k < 4; ++k) lambda[k] = 0.5 - c;
  lambda[pairs[q - 8][0]] = c, lambda[pairs[q - 8][1]] = c;
  r[0] = lambda[1], r[1] = lambda[2], r[2] = lambda[3], *w = wc;
}

/* Hexahedra: n x n x n Gauss points, r fastest. */
static void hex_rule(int n, int q, double r[3], double *w)
{
  double w0, w1, w2;
  gauss_legendre(n, q % n, &r[0], &w0);
  gauss_legendre(n, (q / n) % n, &r[1], &w1);
  gauss_legendre(n, q / (n * n), &r[2], &w2);
  *w = w0 * w1 * w2;
}

/* Prism: the triangle's 3-point rule (degree 2) times 2 Gauss points in t. */
static void prism_rule(int q, double r[3], double *w)
{
  static const double tri[3][2] = {{1.0 / 6, 1.0 / 6}, {2.0 / 3, 1.0 / 6}, {1.0 / 6, 2.0 / 3}};
  double wt;
  gauss_legendre(2, q / 3, &r[2], &wt);
  r[0] = tri[q % 3][0], r[1] = tri[q % 3][1], *w = wt / 6;
}

/* Pyramid: the cube [-1,1]^2 x [0,1] collapsed onto it, x = xi (1 - t), y = eta (1 - t), with 2 x 2
 * Gauss points in (xi, eta) and 3 in t (on [0,1], weight times the map's (1 - t)^2): exact for
 * polynomials of degree 3. */
static void pyramid_rule(int q, double r[3], double *w)
{
  double xi, eta, z, wx, wy, wz;
  gauss_legendre(2, q % 2, &xi, &wx);
  gauss_legendre(2, (q / 2) % 2, &eta, &wy);
  gauss_legendre(3, q / 4, &z, &wz);
  const double t = 0.5 * (z + 1), D = 1 - t;
  r[0] = xi * D, r[1] = eta * D, r[2] = t;
  *w = wx * wy * 0.5 * wz * D * D;
}

void pbng_element_quadrature(const pbng_element_type *t, int q, double r[3], double *w)
{
  switch (t->shape) {
  case PBNG_SHAPE_TETRAHEDRON: tet_rule(t->quad_points, q, r, w); break;
  case PBNG_SHAPE_HEXAHEDRON: hex_rule(t->order + 1, q, r, w); break;
  case PBNG_SHAPE_PRISM: prism_rule(q, r, w); break;
  case PBNG_SHAPE_PYRAMID: pyramid_rule(q, r, w); break;
  case PBNG_SHAPE_TRIANGLE: r[0] = r[1] = 1.0 / 3, r[2] = 0, *w = 0.5; break; /* the centroid (a tri3's F is constant) */
  case PBNG_SHAPE_STENCIL: break;                                            /* no rule: bending is not integrated */
  }
}
