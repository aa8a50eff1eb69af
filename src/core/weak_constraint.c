#include "core/weak_constraint.h"
#include <math.h>
#include <string.h>

/* Adds weight w of node to the constraint's signed weights (merging repeated nodes); 0 or -1 when full. */
static int add_weight(pbng_weak_constraint *c, int64_t node, double w)
{
  for (int j = 0; j < c->nnodes; ++j)
    if (c->node[j] == node) {
      c->a[j] += w;
      return 0;
    }
  if (c->nnodes == PBNG_WC_MAX_NODES) return -1;
  c->node[c->nnodes] = node;
  c->a[c->nnodes++] = w;
  return 0;
}

static const char *check_side(int n, const double *w)
{
  double sum = 0.0;
  if (n < 1) return "weak constraint: each side needs at least one node";
  for (int j = 0; j < n; ++j) {
    if (!(w[j] >= 0.0) || !isfinite(w[j])) return "weak constraint: weights must be finite and non-negative";
    sum += w[j];
  }
  return fabs(sum - 1.0) <= 1e-12 ? NULL : "weak constraint: the weights of a side must sum to one";
}

void pbng_weak_constraint_set_stiffness(pbng_weak_constraint *c, double k_n, double k_t, const double n[3])
{
  c->k_n = k_n, c->k_t = k_t;
  for (int r = 0; r < 3; ++r) {
    c->n[r] = n[r];
    for (int s = 0; s < 3; ++s) c->K[3 * r + s] = (k_n - k_t) * n[r] * n[s] + (r == s ? k_t : 0.0);
  }
}

const char *pbng_weak_constraint_init(int n0, const int64_t *nodes0, const double *w0, int n1, const int64_t *nodes1, const double *w1,
                                      double k_n, double k_t, const double normal[3], pbng_weak_constraint *c)
{
  const char *err;
  double n[3] = {1.0, 0.0, 0.0};

  memset(c, 0, sizeof(*c));
  if ((err = check_side(n0, w0)) || (err = check_side(n1, w1))) return err;
  if (n0 + n1 > PBNG_WC_MAX_NODES) return "weak constraint: more than 8 nodes";
  if (!(k_n >= 0.0) || !(k_t >= 0.0) || !isfinite(k_n) || !isfinite(k_t)) return "weak constraint: stiffness must be finite and >= 0";
  if (normal) {
    const double len = sqrt(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]);
    if (!(len > 0.0) || !isfinite(len)) return "weak constraint: the normal must be non-zero";
    for (int d = 0; d < 3; ++d) n[d] = normal[d] / len;
  } else
    k_t = k_n; /* isotropic */
  for (int j = 0; j < n0; ++j) add_weight(c, nodes0[j], w0[j]);
  for (int j = 0; j < n1; ++j) add_weight(c, nodes1[j], -w1[j]);
  if (c->nnodes < 2) return "weak constraint: needs two distinct nodes";
  pbng_weak_constraint_set_stiffness(c, k_n, k_t, n);
  return NULL;
}

void pbng_weak_constraint_violation(const pbng_weak_constraint *c, const double *y, double C[3])
{
  C[0] = -c->target[0], C[1] = -c->target[1], C[2] = -c->target[2];
  for (int j = 0; j < c->nnodes; ++j)
    for (int d = 0; d < 3; ++d) C[d] += c->a[j] * y[3 * c->node[j] + d];
}

static void apply_stiffness(const double K[9], const double C[3], double KC[3])
{
  for (int r = 0; r < 3; ++r) KC[r] = K[3 * r] * C[0] + K[3 * r + 1] * C[1] + K[3 * r + 2] * C[2];
}

/* Whether the constraint acts at violation C: always, or for a unilateral one while n.C < 0. */
static int active(const pbng_weak_constraint *c, const double C[3])
{
  return !c->unilateral || c->n[0] * C[0] + c->n[1] * C[1] + c->n[2] * C[2] < 0.0;
}

int pbng_weak_constraint_stiffness_at(const pbng_weak_constraint *c, const double *y, double K[9])
{
  double C[3];
  pbng_weak_constraint_violation(c, y, C);
  const int on = active(c, C);
  for (int p = 0; p < 9; ++p) K[p] = on ? c->K[p] : 0.0;
  return on;
}

double pbng_weak_constraint_energy(const pbng_weak_constraint *c, const double *y)
{
  double C[3], KC[3];
  pbng_weak_constraint_violation(c, y, C);
  if (!active(c, C)) return 0.0;
  apply_stiffness(c->K, C, KC);
  return 0.5 * (C[0] * KC[0] + C[1] * KC[1] + C[2] * KC[2]);
}

void pbng_weak_constraint_node_force(const pbng_weak_constraint *c, const double *y, int j, double f[3], double H[9])
{
  double C[3], KC[3];
  pbng_weak_constraint_violation(c, y, C);
  const int on = active(c, C);
  apply_stiffness(c->K, C, KC);
  for (int d = 0; d < 3; ++d) f[d] = on ? -c->a[j] * KC[d] : 0.0;
  if (H)
    for (int p = 0; p < 9; ++p) H[p] = on ? c->a[j] * c->a[j] * c->K[p] : 0.0;
}

void pbng_weak_constraint_node_rows(int64_t n, const pbng_weak_constraint *c, int32_t *rows)
{
  for (int64_t k = 0; k < n; ++k)
    for (int j = 0; j < PBNG_WC_MAX_NODES; ++j) rows[k * PBNG_WC_MAX_NODES + j] = j < c[k].nnodes ? (int32_t)c[k].node[j] : -1;
}
