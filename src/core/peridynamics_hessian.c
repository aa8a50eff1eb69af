#include "core/peridynamics_hessian.h"
#include <math.h>
#include <string.h>
#include "core/mat3.h"
#include "core/vec3.h"

enum { NODES_MAX = PBNG_PD_MAX_RING + 1 };

/* ---- d^2 Psi / dF^2 (Eq. 36-41) ---- */

/* Neo-Hookean, Eq. 36-37: P = 2 s0 F + v(J) F^-T, v = 2 s1 (J - 1) J - 2 s0, dJ = J F^-T : dF,
 * d F^-T_ab = -F^-1_bc dF_cd F^-1_da. */
static void neo_hookean_stress_derivative(double s0, double s1, const double F[9], double D[81])
{
  double Finv[9] = {0};
  const double J = mat3_inverse(F, Finv);
  const double v = 2.0 * s1 * (J - 1.0) * J - 2.0 * s0, Jdv = J * 2.0 * s1 * (2.0 * J - 1.0);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c)
        for (int d = 0; d < 3; ++d)
          D[9 * (3 * a + b) + 3 * c + d] =
              2.0 * s0 * (a == c) * (b == d) + Jdv * Finv[3 * b + a] * Finv[3 * d + c] - v * Finv[3 * b + c] * Finv[3 * d + a];
}

/* Stretching A_3, Eq. 39-41: P = s0/3 (F F^T F - G G^T G), G = F^-T (G G^T G = F^-T C^-1), each a product
 * of three factors differentiated in turn, dG_ab = -G_ad dF_cd G_cb. */
static void stretching_stress_derivative(double s0, const double F[9], double D[81])
{
  double Finv[9] = {0}, G[9] = {0}, C[9] = {0}, B[9] = {0}, Cinv[9] = {0}, Binv[9] = {0}, GCinv[9] = {0};
  mat3_inverse(F, Finv);
  mat3_transpose(Finv, G);
  mat3_tmul(F, F, C);        /* C = F^T F */
  mat3_tmul(Finv, Finv, Binv); /* G G^T = F^-T F^-1 = (F F^T)^-1 */
  mat3_tmul(G, G, Cinv);     /* G^T G = F^-1 F^-T = C^-1 */
  mat3_mul(G, Cinv, GCinv);  /* G G^T G */
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += F[3 * a + k] * F[3 * c + k];
      B[3 * a + c] = s; /* F F^T */
    }
  const double w = s0 / 3.0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c)
        for (int d = 0; d < 3; ++d) {
          const double FC = (a == c) * C[3 * d + b] + F[3 * a + d] * F[3 * c + b] + B[3 * a + c] * (b == d);
          const double GG = G[3 * a + d] * GCinv[3 * c + b] + Binv[3 * a + c] * Cinv[3 * d + b] + GCinv[3 * a + d] * G[3 * c + b];
          D[9 * (3 * a + b) + 3 * c + d] = w * (FC + GG); /* d(-G G^T G) = +(the three terms above) */
        }
}

void pbng_pd_stress_derivative(const pbng_pd_material *m, const double F[9], double dPdF[81])
{
  if (m->kind == PBNG_PD_NEOHOOKEAN)
    neo_hookean_stress_derivative(m->s0, m->s1, F, dPdF);
  else
    stretching_stress_derivative(m->s0, F, dPdF);
}

/* ---- the one-ring's F as an affine map of the positions (Eq. 15, y_perp fixed) ---- */

/* g[p] with dF = sum_p dy_p g[p]^T: g[1 + j] = omega_j K^-T xi_j, g[0] = -sum_j g[1 + j] (node 0 is y_i). */
static void deformation_gradient_jacobian(const pbng_pd_rest *r, double (*g)[3])
{
  g[0][0] = g[0][1] = g[0][2] = 0;
  for (int j = 0; j < r->n; ++j)
    for (int b = 0; b < 3; ++b) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += r->bond[j][k] * r->K_inv[3 * k + b];
      g[1 + j][b] = r->omega[j] * s;
      g[0][b] -= g[1 + j][b];
    }
}

/* F of Eq. 15 with the given y_perp, or the deformed fan's (Eq. 13) when y_perp is NULL; -1 when the latter
 * is degenerate. */
static int deformation_gradient_fixed_normal(const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3], const double y_perp[3],
                                             double F[9])
{
  if (y_perp) {
    pbng_pd_deformation_gradient_with(r, y_i, y_ring, y_perp, F);
    return 0;
  }
  return pbng_pd_deformation_gradient(r, y_i, y_ring, F, NULL);
}

static void zero_hessian(int nodes, double *H)
{
  const int N = 3 * nodes;
  memset(H, 0, (size_t)N * (size_t)N * sizeof(*H));
}

/* ---- the Hessian of W_i = V_i Psi(F_i) (Eq. 8, 15) ---- */

/* H += V G^T D G over the nodes, dF_ab / dy_p,c = d_ac g_p,b. */
static void add_chain_rule_hessian(const double D[81], const double (*g)[3], int nodes, double V, double *H)
{
  const int N = 3 * nodes;
  for (int p = 0; p < nodes; ++p) {
    double Dg[3][9] = {{0}}; /* Dg[c][3 e + d] = sum_b D[(c b), (e d)] g_p,b */
    for (int c = 0; c < 3; ++c)
      for (int ed = 0; ed < 9; ++ed)
        for (int b = 0; b < 3; ++b) Dg[c][ed] += D[9 * (3 * c + b) + ed] * g[p][b];
    for (int q = 0; q < nodes; ++q)
      for (int c = 0; c < 3; ++c)
        for (int e = 0; e < 3; ++e) {
          double s = 0;
          for (int d = 0; d < 3; ++d) s += Dg[c][3 * e + d] * g[q][d];
          H[(3 * p + c) * N + 3 * q + e] += V * s;
        }
  }
}

int pbng_pd_vertex_hessian(const pbng_pd_material *m, const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3],
                           const double y_perp[3], double *H)
{
  const int nodes = r->n + 1;
  double F[9] = {0}, D[81] = {0}, g[NODES_MAX][3] = {{0}};
  zero_hessian(nodes, H);
  if (deformation_gradient_fixed_normal(r, y_i, y_ring, y_perp, F)) return -1;
  if (!(mat3_det(F) > 0)) return -1;
  pbng_pd_stress_derivative(m, F, D);
  deformation_gradient_jacobian(r, g);
  add_chain_rule_hessian(D, (const double(*)[3])g, nodes, r->volume, H);
  return 0;
}

/* ---- the Hessian of the bending energy (Eq. 42-43 as the non-affine residual) ---- */

/* alpha[j][p] = d eta_j / dy_p - g_p . u_j (dr_j = A sum_p alpha_jp dy_p), node 0 being y_i. */
static void residual_jacobian_weights(const double (*g)[3], const double (*u)[3], int n, double alpha[][NODES_MAX])
{
  for (int j = 0; j < n; ++j)
    for (int p = 0; p <= n; ++p) alpha[j][p] = (p == j + 1) - (p == 0) - vec3_dot(g[p], u[j]);
}

double pbng_pd_bending_hessian(double k_b, const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3], const double y_perp[3],
                               double *H)
{
  const int n = r->n, nodes = n + 1, N = 3 * nodes;
  double F[9] = {0}, A[9] = {0}, AtA[9] = {0}, g[NODES_MAX][3] = {{0}}, u[PBNG_PD_MAX_RING][3] = {{0}}, w[PBNG_PD_MAX_RING][3] = {{0}};
  double alpha[PBNG_PD_MAX_RING][NODES_MAX] = {{0}}, Z[NODES_MAX][3] = {{0}}, h[NODES_MAX][3] = {{0}};
  zero_hessian(nodes, H);
  if (deformation_gradient_fixed_normal(r, y_i, y_ring, y_perp, F)) return INFINITY;
  const double J = mat3_inverse(F, A);
  if (!(fabs(J) > 0) || !isfinite(J)) return INFINITY;
  double E = 0;
  for (int j = 0; j < n; ++j) {
    double eta[3], res[3];
    vec3_sub(y_ring[j], y_i, eta);
    mat3_vec(A, eta, u[j]); /* u_j = F^-1 eta_j */
    vec3_sub(u[j], r->bond[j], res);
    E += r->omega[j] * vec3_dot(res, res);
    for (int a = 0; a < 3; ++a) w[j][a] = A[a] * res[0] + A[3 + a] * res[1] + A[6 + a] * res[2]; /* A^T r_j */
  }
  deformation_gradient_jacobian(r, g);
  residual_jacobian_weights((const double(*)[3])g, (const double(*)[3])u, n, alpha);
  mat3_tmul(A, A, AtA);
  for (int p = 0; p < nodes; ++p) {
    for (int a = 0; a < 3; ++a) h[p][a] = A[a] * g[p][0] + A[3 + a] * g[p][1] + A[6 + a] * g[p][2]; /* A^T g_p */
    for (int j = 0; j < n; ++j)
      for (int a = 0; a < 3; ++a) Z[p][a] += r->omega[j] * alpha[j][p] * w[j][a];
  }
  const double c = r->volume * k_b;
  for (int p = 0; p < nodes; ++p)
    for (int q = 0; q < nodes; ++q) {
      double S = 0;
      for (int j = 0; j < n; ++j) S += r->omega[j] * alpha[j][p] * alpha[j][q];
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          H[(3 * p + a) * N + 3 * q + b] = c * (S * AtA[3 * a + b] - h[q][a] * Z[p][b] - Z[q][a] * h[p][b]);
    }
  return 0.5 * c * E;
}
