#include "core/gpbd_strain.h"
#include <math.h>
#include <string.h>
#include "core/element.h"
#include "core/mat3.h"
#include "core/membrane.h"
#include "core/vec3.h"

/* ---- tetrahedron ---- */

int pbng_gpbd_tet_rest_shape(const double X[4][3], pbng_gpbd_tet_rest *r)
{
  double longest = 0;
  memset(r, 0, sizeof(*r));
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {
      double e[3];
      vec3_sub(X[b], X[a], e);
      longest = fmax(longest, vec3_norm(e));
    }
  double B[9];
  const double V = pbng_tet_rest_shape(X[0], X[1], X[2], X[3], B);
  if (!(6 * V > 1e-12 * longest * longest * longest) || !isfinite(V)) return -1;
  memcpy(r->B, B, sizeof(B));
  r->volume = V;
  return 0;
}

void pbng_gpbd_tet_deformation(const pbng_gpbd_tet_rest *r, const double x[4][3], double F[9])
{
  pbng_tet_deformation_gradient(x[0], x[1], x[2], x[3], r->B, F);
}

const int pbng_gpbd_green_entry[6][2] = {{0, 0}, {1, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 1}};

void pbng_gpbd_tet_strain(const pbng_gpbd_tet_rest *r, const double x[4][3], double s[6], double S[6][12])
{
  double F[9], C[9];
  pbng_gpbd_tet_deformation(r, x, F);
  mat3_tmul(F, F, C); /* F^T F */
  for (int k = 0; k < 6; ++k) {
    const int p = pbng_gpbd_green_entry[k][0], q = pbng_gpbd_green_entry[k][1];
    s[k] = 0.5 * (C[3 * p + q] - (p == q)); /* E = (F^T F - I) / 2 (Sec. 4.1) */
  }
  if (!S) return;
  for (int a = 0; a < 4; ++a) {
    double g[3];
    pbng_tet_shape_gradient(r->B, a, g); /* dF_jq / dx_aj = g_aq */
    for (int k = 0; k < 6; ++k) {
      const int p = pbng_gpbd_green_entry[k][0], q = pbng_gpbd_green_entry[k][1];
      for (int j = 0; j < 3; ++j) S[k][3 * a + j] = 0.5 * (g[p] * F[3 * j + q] + F[3 * j + p] * g[q]);
    }
  }
}

/* ---- cloth: first fundamental form ---- */

/* F = sum_a x_a g_a^T (3 x 2): its columns f_x, f_y. */
static void cloth_deformation(const pbng_gpbd_cloth_rest *r, const double (*x)[3], double fx[3], double fy[3])
{
  for (int i = 0; i < 3; ++i) {
    fx[i] = x[0][i] * r->g[0][0] + x[1][i] * r->g[1][0] + x[2][i] * r->g[2][0];
    fy[i] = x[0][i] * r->g[0][1] + x[1][i] * r->g[1][1] + x[2][i] * r->g[2][1];
  }
}

/* The in-plane measures of Eq. 22, h(I) = (s_x, s_a, s_y) of I = (I_xx, I_xy, I_yy), their Jacobian
 * dh[k][p] = dh_k / dI_p and, when d2h is given, d2h[k][p][q] = d^2 h_k / dI_p dI_q. */
static void membrane_measures(const double Iff[3], double h[3], double dh[3][3], double d2h[3][3][3])
{
  const double rx = sqrt(Iff[0]), ry = sqrt(Iff[2]), q = 1.0 / (rx * ry);
  h[0] = rx - 1, h[1] = Iff[1] * q, h[2] = ry - 1;
  memset(dh, 0, sizeof(double) * 9);
  dh[0][0] = 0.5 / rx;
  dh[2][2] = 0.5 / ry;
  dh[1][1] = q, dh[1][0] = -0.5 * Iff[1] * q / Iff[0], dh[1][2] = -0.5 * Iff[1] * q / Iff[2];
  if (!d2h) return;
  memset(d2h, 0, sizeof(double) * 27);
  d2h[0][0][0] = -0.25 / (Iff[0] * rx);
  d2h[2][2][2] = -0.25 / (Iff[2] * ry);
  d2h[1][1][0] = d2h[1][0][1] = -0.5 * q / Iff[0];
  d2h[1][1][2] = d2h[1][2][1] = -0.5 * q / Iff[2];
  d2h[1][0][0] = 0.75 * Iff[1] * q / (Iff[0] * Iff[0]);
  d2h[1][2][2] = 0.75 * Iff[1] * q / (Iff[2] * Iff[2]);
  d2h[1][0][2] = d2h[1][2][0] = 0.25 * Iff[1] * q / (Iff[0] * Iff[2]);
}

/* dI_p / dx_a (a = 0..2): dI_xx = 2 g_ax f_x, dI_xy = g_ax f_y + g_ay f_x, dI_yy = 2 g_ay f_y. */
static void first_form_gradient(const pbng_gpbd_cloth_rest *r, const double fx[3], const double fy[3], double dI[3][9])
{
  for (int a = 0; a < 3; ++a)
    for (int j = 0; j < 3; ++j) {
      const double gx = r->g[a][0], gy = r->g[a][1];
      dI[0][3 * a + j] = 2 * gx * fx[j];
      dI[1][3 * a + j] = gx * fy[j] + gy * fx[j];
      dI[2][3 * a + j] = 2 * gy * fy[j];
    }
}

/* ---- cloth: second fundamental form (mid-edge normals) ---- */

/* c = (xi - xj) . m of the mid-edge normal m = (n + n') / |n + n'| of edge (xj, xk), n the unit normal of
 * (xi, xj, xk) and n' that of (xk, xj, p); and, when G is given, dc/d(xi, xj, xk, p) in G[0..3].
 * Derivatives: dm = (I - m m^T) du / |u| with u = n + n', dn = (I - n n^T) dN / |N| for N = e1 x e2,
 * and b . dN = de1 . (e2 x b) + de2 . (b x e1). */
static double midedge_coefficient(const double xi[3], const double xj[3], const double xk[3], const double p[3], double G[4][3])
{
  double e1[3], e2[3], f1[3], f2[3], N[3], Nn[3], n[3], nn[3], u[3], m[3], r[3];
  if (G) memset(G, 0, sizeof(double) * 12);
  vec3_sub(xj, xi, e1), vec3_sub(xk, xi, e2), vec3_cross(e1, e2, N);
  vec3_sub(xj, xk, f1), vec3_sub(p, xk, f2), vec3_cross(f1, f2, Nn);
  const double ln = vec3_norm(N), lnn = vec3_norm(Nn);
  if (!(ln > 0) || !(lnn > 0)) return 0.0;
  for (int k = 0; k < 3; ++k) n[k] = N[k] / ln, nn[k] = Nn[k] / lnn, u[k] = n[k] + nn[k];
  const double lu = vec3_norm(u);
  if (!(lu > 1e-12)) return 0.0; /* folded onto itself: no mid-edge normal */
  for (int k = 0; k < 3; ++k) m[k] = u[k] / lu;
  vec3_sub(xi, xj, r);
  const double c = vec3_dot(r, m);
  if (!G) return c;
  double a[3], b[3], bb[3], t1[3], t2[3];
  for (int k = 0; k < 3; ++k) a[k] = (r[k] - c * m[k]) / lu; /* r . dm = a . du */
  const double an = vec3_dot(a, n), ann = vec3_dot(a, nn);
  for (int k = 0; k < 3; ++k) b[k] = (a[k] - an * n[k]) / ln, bb[k] = (a[k] - ann * nn[k]) / lnn;
  vec3_cross(e2, b, t1), vec3_cross(b, e1, t2); /* N = (xj - xi) x (xk - xi) */
  for (int k = 0; k < 3; ++k) G[1][k] += t1[k], G[2][k] += t2[k], G[0][k] -= t1[k] + t2[k];
  vec3_cross(f2, bb, t1), vec3_cross(bb, f1, t2); /* N' = (xj - xk) x (p - xk) */
  for (int k = 0; k < 3; ++k) G[1][k] += t1[k], G[3][k] += t2[k], G[2][k] -= t1[k] + t2[k];
  for (int k = 0; k < 3; ++k) G[0][k] += m[k], G[1][k] -= m[k]; /* d(xi - xj) . m */
  return c;
}

/* II = 2 sum_i c_i g_i g_i^T as (xx, xy, yy) and, when dII is given, its Jacobian (3 x 18). */
static void second_form(const pbng_gpbd_cloth_rest *r, const double x[6][3], double II[3], double dII[3][18])
{
  II[0] = II[1] = II[2] = 0;
  if (dII) memset(dII, 0, sizeof(double) * 54);
  for (int i = 0; i < 3; ++i) {
    if (!r->neighbour[i]) continue; /* a free edge: m_i = n, c_i = 0 */
    const int j = (i + 1) % 3, k = (i + 2) % 3, node[4] = {i, j, k, 3 + i};
    double G[4][3];
    const double c = midedge_coefficient(x[i], x[j], x[k], x[3 + i], dII ? G : NULL);
    const double gx = r->g[i][0], gy = r->g[i][1], wgt[3] = {2 * gx * gx, 2 * gx * gy, 2 * gy * gy};
    for (int p = 0; p < 3; ++p) II[p] += wgt[p] * c;
    if (!dII) continue;
    for (int p = 0; p < 3; ++p)
      for (int v = 0; v < 4; ++v)
        for (int l = 0; l < 3; ++l) dII[p][3 * node[v] + l] += wgt[p] * G[v][l];
  }
}

int pbng_gpbd_cloth_rest_shape(const double X[6][3], const int neighbour[3], const double weft[3], pbng_gpbd_cloth_rest *r)
{
  pbng_membrane_rest mr;
  memset(r, 0, sizeof(*r));
  if (pbng_membrane_rest_shape(X, weft, &mr)) return -1; /* X[0..2]: the triangle */
  memcpy(r->g, mr.g, sizeof(r->g));
  r->area = mr.area;
  double l = 0;
  for (int i = 0; i < 3; ++i) {
    double e[3];
    vec3_sub(X[(i + 1) % 3], X[i], e);
    l += vec3_norm(e) / 3;
  }
  r->l2 = l * l;
  for (int i = 0; i < 3; ++i) r->neighbour[i] = neighbour[i] != 0;
  double II[3];
  second_form(r, X, II, NULL);
  memcpy(r->II0, II, sizeof(II));
  return 0;
}

void pbng_gpbd_cloth_fundamental_forms(const pbng_gpbd_cloth_rest *r, const double x[6][3], double first[3], double second[3])
{
  double fx[3], fy[3];
  cloth_deformation(r, x, fx, fy);
  first[0] = vec3_dot(fx, fx), first[1] = vec3_dot(fx, fy), first[2] = vec3_dot(fy, fy);
  second_form(r, x, second, NULL);
}

void pbng_gpbd_cloth_membrane_strain(const pbng_gpbd_cloth_rest *r, const double (*x)[3], double s[3], double S[3][9])
{
  double fx[3], fy[3], Iff[3], dh[3][3], dI[3][9];
  cloth_deformation(r, x, fx, fy);
  Iff[0] = vec3_dot(fx, fx), Iff[1] = vec3_dot(fx, fy), Iff[2] = vec3_dot(fy, fy);
  membrane_measures(Iff, s, dh, NULL); /* Eq. 22 */
  if (!S) return;
  first_form_gradient(r, fx, fy, dI);
  for (int k = 0; k < 3; ++k)
    for (int v = 0; v < 9; ++v) S[k][v] = dh[k][0] * dI[0][v] + dh[k][1] * dI[1][v] + dh[k][2] * dI[2][v];
}

void pbng_gpbd_cloth_strain(const pbng_gpbd_cloth_rest *r, const double x[6][3], double s[6], double S[6][18])
{
  double II[3], dII[3][18], Sm[3][9];
  pbng_gpbd_cloth_membrane_strain(r, x, s, S ? Sm : NULL);
  second_form(r, x, II, S ? dII : NULL);
  for (int k = 0; k < 3; ++k) s[3 + k] = r->l2 * (II[k] - r->II0[k]); /* the seed's l^2 II (Sec. 4.2) */
  if (!S) return;
  memset(S, 0, sizeof(double) * 108);
  for (int k = 0; k < 3; ++k) memcpy(S[k], Sm[k], sizeof(Sm[k]));
  for (int k = 0; k < 3; ++k)
    for (int v = 0; v < 18; ++v) S[3 + k][v] = r->l2 * dII[k][v];
}

void pbng_gpbd_cloth_membrane_curvature_block(const pbng_gpbd_cloth_rest *r, const double x[6][3], const double c[3], int a, double B[9])
{
  double fx[3], fy[3], Iff[3], h[3], dh[3][3], d2h[3][3][3], beta[3] = {0, 0, 0}, gamma[3][3] = {{0}}, dI[3][3];
  cloth_deformation(r, x, fx, fy);
  Iff[0] = vec3_dot(fx, fx), Iff[1] = vec3_dot(fx, fy), Iff[2] = vec3_dot(fy, fy);
  membrane_measures(Iff, h, dh, d2h);
  for (int k = 0; k < 3; ++k)
    for (int p = 0; p < 3; ++p) {
      beta[p] += c[k] * dh[k][p];
      for (int q = 0; q < 3; ++q) gamma[p][q] += c[k] * d2h[k][p][q];
    }
  const double gx = r->g[a][0], gy = r->g[a][1];
  for (int j = 0; j < 3; ++j) /* dI_p / dx_aj (first_form_gradient's column of corner a) */
    dI[0][j] = 2 * gx * fx[j], dI[1][j] = gx * fy[j] + gy * fx[j], dI[2][j] = 2 * gy * fy[j];
  const double curv = beta[0] * 2 * gx * gx + beta[1] * 2 * gx * gy + beta[2] * 2 * gy * gy;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double v = i == j ? curv : 0.0;
      for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q) v += gamma[p][q] * dI[p][i] * dI[q][j];
      B[3 * i + j] = v;
    }
}

void pbng_gpbd_cloth_membrane_curvature(const pbng_gpbd_cloth_rest *r, const double x[6][3], const double c[3], double H[18][18])
{
  double fx[3], fy[3], Iff[3], h[3], dh[3][3], d2h[3][3][3], dI[3][9], beta[3] = {0, 0, 0}, gamma[3][3] = {{0}};
  cloth_deformation(r, x, fx, fy);
  Iff[0] = vec3_dot(fx, fx), Iff[1] = vec3_dot(fx, fy), Iff[2] = vec3_dot(fy, fy);
  membrane_measures(Iff, h, dh, d2h);
  first_form_gradient(r, fx, fy, dI);
  for (int k = 0; k < 3; ++k)
    for (int p = 0; p < 3; ++p) {
      beta[p] += c[k] * dh[k][p];
      for (int q = 0; q < 3; ++q) gamma[p][q] += c[k] * d2h[k][p][q];
    }
  /* sum_k c_k d^2 h_k(Iff(x)) = sum_p beta_p d^2 I_p + sum_pq gamma_pq dI_p dI_q^T, with
   * d^2 I_p / dx_a dx_b = (2 g_ax g_bx, g_ax g_by + g_ay g_bx, 2 g_ay g_by)_p I_3 */
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      const double *ga = r->g[a], *gb = r->g[b];
      const double curv = beta[0] * 2 * ga[0] * gb[0] + beta[1] * (ga[0] * gb[1] + ga[1] * gb[0]) + beta[2] * 2 * ga[1] * gb[1];
      for (int i = 0; i < 3; ++i) {
        H[3 * a + i][3 * b + i] += curv;
        for (int j = 0; j < 3; ++j) {
          double v = 0;
          for (int p = 0; p < 3; ++p)
            for (int q = 0; q < 3; ++q) v += gamma[p][q] * dI[p][3 * a + i] * dI[q][3 * b + j];
          H[3 * a + i][3 * b + j] += v;
        }
      }
    }
}

/* ---- cloth: the II rows' second derivatives ---- */

/* K = [v]x, K w = v x w. */
static void skew(const double v[3], double K[3][3])
{
  K[0][0] = 0, K[0][1] = -v[2], K[0][2] = v[1];
  K[1][0] = v[2], K[1][1] = 0, K[1][2] = -v[0];
  K[2][0] = -v[1], K[2][1] = v[0], K[2][2] = 0;
}

/* J[:, 3 node + (0..2)] += sign K (J 3 x 12). */
static void add_block(double J[3][12], int node, double sign, double K[3][3])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) J[i][3 * node + j] += sign * K[i][j];
}

/* The Jacobian (3 x 12) of N = e1 x e2 with e1 = x_p1 - x_q, e2 = x_p2 - x_q (nodes of the 4-node stencil):
 * dN = -[e2]x de1 + [e1]x de2. */
static void cross_jacobian(const double e1[3], const double e2[3], int p1, int p2, int q, double J[3][12])
{
  double K1[3][3], K2[3][3];
  memset(J, 0, sizeof(double) * 36);
  skew(e1, K1), skew(e2, K2);
  add_block(J, p1, -1.0, K2), add_block(J, q, 1.0, K2);
  add_block(J, p2, 1.0, K1), add_block(J, q, -1.0, K1);
}

/* Jn = (I - n n^T) / len J (the unit vector n = N / len of N's Jacobian). */
static void normalised_jacobian(const double n[3], double len, double J[3][12], double Jn[3][12])
{
  for (int v = 0; v < 12; ++v) {
    const double nj = n[0] * J[0][v] + n[1] * J[1][v] + n[2] * J[2][v];
    for (int i = 0; i < 3; ++i) Jn[i][v] = (J[i][v] - n[i] * nj) / len;
  }
}

/* H += J^T T J with T = sum_k w_k d^2 m_k / du^2 of m = u / |u| at |u| = len:
 * T_ab = (-w_a m_b - w_b m_a - (w.m) delta_ab + 3 (w.m) m_a m_b) / len^2. */
static void add_normalisation_curvature(const double m[3], double len, const double w[3], double J[3][12], double H[12][12])
{
  const double wm = vec3_dot(w, m);
  double T[3][3], TJ[3][12];
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) T[a][b] = (-w[a] * m[b] - w[b] * m[a] - (a == b) * wm + 3 * wm * m[a] * m[b]) / (len * len);
  for (int a = 0; a < 3; ++a)
    for (int v = 0; v < 12; ++v) TJ[a][v] = T[a][0] * J[0][v] + T[a][1] * J[1][v] + T[a][2] * J[2][v];
  for (int u = 0; u < 12; ++u)
    for (int v = 0; v < 12; ++v) H[u][v] += J[0][u] * TJ[0][v] + J[1][u] * TJ[1][v] + J[2][u] * TJ[2][v];
}

/* H += the Hessian of b . (e1 x e2), e1 = x_p1 - x_q, e2 = x_p2 - x_q: b . (de1 x de2') = de1^T M de2' with
 * M = -[b]x, symmetrised over the two arguments. */
static void add_cross_curvature(const double b[3], int p1, int p2, int q, double H[12][12])
{
  const int n1[2] = {p1, q}, n2[2] = {p2, q};
  const double s[2] = {1.0, -1.0};
  double M[3][3];
  skew(b, M);
  for (int A = 0; A < 2; ++A)
    for (int B = 0; B < 2; ++B)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const double v = -s[A] * s[B] * M[i][j];
          H[3 * n1[A] + i][3 * n2[B] + j] += v;
          H[3 * n2[B] + j][3 * n1[A] + i] += v;
        }
}

/* The Hessian (12 x 12, nodes xi xj xk p as in midedge_coefficient) of c = (xi - xj) . m, exact: with
 * u = n + n', a = (I - m m^T) r / |u| and b, b' the same for n, n' (midedge_coefficient's),
 *   d2c = Jr^T Jm + Jm^T Jr + Ju^T T_m(r) Ju + JN^T T_n(a) JN + JN'^T T_n'(a) JN' + d2(b . N) + d2(b' . N'),
 * T_v(w) = sum_k w_k d^2 v_k / d(unnormalised)^2 (add_normalisation_curvature). Zero where c is (no normal,
 * folded edge). */
static void midedge_hessian(const double xi[3], const double xj[3], const double xk[3], const double p[3], double H[12][12])
{
  double e1[3], e2[3], f1[3], f2[3], N[3], Nn[3], n[3], nn[3], u[3], m[3], r[3];
  memset(H, 0, sizeof(double) * 144);
  vec3_sub(xj, xi, e1), vec3_sub(xk, xi, e2), vec3_cross(e1, e2, N);
  vec3_sub(xj, xk, f1), vec3_sub(p, xk, f2), vec3_cross(f1, f2, Nn);
  const double ln = vec3_norm(N), lnn = vec3_norm(Nn);
  if (!(ln > 0) || !(lnn > 0)) return;
  for (int k = 0; k < 3; ++k) n[k] = N[k] / ln, nn[k] = Nn[k] / lnn, u[k] = n[k] + nn[k];
  const double lu = vec3_norm(u);
  if (!(lu > 1e-12)) return;
  for (int k = 0; k < 3; ++k) m[k] = u[k] / lu;
  vec3_sub(xi, xj, r);
  const double c = vec3_dot(r, m);
  double JN[3][12], JNn[3][12], Jn[3][12], Jnn[3][12], Ju[3][12], Jm[3][12], a[3], b[3], bb[3];
  cross_jacobian(e1, e2, 1, 2, 0, JN);   /* N = (xj - xi) x (xk - xi) */
  cross_jacobian(f1, f2, 1, 3, 2, JNn);  /* N' = (xj - xk) x (p - xk) */
  normalised_jacobian(n, ln, JN, Jn);
  normalised_jacobian(nn, lnn, JNn, Jnn);
  for (int i = 0; i < 3; ++i)
    for (int v = 0; v < 12; ++v) Ju[i][v] = Jn[i][v] + Jnn[i][v];
  normalised_jacobian(m, lu, Ju, Jm);
  for (int k = 0; k < 3; ++k) a[k] = (r[k] - c * m[k]) / lu;
  const double an = vec3_dot(a, n), ann = vec3_dot(a, nn);
  for (int k = 0; k < 3; ++k) b[k] = (a[k] - an * n[k]) / ln, bb[k] = (a[k] - ann * nn[k]) / lnn;
  for (int i = 0; i < 3; ++i) /* Jr^T Jm + Jm^T Jr, Jr = (I, -I, 0, 0) */
    for (int v = 0; v < 12; ++v) {
      H[i][v] += Jm[i][v], H[3 + i][v] -= Jm[i][v];
      H[v][i] += Jm[i][v], H[v][3 + i] -= Jm[i][v];
    }
  add_normalisation_curvature(m, lu, r, Ju, H);
  add_normalisation_curvature(n, ln, a, JN, H);
  add_normalisation_curvature(nn, lnn, a, JNn, H);
  add_cross_curvature(b, 1, 2, 0, H);
  add_cross_curvature(bb, 1, 3, 2, H);
}

void pbng_gpbd_cloth_bending_curvature(const pbng_gpbd_cloth_rest *r, const double x[6][3], const double c[3], double H[18][18])
{
  for (int i = 0; i < 3; ++i) {
    if (!r->neighbour[i]) continue;
    const int j = (i + 1) % 3, k = (i + 2) % 3, node[4] = {i, j, k, 3 + i};
    const double gx = r->g[i][0], gy = r->g[i][1];
    /* s_{3+p} = l^2 II_p, II_p = sum_i wgt_p(i) c_i: the edge's weight in sum_p c_p d^2 s_{3+p} */
    const double w = r->l2 * (c[0] * 2 * gx * gx + c[1] * 2 * gx * gy + c[2] * 2 * gy * gy);
    if (w == 0.0) continue;
    double Hc[12][12];
    midedge_hessian(x[i], x[j], x[k], x[3 + i], Hc);
    for (int A = 0; A < 4; ++A)
      for (int B = 0; B < 4; ++B)
        for (int p = 0; p < 3; ++p)
          for (int q = 0; q < 3; ++q) H[3 * node[A] + p][3 * node[B] + q] += w * Hc[3 * A + p][3 * B + q];
  }
}
