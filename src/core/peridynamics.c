#include "core/peridynamics.h"
#include <math.h>
#include <string.h>
#include "core/contact_geometry.h"
#include "core/mat3.h"
#include "core/vec3.h"

/* ---- geometry of the one-ring ---- */

int pbng_pd_virtual_bond(const double x_i[3], const double (*ring)[3], int n, int closed, double thickness, double v[3])
{
  double s[3] = {0, 0, 0};
  const int triangles = closed ? n : n - 1;
  for (int k = 0; k < triangles; ++k) pbng_vertex_normal_add(x_i, ring[k], ring[(k + 1) % n], s);
  const double len = vec3_norm(s);
  if (!(len > 0)) {
    v[0] = v[1] = v[2] = 0;
    return -1;
  }
  for (int a = 0; a < 3; ++a) v[a] = thickness * s[a] / len; /* Eq. 13: the division by sum theta cancels */
  return 0;
}

/* Adds to ge1, ge2 the gradient of theta (n . q) over the edges e1, e2 of one fan triangle (see the header). */
static void angle_weighted_normal_chain(const double e1[3], const double e2[3], const double q[3], double ge1[3], double ge2[3])
{
  double c[3], n[3], p[3], t1[3], t2[3], a[3], b[3];
  vec3_cross(e1, e2, c);
  const double len = vec3_norm(c), l1 = vec3_norm(e1), l2 = vec3_norm(e2);
  if (!(len > 0)) return;
  const double theta = atan2(len, vec3_dot(e1, e2));
  for (int k = 0; k < 3; ++k) n[k] = c[k] / len;
  const double nq = vec3_dot(n, q);
  for (int k = 0; k < 3; ++k) p[k] = (q[k] - nq * n[k]) / len;
  vec3_cross(n, e1, t1), vec3_cross(n, e2, t2);
  vec3_cross(e2, p, a), vec3_cross(p, e1, b);
  for (int k = 0; k < 3; ++k) {
    ge1[k] += -nq * t1[k] / (l1 * l1) + theta * a[k];
    ge2[k] += nq * t2[k] / (l2 * l2) + theta * b[k];
  }
}

void pbng_pd_virtual_bond_gradient(const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3], const double g[3],
                                   double grad_i[3], double (*grad_ring)[3])
{
  double s[3] = {0, 0, 0}, q[3];
  const int n = r->n, triangles = r->closed ? n : n - 1;
  for (int k = 0; k < triangles; ++k) pbng_vertex_normal_add(y_i, y_ring[k], y_ring[(k + 1) % n], s);
  const double len = vec3_norm(s);
  if (!(len > 0)) return;
  const double gs = vec3_dot(g, s) / (len * len);
  for (int a = 0; a < 3; ++a) q[a] = r->thickness / len * (g[a] - gs * s[a]); /* dW/ds: y_perp = thickness s / |s| */
  for (int k = 0; k < triangles; ++k) {
    const int k1 = (k + 1) % n;
    double e1[3], e2[3], g1[3] = {0, 0, 0}, g2[3] = {0, 0, 0};
    vec3_sub(y_ring[k], y_i, e1), vec3_sub(y_ring[k1], y_i, e2);
    angle_weighted_normal_chain(e1, e2, q, g1, g2);
    for (int a = 0; a < 3; ++a) {
      grad_ring[k][a] += g1[a], grad_ring[k1][a] += g2[a];
      grad_i[a] -= g1[a] + g2[a];
    }
  }
}

/* A += w u v^T */
static void add_outer(double w, const double u[3], const double v[3], double A[9])
{
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) A[3 * r + c] += w * u[r] * v[c];
}

int pbng_pd_rest_init(const double X_i[3], const double (*X_ring)[3], int n, int closed, const double *omega, double thickness,
                      double volume, pbng_pd_rest *r)
{
  memset(r, 0, sizeof(*r));
  if (n < 2 || n > PBNG_PD_MAX_RING) return -1;
  r->n = n, r->closed = closed, r->thickness = thickness, r->volume = volume;
  if (pbng_pd_virtual_bond(X_i, X_ring, n, closed, thickness, r->perp)) return -1;
  double K[9] = {0};
  for (int j = 0; j < n; ++j) {
    r->omega[j] = omega ? omega[j] : 1.0;
    vec3_sub(X_ring[j], X_i, r->bond[j]);
    add_outer(r->omega[j], r->bond[j], r->bond[j], K); /* Eq. 14, bonds */
  }
  add_outer(1.0, r->perp, r->perp, K); /* Eq. 14, the virtual bond */
  double d = K[0];
  if (K[4] > d) d = K[4];
  if (K[8] > d) d = K[8];
  if (!(mat3_inverse(K, r->K_inv) > 1e-12 * d * d * d)) {
    memset(r, 0, sizeof(*r));
    return -1;
  }
  return 0;
}

void pbng_pd_deformation_gradient_with(const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3], const double y_perp[3],
                                       double F[9])
{
  double M[9] = {0};
  for (int j = 0; j < r->n; ++j) {
    double eta[3];
    vec3_sub(y_ring[j], y_i, eta);
    add_outer(r->omega[j], eta, r->bond[j], M);
  }
  add_outer(1.0, y_perp, r->perp, M);
  mat3_mul(M, r->K_inv, F); /* Eq. 15 */
}

int pbng_pd_deformation_gradient(const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3], double F[9], double y_perp[3])
{
  double yp[3];
  const int err = pbng_pd_virtual_bond(y_i, y_ring, r->n, r->closed, r->thickness, yp);
  if (y_perp) memcpy(y_perp, yp, sizeof(yp));
  pbng_pd_deformation_gradient_with(r, y_i, y_ring, yp, F);
  return err;
}

/* ---- materials (Sec. 5) ---- */

/* F^-T and C^-1 = F^-1 F^-T; returns J. */
static double inverse_transpose(const double F[9], double FinvT[9], double Cinv[9])
{
  double Finv[9];
  const double J = mat3_inverse(F, Finv);
  mat3_transpose(Finv, FinvT);
  if (Cinv) mat3_mul(Finv, FinvT, Cinv);
  return J;
}

double pbng_pd_energy_density(const pbng_pd_material *m, const double F[9], double P[9])
{
  const double J = mat3_det(F);
  if (!(J > 0)) return INFINITY;
  double FinvT[9], Cinv[9], C[9];
  if (m->kind == PBNG_PD_NEOHOOKEAN) { /* Eq. 36, ln I3 = 2 ln J */
    if (P) {
      inverse_transpose(F, FinvT, NULL);
      const double v = 2.0 * m->s1 * (J - 1.0) * J - 2.0 * m->s0; /* Eq. 37 in matrix form */
      for (int k = 0; k < 9; ++k) P[k] = 2.0 * m->s0 * F[k] + v * FinvT[k];
    }
    return m->s0 * (mat3_frobenius_sq(F) - 3.0 - 2.0 * log(J)) + m->s1 * (J - 1.0) * (J - 1.0);
  }
  /* Eq. 39-40 through the invariants tr C^2 = sum lambda^4, tr C^-1 = sum lambda^-2 */
  inverse_transpose(F, FinvT, Cinv);
  mat3_tmul(F, F, C);
  if (P) {
    double FC[9], FiC[9];
    mat3_mul(F, C, FC);
    mat3_mul(FinvT, Cinv, FiC);
    for (int k = 0; k < 9; ++k) P[k] = m->s0 / 3.0 * (FC[k] - FiC[k]); /* Eq. 41: lambda^3 / 3 - lambda^-3 / 3 */
  }
  const double trCinv = Cinv[0] + Cinv[4] + Cinv[8];
  return m->s0 / 3.0 * ((mat3_frobenius_sq(C) - 3.0) / 4.0 + (trCinv - 3.0) / 2.0);
}

void pbng_pd_stress_split(const pbng_pd_material *m, const double F[9], double P_plus[9], double P_minus[9])
{
  double FinvT[9], Cinv[9], C[9];
  const double J = inverse_transpose(F, FinvT, Cinv);
  if (m->kind == PBNG_PD_NEOHOOKEAN) { /* Eq. 38: 2 s0 lambda + 2 s1 I3 / lambda, -2 (s0 + s1 sqrt(I3)) / lambda */
    for (int k = 0; k < 9; ++k) {
      P_plus[k] = 2.0 * m->s0 * F[k] + 2.0 * m->s1 * J * J * FinvT[k];
      P_minus[k] = -2.0 * (m->s0 + m->s1 * J) * FinvT[k];
    }
    return;
  }
  mat3_tmul(F, F, C); /* Eq. 41 */
  mat3_mul(F, C, P_plus);
  mat3_mul(FinvT, Cinv, P_minus);
  for (int k = 0; k < 9; ++k) P_plus[k] *= m->s0 / 3.0, P_minus[k] *= -m->s0 / 3.0;
}

/* ---- forces (Eq. 8-9) ---- */

void pbng_pd_force_state(const double PK[9], double omega, const double xi[3], double T[3])
{
  mat3_vec(PK, xi, T);
  for (int a = 0; a < 3; ++a) T[a] *= omega;
}

static void zero3(double v[3])
{
  if (v) v[0] = v[1] = v[2] = 0;
}

double pbng_pd_vertex_energy_gradient(const pbng_pd_material *m, const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3],
                                      double grad_i[3], double (*grad_ring)[3], double grad_perp[3])
{
  double F[9], P[9], PK[9];
  zero3(grad_i), zero3(grad_perp);
  if (grad_ring)
    for (int j = 0; j < r->n; ++j) zero3(grad_ring[j]);
  if (pbng_pd_deformation_gradient(r, y_i, y_ring, F, NULL)) return INFINITY;
  const double psi = pbng_pd_energy_density(m, F, P);
  if (!isfinite(psi)) return INFINITY;
  mat3_mul(P, r->K_inv, PK);
  if (grad_ring)
    for (int j = 0; j < r->n; ++j) {
      pbng_pd_force_state(PK, r->volume * r->omega[j], r->bond[j], grad_ring[j]); /* dW_i/dy_j = V_i T_i<xi_j> */
      if (grad_i)
        for (int a = 0; a < 3; ++a) grad_i[a] -= grad_ring[j][a];
    }
  if (grad_perp) pbng_pd_force_state(PK, r->volume, r->perp, grad_perp);
  return r->volume * psi;
}

/* ---- bending (Sec. 5.2, Eq. 42-43 as the non-affine residual) ---- */

double pbng_pd_bending_energy_gradient(double k_b, const pbng_pd_rest *r, const double y_i[3], const double (*y_ring)[3],
                                       const double y_perp[3], double grad_i[3], double (*grad_ring)[3], double grad_perp[3])
{
  double F[9], Finv[9], FinvT[9], yp[3], res[PBNG_PD_MAX_RING][3], B[9] = {0};
  zero3(grad_i), zero3(grad_perp);
  if (grad_ring)
    for (int j = 0; j < r->n; ++j) zero3(grad_ring[j]);
  if (y_perp)
    pbng_pd_deformation_gradient_with(r, y_i, y_ring, y_perp, F);
  else if (pbng_pd_deformation_gradient(r, y_i, y_ring, F, yp))
    return INFINITY;
  const double J = mat3_inverse(F, Finv);
  if (!(fabs(J) > 0) || !isfinite(J)) return INFINITY;
  double E = 0;
  for (int j = 0; j < r->n; ++j) {
    double eta[3], back[3], a[3];
    vec3_sub(y_ring[j], y_i, eta);
    mat3_vec(Finv, eta, back); /* F^-1 eta_j */
    vec3_sub(back, r->bond[j], res[j]);
    E += r->omega[j] * vec3_dot(res[j], res[j]);
    mat3_vec(r->K_inv, back, a); /* M^-1 eta_j, M = F K */
    add_outer(r->omega[j], res[j], a, B);
  }
  mat3_transpose(Finv, FinvT);
  const double c = r->volume * k_b;
  if (grad_perp) {
    double Bx[3];
    mat3_vec(B, r->perp, Bx);
    mat3_vec(FinvT, Bx, grad_perp);
    for (int a = 0; a < 3; ++a) grad_perp[a] *= -c;
  }
  if (grad_ring) {
    for (int j = 0; j < r->n; ++j) {
      double Bx[3], d[3];
      mat3_vec(B, r->bond[j], Bx);
      vec3_sub(res[j], Bx, d);
      mat3_vec(FinvT, d, grad_ring[j]);
      for (int a = 0; a < 3; ++a) {
        grad_ring[j][a] *= c * r->omega[j];
        if (grad_i) grad_i[a] -= grad_ring[j][a];
      }
    }
  }
  return 0.5 * r->volume * k_b * E;
}
