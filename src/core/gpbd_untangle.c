/* The joint projection of a cluster of inverted tetrahedra: core/gpbd_untangle.h, Eq. (U1)-(U2). */
#include "core/gpbd_untangle.h"
#include <math.h>
#include <string.h>
#include "core/element.h"
#include "core/mat3.h"

enum { UNTANGLE_NEWTON_STEPS = 8, UNTANGLE_BACKTRACKS = 40 };

/* Tetrahedron t's F at c->x with its node `slot` moved by z. */
static void tet_deformation(const pbng_gpbd_cluster *c, int32_t t, int slot, const double z[3], double F[9])
{
  double xe[4][3];
  for (int a = 0; a < 4; ++a) memcpy(xe[a], &c->x[3 * c->tet[t][a]], sizeof(xe[a]));
  for (int k = 0; k < 3; ++k) xe[slot][k] += z[k];
  pbng_gpbd_tet_deformation(&c->rest[t], (const double(*)[3])xe, F);
}

/* (U1)'s term of one tetrahedron, V |F|^2 / (3 h(J)^(2/3)), and with grad (may be NULL) its gradient in the position of
 * the node with shape gradient g: dK = V (2 F g / (3 h^(2/3)) - 2 |F|^2 h' cof(F) g / (9 h^(5/3))), h' = h / sqrt(J^2 + 4 delta^2). */
static double tet_term(const double F[9], const double g[3], double volume, double delta2, double grad[3])
{
  const double J = mat3_det(F), root = sqrt(J * J + 4.0 * delta2), h = 0.5 * (J + root), F2 = mat3_frobenius_sq(F);
  if (!(h > 0)) return INFINITY; /* delta = 0 and J <= 0 */
  const double h23 = cbrt(h * h), K = volume * F2 / (3.0 * h23);
  if (grad) {
    double C[9], Fg[3], Cg[3];
    mat3_cofactor(F, C);
    mat3_vec(F, g, Fg);
    mat3_vec(C, g, Cg);
    const double dh = h / root;
    for (int k = 0; k < 3; ++k) grad[k] = volume * (2.0 * Fg[k] / (3.0 * h23) - 2.0 * F2 * dh * Cg[k] / (9.0 * h23 * h));
  }
  return K;
}

double pbng_gpbd_untangle_node_objective(const pbng_gpbd_cluster *c, int32_t a, const double z[3], double delta2, double grad[3])
{
  double K = 0.0;
  if (grad) grad[0] = grad[1] = grad[2] = 0.0;
  for (int32_t j = c->adj_start[a]; j < c->adj_start[a + 1]; ++j) {
    const int32_t t = c->adj[j] / 4, slot = c->adj[j] % 4;
    double F[9], g[3], gt[3];
    tet_deformation(c, t, slot, z, F);
    pbng_tet_shape_gradient(c->rest[t].B, slot, g);
    K += tet_term(F, g, c->rest[t].volume, delta2, grad ? gt : NULL);
    if (grad)
      for (int k = 0; k < 3; ++k) grad[k] += gt[k];
  }
  return K;
}

/* The least J of node a's tetrahedra. */
static double node_least_volume_ratio(const pbng_gpbd_cluster *c, int32_t a)
{
  const double z[3] = {0, 0, 0};
  double least = INFINITY;
  for (int32_t j = c->adj_start[a]; j < c->adj_start[a + 1]; ++j) {
    double F[9];
    tet_deformation(c, c->adj[j] / 4, c->adj[j] % 4, z, F);
    least = fmin(least, mat3_det(F));
  }
  return least;
}

/* Whether the symmetric H + shift I is positive definite (its leading minors). */
static int spd_shifted(const double H[9], double shift)
{
  double A[9];
  memcpy(A, H, sizeof(A));
  for (int i = 0; i < 3; ++i) A[4 * i] += shift;
  return A[0] > 0 && A[0] * A[4] - A[1] * A[3] > 0 && mat3_det(A) > 0;
}

/* (U2): Newton steps on node a's part of (U1) with the Hessian from differences of the gradient (step hs), shifted
 * until positive definite, and Armijo backtracking; a moved in place. */
static void node_step(const pbng_gpbd_cluster *c, int32_t a, double delta2, double hs)
{
  const double zero[3] = {0, 0, 0};
  for (int it = 0; it < UNTANGLE_NEWTON_STEPS; ++it) {
    double grad[3], H[9], p[3];
    const double K = pbng_gpbd_untangle_node_objective(c, a, zero, delta2, grad);
    for (int k = 0; k < 3; ++k) {
      double z[3] = {0, 0, 0}, gp[3], gm[3];
      z[k] = hs;
      pbng_gpbd_untangle_node_objective(c, a, z, delta2, gp);
      z[k] = -hs;
      pbng_gpbd_untangle_node_objective(c, a, z, delta2, gm);
      for (int i = 0; i < 3; ++i) H[3 * i + k] = (gp[i] - gm[i]) / (2.0 * hs);
    }
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < i; ++k) H[3 * i + k] = H[3 * k + i] = 0.5 * (H[3 * i + k] + H[3 * k + i]);
    const double scale = fabs(H[0]) + fabs(H[4]) + fabs(H[8]) + 1e-300;
    double shift = 0.0;
    while (!spd_shifted(H, shift) && shift < 1e12 * scale) shift = shift > 0 ? 4.0 * shift : 1e-8 * scale;
    for (int i = 0; i < 3; ++i) H[4 * i] += shift;
    if (!spd_shifted(H, 0.0)) return;
    const double b[3] = {-grad[0], -grad[1], -grad[2]};
    mat3_spd_solve(H, b, p);
    const double slope = grad[0] * p[0] + grad[1] * p[1] + grad[2] * p[2];
    if (!(slope < 0)) return;
    double step = 1.0, Kn = INFINITY;
    for (int bt = 0; bt < UNTANGLE_BACKTRACKS; ++bt, step *= 0.5) {
      const double z[3] = {step * p[0], step * p[1], step * p[2]};
      Kn = pbng_gpbd_untangle_node_objective(c, a, z, delta2, NULL);
      if (Kn <= K + 1e-4 * step * slope) break;
    }
    if (!(Kn < K)) return;
    for (int k = 0; k < 3; ++k) c->x[3 * a + k] += step * p[k];
    if (step * sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) < 1e-3 * hs) return;
  }
}

static int32_t count_flipped(const pbng_gpbd_cluster *c)
{
  const double z[3] = {0, 0, 0};
  int32_t n = 0;
  for (int32_t t = 0; t < c->ntets; ++t) {
    double F[9];
    tet_deformation(c, t, 0, z, F);
    n += !(mat3_det(F) > 0);
  }
  return n;
}

int32_t pbng_gpbd_untangle(const pbng_gpbd_cluster *c, const pbng_gpbd_untangle_options *o)
{
  double volume = 0.0;
  for (int32_t t = 0; t < c->ntets; ++t) volume += c->rest[t].volume;
  int32_t left = count_flipped(c);
  if (c->ntets == 0) return left;
  const double hs = 1e-6 * cbrt(volume / c->ntets); /* the difference step: 1e-6 of the elements' size */
  for (int sweep = 0; sweep < o->sweeps && left > 0; ++sweep) {
    for (int32_t a = 0; a < c->nnodes; ++a) {
      if (!c->movable[a]) continue;
      const double least = node_least_volume_ratio(c, a);
      node_step(c, a, least < o->eps ? o->eps * (o->eps - least) : 0.0, hs);
    }
    left = count_flipped(c);
  }
  return left;
}
