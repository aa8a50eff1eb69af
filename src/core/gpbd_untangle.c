/* The joint projection of a cluster of inverted tetrahedra: core/gpbd_untangle.h, Eq. (U1)-(U3). */
#include "core/gpbd_untangle.h"
#include <math.h>
#include <string.h>
#include "core/dense.h"
#include "core/element.h"
#include "core/mat3.h"

enum { UNTANGLE_NEWTON_STEPS = 8, UNTANGLE_BACKTRACKS = 40, JOINT_CG_ITERATIONS = 200, JOINT_SHIFT_RAISES = 12, JOINT_RINGS = 2 };
static const double JOINT_DELTA_FALL = 0.1; /* (U3): delta^2 at most this times the previous step's */

/* Tetrahedron t's node positions, its node `slot` moved by z. */
static void tet_positions(const pbng_gpbd_cluster *c, int32_t t, int slot, const double z[3], double xe[4][3])
{
  for (int a = 0; a < 4; ++a) memcpy(xe[a], &c->x[3 * c->tet[t][a]], sizeof(xe[a]));
  for (int k = 0; k < 3; ++k) xe[slot][k] += z[k];
}

/* Tetrahedron t's F at c->x with its node `slot` moved by z. */
static void tet_deformation(const pbng_gpbd_cluster *c, int32_t t, int slot, const double z[3], double F[9])
{
  double xe[4][3];
  tet_positions(c, t, slot, z, xe);
  pbng_gpbd_tet_deformation(&c->rest[t], (const double(*)[3])xe, F);
}

/* (U1)'s term of one tetrahedron, V |F|^2 / (3 h(J)^(2/3)), and with P (may be NULL) its derivative in F:
 * P = V (2 F / (3 h^(2/3)) - 2 |F|^2 h' cof(F) / (9 h^(5/3))), h' = h / sqrt(J^2 + 4 delta^2). */
double pbng_gpbd_untangle_tet_term(const double F[9], double volume, double delta2, double P[9])
{
  const double J = mat3_det(F), root = sqrt(J * J + 4.0 * delta2), h = 0.5 * (J + root), F2 = mat3_frobenius_sq(F);
  if (!(h > 0)) return INFINITY; /* delta = 0 and J <= 0 */
  const double h23 = cbrt(h * h), K = volume * F2 / (3.0 * h23);
  if (P) {
    double C[9];
    mat3_cofactor(F, C);
    const double dh = h / root;
    for (int k = 0; k < 9; ++k) P[k] = volume * (2.0 * F[k] / (3.0 * h23) - 2.0 * F2 * dh * C[k] / (9.0 * h23 * h));
  }
  return K;
}

/* The Levi-Civita symbol. */
static double levi_civita(int i, int j, int k) { return (double)((i - j) * (j - k) * (k - i)) / 2.0; }

void pbng_gpbd_untangle_tet_hessian_F(const double F[9], double volume, double delta2, double H[81])
{
  /* (U1)'s term is V/3 |F|^2 a(J), a = h^(-2/3): its second derivative in F is
   * V/3 (2 a I + 2 a' (F (x) C + C (x) F) + |F|^2 a'' C (x) C + |F|^2 a' d^2J/dF^2),
   * a' = -2/3 h^(-5/3) h', a'' = 10/9 h^(-8/3) h'^2 - 2/3 h^(-5/3) h'', h' = h / r, h'' = 2 delta^2 / r^3, r = sqrt(J^2 + 4 delta^2),
   * C = cof(F) = dJ/dF, d^2J/(dF_ij dF_kl) = sum_mn e_ikm e_jln F_mn. */
  const double J = mat3_det(F), r = sqrt(J * J + 4.0 * delta2), h = 0.5 * (J + r), F2 = mat3_frobenius_sq(F);
  double C[9];
  mat3_cofactor(F, C);
  const double dh = h / r, d2h = 2.0 * delta2 / (r * r * r), h53 = pow(h, -5.0 / 3.0), a = pow(h, -2.0 / 3.0);
  const double a1 = -2.0 / 3.0 * h53 * dh, a2 = 10.0 / 9.0 * pow(h, -8.0 / 3.0) * dh * dh - 2.0 / 3.0 * h53 * d2h, v = volume / 3.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        for (int l = 0; l < 3; ++l) {
          double d2J = 0.0;
          for (int m = 0; m < 3; ++m)
            for (int n = 0; n < 3; ++n) d2J += levi_civita(i, k, m) * levi_civita(j, l, n) * F[3 * m + n];
          const int p = 3 * i + j, q = 3 * k + l;
          H[9 * p + q] = v * (2.0 * a * (p == q) + 2.0 * a1 * (F[p] * C[q] + C[p] * F[q]) + F2 * a2 * C[p] * C[q] + F2 * a1 * d2J);
        }
}

/* H (9 x 9, symmetric) <- its positive semidefinite part, V max(Lambda, 0) V^T; left as it is when positive definite
 * (a Cholesky factorisation exists: most terms, no eigen decomposition). */
static void clamp_psd9(double H[81])
{
  double A[81], b[9] = {0}, w[9], V[81];
  memcpy(A, H, sizeof(A));
  if (dense_spd_solve(9, A, b) == 0) return;
  dense_symmetric_eigen(9, H, w, V);
  for (int p = 0; p < 9; ++p)
    for (int q = 0; q < 9; ++q) {
      double s = 0.0;
      for (int k = 0; k < 9; ++k) s += V[9 * p + k] * fmax(w[k], 0.0) * V[9 * q + k];
      H[9 * p + q] = s;
    }
}

/* Tetrahedron t's 12 x 12 Hessian of (U1) in its node positions from the F-Hessian H9 (dF_iq / dx_ai = g_aq):
 * H12[(a,i),(b,k)] = sum_jl H9[(ij),(kl)] g_aj g_bl. */
static void tet_hessian_nodes(const pbng_gpbd_tet_rest *rest, const double H9[81], double H12[144])
{
  double g[4][3];
  for (int a = 0; a < 4; ++a) pbng_tet_shape_gradient(rest->B, a, g[a]);
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i)
      for (int b = 0; b < 4; ++b)
        for (int k = 0; k < 3; ++k) {
          double s = 0.0;
          for (int j = 0; j < 3; ++j)
            for (int l = 0; l < 3; ++l) s += H9[9 * (3 * i + j) + 3 * k + l] * g[a][j] * g[b][l];
          H12[12 * (3 * a + i) + 3 * b + k] = s;
        }
}

void pbng_gpbd_untangle_tet_hessian(const pbng_gpbd_tet_rest *rest, const double x[4][3], double delta2, int psd, double H12[144])
{
  double F[9], H9[81];
  pbng_gpbd_tet_deformation(rest, x, F);
  pbng_gpbd_untangle_tet_hessian_F(F, rest->volume, delta2, H9);
  if (psd) clamp_psd9(H9);
  tet_hessian_nodes(rest, H9, H12);
}

void pbng_gpbd_untangle_tet_gradient(const pbng_gpbd_tet_rest *rest, const double x[4][3], double delta2, double grad[12])
{
  double F[9], P[9];
  pbng_gpbd_tet_deformation(rest, x, F);
  pbng_gpbd_untangle_tet_term(F, rest->volume, delta2, P);
  for (int a = 0; a < 4; ++a) {
    double g[3];
    pbng_tet_shape_gradient(rest->B, a, g);
    mat3_vec(P, g, &grad[3 * a]);
  }
}

double pbng_gpbd_untangle_node_objective(const pbng_gpbd_cluster *c, int32_t a, const double z[3], double delta2, double grad[3])
{
  double K = 0.0;
  if (grad) grad[0] = grad[1] = grad[2] = 0.0;
  for (int32_t j = c->adj_start[a]; j < c->adj_start[a + 1]; ++j) {
    const int32_t t = c->adj[j] / 4, slot = c->adj[j] % 4;
    double F[9], P[9], g[3], gt[3];
    tet_deformation(c, t, slot, z, F);
    K += pbng_gpbd_untangle_tet_term(F, c->rest[t].volume, delta2, grad ? P : NULL);
    if (grad) {
      pbng_tet_shape_gradient(c->rest[t].B, slot, g);
      mat3_vec(P, g, gt);
      for (int k = 0; k < 3; ++k) grad[k] += gt[k];
    }
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
 * until positive definite (the shift starting at 1e-8 of its Frobenius norm: invariant under a rotation), and Armijo
 * backtracking; a moved in place. */
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
    const double scale = sqrt(mat3_frobenius_sq(H)) + 1e-300;
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

/* The least J of the cluster's tetrahedra and how many have J <= 0. */
static int32_t cluster_volume_ratios(const pbng_gpbd_cluster *c, double *least)
{
  const double z[3] = {0, 0, 0};
  int32_t n = 0;
  *least = INFINITY;
  for (int32_t t = 0; t < c->ntets; ++t) {
    double F[9];
    tet_deformation(c, t, 0, z, F);
    const double J = mat3_det(F);
    n += !(J > 0);
    *least = fmin(*least, J);
  }
  return n;
}

static int32_t count_flipped(const pbng_gpbd_cluster *c)
{
  double least;
  return cluster_volume_ratios(c, &least);
}

/* ---- the joint step (U3) ---- */

size_t pbng_gpbd_untangle_work_size(int32_t nnodes, int32_t ntets) { return 144 * (size_t)ntets + 33 * (size_t)nnodes + (size_t)nnodes / 4 + 2; }

/* Whether tetrahedron t has a movable node of c (the joint step's terms: the others are constant). */
static int tet_moves(const pbng_gpbd_cluster *c, int32_t t)
{
  return c->movable[c->tet[t][0]] | c->movable[c->tet[t][1]] | c->movable[c->tet[t][2]] | c->movable[c->tet[t][3]];
}

/* The joint step's nodes: the movable nodes of c within JOINT_RINGS rings of tetrahedra of its inverted ones, into
 * active (the fold and its surroundings: the joint step's cost follows the fold, not the cluster). */
static void fold_nodes(const pbng_gpbd_cluster *c, uint8_t *active, uint8_t *grown)
{
  const double z[3] = {0, 0, 0};
  memset(active, 0, (size_t)c->nnodes);
  for (int32_t t = 0; t < c->ntets; ++t) {
    double F[9];
    tet_deformation(c, t, 0, z, F);
    if (!(mat3_det(F) > 0))
      for (int a = 0; a < 4; ++a) active[c->tet[t][a]] = 1;
  }
  for (int ring = 0; ring < JOINT_RINGS; ++ring) {
    memcpy(grown, active, (size_t)c->nnodes);
    for (int32_t t = 0; t < c->ntets; ++t)
      if (active[c->tet[t][0]] | active[c->tet[t][1]] | active[c->tet[t][2]] | active[c->tet[t][3]])
        for (int a = 0; a < 4; ++a) grown[c->tet[t][a]] = 1;
    memcpy(active, grown, (size_t)c->nnodes);
  }
  for (int32_t a = 0; a < c->nnodes; ++a) active[a] &= c->movable[a];
}

/* The whole cluster's (U1) at c->x + s p (p over all nodes, 0 on the fixed ones). */
static double cluster_objective(const pbng_gpbd_cluster *c, const double *p, double s, double delta2)
{
  double K = 0.0;
  for (int32_t t = 0; t < c->ntets; ++t) {
    if (!tet_moves(c, t)) continue;
    double xe[4][3], F[9];
    for (int a = 0; a < 4; ++a)
      for (int k = 0; k < 3; ++k) xe[a][k] = c->x[3 * c->tet[t][a] + k] + (p ? s * p[3 * c->tet[t][a] + k] : 0.0);
    pbng_gpbd_tet_deformation(&c->rest[t], (const double(*)[3])xe, F);
    K += pbng_gpbd_untangle_tet_term(F, c->rest[t].volume, delta2, NULL);
  }
  return K;
}

/* The cluster's gradient g (movable nodes; 0 on the others), every tetrahedron's 12 x 12 PSD Hessian into H, and the
 * 3 x 3 diagonal blocks D of their sum. Returns the mean of the movable diagonal (the shift's scale). */
static double assemble(const pbng_gpbd_cluster *c, double delta2, double *g, double *H, double *D)
{
  memset(g, 0, 3 * sizeof(double) * (size_t)c->nnodes);
  memset(D, 0, 9 * sizeof(double) * (size_t)c->nnodes);
  for (int32_t t = 0; t < c->ntets; ++t) {
    if (!tet_moves(c, t)) continue;
    double xe[4][3], ge[12], *He = &H[144 * (size_t)t];
    const double z[3] = {0, 0, 0};
    tet_positions(c, t, 0, z, xe);
    pbng_gpbd_untangle_tet_gradient(&c->rest[t], (const double(*)[3])xe, delta2, ge);
    pbng_gpbd_untangle_tet_hessian(&c->rest[t], (const double(*)[3])xe, delta2, 1, He);
    for (int a = 0; a < 4; ++a) {
      const int32_t n = c->tet[t][a];
      if (!c->movable[n]) continue;
      for (int i = 0; i < 3; ++i) {
        g[3 * n + i] += ge[3 * a + i];
        for (int k = 0; k < 3; ++k) D[9 * n + 3 * i + k] += He[12 * (3 * a + i) + 3 * a + k];
      }
    }
  }
  double trace = 0.0;
  int32_t m = 0;
  for (int32_t n = 0; n < c->nnodes; ++n)
    if (c->movable[n]) trace += D[9 * n] + D[9 * n + 4] + D[9 * n + 8], m += 3;
  return m > 0 ? trace / m : 0.0;
}

/* y = (sum_t H_t + shift I) v on the movable nodes (0 on the others). */
static void hessian_times(const pbng_gpbd_cluster *c, const double *H, double shift, const double *v, double *y)
{
  memset(y, 0, 3 * sizeof(double) * (size_t)c->nnodes);
  for (int32_t t = 0; t < c->ntets; ++t) {
    if (!tet_moves(c, t)) continue;
    const double *He = &H[144 * (size_t)t];
    double ve[12];
    for (int a = 0; a < 4; ++a)
      for (int k = 0; k < 3; ++k) ve[3 * a + k] = c->movable[c->tet[t][a]] ? v[3 * c->tet[t][a] + k] : 0.0;
    for (int a = 0; a < 4; ++a) {
      const int32_t n = c->tet[t][a];
      if (!c->movable[n]) continue;
      for (int i = 0; i < 3; ++i) {
        double s = 0.0;
        for (int q = 0; q < 12; ++q) s += He[12 * (3 * a + i) + q] * ve[q];
        y[3 * n + i] += s;
      }
    }
  }
  for (int32_t n = 0; n < c->nnodes; ++n)
    for (int k = 0; k < 3; ++k) y[3 * n + k] = c->movable[n] ? y[3 * n + k] + shift * v[3 * n + k] : 0.0;
}

static double dot(const double *a, const double *b, size_t n)
{
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

/* (sum_t H_t + shift I) p = -g by conjugate gradients preconditioned with the inverse 3 x 3 diagonal blocks of the
 * shifted matrix (Dinv), from p = 0 (every iterate a descent direction), to 1e-4 of |g| or JOINT_CG_ITERATIONS.
 * work: 3 vectors of 3 nnodes. */
static void solve_newton(const pbng_gpbd_cluster *c, const double *H, const double *Dinv, double shift, const double *g, double *p, double *work)
{
  const size_t n = 3 * (size_t)c->nnodes;
  double *r = work, *z = work + n, *d = work + 2 * n;
  memset(p, 0, n * sizeof(double));
  for (size_t i = 0; i < n; ++i) r[i] = -g[i];
  for (int32_t a = 0; a < c->nnodes; ++a) mat3_vec(&Dinv[9 * a], &r[3 * a], &z[3 * a]);
  memcpy(d, z, n * sizeof(double));
  double rz = dot(r, z, n);
  const double stop = 1e-8 * dot(g, g, n);
  for (int it = 0; it < JOINT_CG_ITERATIONS && dot(r, r, n) > stop && rz > 0; ++it) {
    double *Ad = z; /* z recomputed from r below */
    hessian_times(c, H, shift, d, Ad);
    const double dAd = dot(d, Ad, n);
    if (!(dAd > 0)) break;
    const double alpha = rz / dAd;
    for (size_t i = 0; i < n; ++i) p[i] += alpha * d[i], r[i] -= alpha * Ad[i];
    for (int32_t a = 0; a < c->nnodes; ++a) mat3_vec(&Dinv[9 * a], &r[3 * a], &z[3 * a]);
    const double rz_next = dot(r, z, n);
    for (size_t i = 0; i < n; ++i) d[i] = z[i] + rz_next / rz * d[i];
    rz = rz_next;
  }
}

/* The inverse 3 x 3 diagonal blocks of the shifted Hessian (0 on the fixed nodes). */
static void block_jacobi(const pbng_gpbd_cluster *c, const double *D, double shift, double *Dinv)
{
  for (int32_t a = 0; a < c->nnodes; ++a) {
    double A[9];
    memcpy(A, &D[9 * a], sizeof(A));
    for (int k = 0; k < 3; ++k) A[4 * k] += shift;
    if (!(c->movable[a] && mat3_inverse(A, &Dinv[9 * a]) > 0)) memset(&Dinv[9 * a], 0, 9 * sizeof(double));
  }
}

/* (U3): Newton steps on the whole cluster's (U1) over all its movable nodes at once, with one delta for the cluster,
 * delta^2 = eps (eps - J_min) from its least J (Escobar et al. 2003; recomputed each step, so it falls as J_min rises),
 * the Hessian the sum of the tetrahedra's 12 x 12 ones made positive semidefinite (each F-Hessian's negative
 * eigenvalues clamped) plus a shift (1e-6 of the mean diagonal at first, raised 100-fold while a step does not decrease
 * (U1), lowered 10-fold after one that does), solved by conjugate gradients, and Armijo backtracking. Stops when no
 * tetrahedron of the cluster is inverted, when the *budget of steps (the call's, o->joint_steps) is spent, or when no
 * shift gives a decrease. Returns the tetrahedra left with J <= 0. */
static int32_t joint_newton(const pbng_gpbd_cluster *cluster, const pbng_gpbd_untangle_options *o, double *work, int *budget)
{
  const size_t nn = (size_t)cluster->nnodes;
  double *H = work, *D = H + 144 * (size_t)cluster->ntets, *Dinv = D + 9 * nn, *g = Dinv + 9 * nn, *p = g + 3 * nn, *cg = p + 3 * nn;
  uint8_t *active = (uint8_t *)(cg + 9 * nn), *grown = active + nn;
  fold_nodes(cluster, active, grown);
  pbng_gpbd_cluster fold = *cluster;
  fold.movable = active;
  const pbng_gpbd_cluster *c = &fold;
  double least;
  int32_t left = cluster_volume_ratios(c, &least);
  double relative_shift = 1e-6, delta2 = INFINITY, fall = 1.0;
  for (; *budget > 0 && left > 0; --*budget) {
    delta2 = least < o->eps ? fmin(o->eps * (o->eps - least), fall * delta2) : 0.0;
    const double K = cluster_objective(c, NULL, 0.0, delta2), scale = assemble(c, delta2, g, H, D);
    int moved = 0;
    for (int raise = 0; raise < JOINT_SHIFT_RAISES && !moved; ++raise) {
      const double shift = relative_shift * scale;
      block_jacobi(c, D, shift, Dinv);
      solve_newton(c, H, Dinv, shift, g, p, cg);
      const double slope = dot(g, p, 3 * nn);
      if (!(slope < 0)) break;
      double s = 1.0;
      for (int bt = 0; bt < UNTANGLE_BACKTRACKS && !moved; ++bt, s *= 0.5) {
        const double Kn = cluster_objective(c, p, s, delta2);
        moved = Kn <= K + 1e-4 * s * slope && Kn < K;
        if (moved) fall = K - Kn < 1e-3 * K ? JOINT_DELTA_FALL : 1.0; /* converged at this delta: lowered */
        if (moved)
          for (size_t i = 0; i < 3 * nn; ++i) c->x[i] += s * p[i];
      }
      relative_shift = moved ? fmax(relative_shift / 10.0, 1e-6) : 100.0 * relative_shift;
    }
    if (!moved) {
      --*budget;
      break;
    }
    left = cluster_volume_ratios(c, &least);
  }
  return left;
}

int32_t pbng_gpbd_untangle(const pbng_gpbd_cluster *c, const pbng_gpbd_untangle_options *o)
{
  double volume = 0.0;
  for (int32_t t = 0; t < c->ntets; ++t) volume += c->rest[t].volume;
  int32_t left = count_flipped(c);
  if (c->ntets == 0) return left;
  const double hs = 1e-6 * cbrt(volume / c->ntets); /* the difference step: 1e-6 of the elements' size */
  int joint_budget = o->joint_steps;
  for (int sweep = 0; sweep < o->sweeps && left > 0; ++sweep) {
    for (int32_t a = 0; a < c->nnodes; ++a) {
      if (!c->movable[a]) continue;
      const double least = node_least_volume_ratio(c, a);
      node_step(c, a, least < o->eps ? o->eps * (o->eps - least) : 0.0, hs);
    }
    const int32_t swept = count_flipped(c);
    if (swept > 0 && swept >= left && joint_budget > 0 && c->work) left = joint_newton(c, o, c->work, &joint_budget); /* the sweep stalled */
    else left = swept;
  }
  return left;
}
