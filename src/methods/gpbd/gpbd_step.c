#include "methods/gpbd/gpbd_step.h"
#include <string.h>

void pbng_gpbd_tet_term_init(const pbng_material *mat, const double B[9], double V, pbng_gpbd_element_term *t)
{
  memcpy(t->tet.B, B, sizeof(t->tet.B));
  t->tet.volume = V;
  t->mat = mat;
  t->n = 4, t->k = 6, t->sheet = 0;
  t->tet_ctx = (pbng_gpbd_material_tet){mat, &t->tet};
  t->term = (pbng_gpbd_term){.nnodes = 4, .k = 6, .energy = pbng_gpbd_material_tet_energy, .ctx = &t->tet_ctx};
}

void pbng_gpbd_sheet_term_init(const pbng_sheet_material *mat, pbng_element_kind kind, const pbng_sheet_rest *rest, pbng_gpbd_element_term *t)
{
  t->n = kind == PBNG_ELEMENT_TRI3 ? 3 : kind == PBNG_ELEMENT_CLOTH6 ? 6 : 4;
  t->k = kind == PBNG_ELEMENT_CLOTH6 ? 6 : 3, t->sheet = 1;
  t->mat = NULL;
  t->sheet_ctx = (pbng_gpbd_sheet_term){mat, kind, rest, {0, 0, 0}};
  t->term = (pbng_gpbd_term){.nnodes = t->n, .k = t->k, .energy = pbng_gpbd_sheet_energy, .ctx = &t->sheet_ctx};
}

/* s and S = ds/dx (k x 3n, row-major) at x. */
static void element_strain(const pbng_gpbd_element_term *t, const double (*x)[3], double *s, double *S)
{
  if (t->sheet) pbng_gpbd_sheet_strain(&t->sheet_ctx, x, s, S);
  else pbng_gpbd_tet_strain(&t->tet, x, s, (double(*)[12])S);
}

/* A scale of each node's force at x below which it is round-off (the local Newton's gradient floor). */
static void node_force_scales(const pbng_gpbd_element_term *t, const double (*x)[3], const double *s, double *fa)
{
  if (t->sheet) pbng_gpbd_sheet_force_scales(&t->sheet_ctx, x, fa);
  else pbng_gpbd_tet_force_scales(&t->tet, t->mat->k_shear, t->mat->k_volume, s, fa);
}

/* dp = W S^T mu, the W^-1-orthogonal projection of d on col(W S^T) (its complement is null(S), the term's
 * infinitesimal rigid motions). */
static void subspace_part(int n, int k, const double *w, const double *S, const double *d, double *dp)
{
  const int dof = 3 * n;
  double A[PBNG_GPBD_MAX_K * PBNG_GPBD_MAX_K] = {0}, b[PBNG_GPBD_MAX_K] = {0}, mu[PBNG_GPBD_MAX_K] = {0};
  int all = 1;
  for (int a = 0; a < n; ++a) all &= w[a] > 0;
  for (int r = 0; r < k; ++r) {
    b[r] = 0.0;
    for (int j = 0; j < dof; ++j) b[r] += S[dof * r + j] * d[j];
    for (int c = 0; c <= r; ++c) {
      double v = 0.0;
      for (int j = 0; j < dof; ++j) v += S[dof * r + j] * w[j / 3] * S[dof * c + j];
      A[k * r + c] = A[k * c + r] = v;
    }
  }
  pbng_gpbd_subspace_multipliers(k, A, b, all, mu);
  for (int j = 0; j < dof; ++j) {
    double v = 0.0;
    for (int r = 0; r < k; ++r) v += S[dof * r + j] * mu[r];
    dp[j] = w[j / 3] * v;
  }
}

/* pbng_gpbd_term_step with the sizes as constants: the tetrahedron's (n 4, k 6) code is compiled for them. */
static inline __attribute__((always_inline)) int term_step_sized(pbng_gpbd_element_term *t, const pbng_gpbd_step_options *o, int n, int k, double x[][3],
                                                                 const double *w, const double *d, double *dd, double *pre)
{
  const int dof = 3 * n;
  double s[PBNG_GPBD_MAX_K], S[PBNG_GPBD_MAX_K * PBNG_GPBD_MAX_DOF], dl[PBNG_GPBD_MAX_K];
  int moving = 0;
  for (int a = 0; a < n; ++a) moving |= w[a] > 0;
  memset(dd, 0, sizeof(double) * (size_t)dof);
  memset(pre, 0, sizeof(double) * (size_t)dof);
  if (!moving) return 0;
  if (!t->sheet && o->uninvert_min >= 0) pbng_gpbd_tet_uninvert_moving(&t->tet, o->uninvert_min, w, (double(*)[3])x, pre);
  if (t->sheet) pbng_gpbd_sheet_reference_normal(&t->sheet_ctx, (const double(*)[3])x);
  element_strain(t, (const double(*)[3])x, s, S);
  double dp[PBNG_GPBD_MAX_DOF], drift[PBNG_GPBD_MAX_DOF] = {0};
  memcpy(dp, d, sizeof(double) * (size_t)dof);
  if (o->project) { /* d <- its part in col(W S^T), x moved by the rest */
    subspace_part(n, k, w, S, d, dp);
    for (int j = 0; j < dof; ++j) {
      drift[j] = d[j] - dp[j];
      x[j / 3][j % 3] -= drift[j];
    }
  }
  pbng_gpbd_newton_options opt = o->newton;
  double fa[PBNG_GPBD_MAX_NODES];
  node_force_scales(t, (const double(*)[3])x, s, fa);
  opt.gtol = pbng_gpbd_gradient_floor(n, k, S, dp, w, fa, opt.gtol);
  pbng_gpbd_local_result res;
  const pbng_gpbd_status st = pbng_gpbd_local_solve(&t->term, &x[0][0], w, dp, S, &opt, dl, dd, &res);
  if (st == PBNG_GPBD_INVALID_START) memset(dd, 0, sizeof(double) * (size_t)dof);
  for (int j = 0; j < dof; ++j) dd[j] -= drift[j];
  return res.iterations;
}

int pbng_gpbd_term_step(pbng_gpbd_element_term *t, const pbng_gpbd_step_options *o, double x[][3], const double *w, const double *d, double *dd, double *pre)
{
  if (!t->sheet) return term_step_sized(t, o, 4, 6, x, w, d, dd, pre);
  if (t->n == 6) return term_step_sized(t, o, 6, 6, x, w, d, dd, pre); /* the cloth6 stencil */
  return t->n == 3 ? term_step_sized(t, o, 3, 3, x, w, d, dd, pre) : term_step_sized(t, o, 4, 3, x, w, d, dd, pre);
}
