/* Unit tests of src/core/weak_constraint.c (Sec. 4.1, Eq. 18-19): the force is minus the energy's
 * gradient (central differences), the Hessian block is the force's derivative, the forces of a
 * constraint sum to zero (momentum), isotropic and anisotropic stiffness act as stated, and invalid
 * constraints are rejected with a message. */
#include "core/weak_constraint.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static long checks, failures;

static void check(int ok, const char *what, double value)
{
  ++checks;
  if (!ok && ++failures <= 40) printf("FAIL: %s (%.6e)\n", what, value);
}

/* Deterministic pseudo-random numbers in [lo, hi) (64-bit LCG, top 53 bits). */
static double uniform(unsigned long long *s, double lo, double hi)
{
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

/* n non-negative weights summing to one. */
static void random_weights(unsigned long long *s, int n, double *w)
{
  double sum = 0.0;
  for (int j = 0; j < n; ++j) sum += (w[j] = uniform(s, 0.0, 1.0));
  for (int j = 0; j < n; ++j) w[j] /= sum;
  double rest = 1.0;
  for (int j = 0; j + 1 < n; ++j) rest -= w[j];
  w[n - 1] = rest; /* exact sum */
}

static void check_derivatives(const pbng_weak_constraint *c, double *y, const char *label)
{
  const double h = 1e-6;
  char what[128];
  double fsum[3] = {0, 0, 0}, fscale = 0.0;

  for (int j = 0; j < c->nnodes; ++j) {
    double f[3], H[9];
    pbng_weak_constraint_node_force(c, y, j, f, H);
    for (int d = 0; d < 3; ++d) fsum[d] += f[d], fscale = fmax(fscale, fabs(f[d]));
    for (int d = 0; d < 3; ++d) {
      double *yd = &y[3 * c->node[j] + d], fp[3], fm[3];
      const double y0 = *yd;
      *yd = y0 + h;
      const double ep = pbng_weak_constraint_energy(c, y);
      pbng_weak_constraint_node_force(c, y, j, fp, NULL);
      *yd = y0 - h;
      const double em = pbng_weak_constraint_energy(c, y);
      pbng_weak_constraint_node_force(c, y, j, fm, NULL);
      *yd = y0;
      const double grad = (ep - em) / (2 * h);
      snprintf(what, sizeof(what), "%s: node %d dir %d: force = -dE/dy", label, j, d);
      check(fabs(f[d] + grad) <= 1e-6 * (1.0 + fabs(grad)), what, f[d] + grad);
      for (int r = 0; r < 3; ++r) {
        const double dfd = -(fp[r] - fm[r]) / (2 * h);
        snprintf(what, sizeof(what), "%s: node %d: Hessian block (%d,%d) = -df/dy", label, j, r, d);
        check(fabs(H[3 * r + d] - dfd) <= 1e-6 * (1.0 + fabs(dfd)), what, H[3 * r + d] - dfd);
      }
    }
  }
  for (int d = 0; d < 3; ++d) {
    snprintf(what, sizeof(what), "%s: forces sum to zero", label);
    check(fabs(fsum[d]) <= 1e-12 * (1.0 + fscale), what, fsum[d]);
  }
}

static void check_random_constraints(void)
{
  unsigned long long s = 12345;
  for (int t = 0; t < 200; ++t) {
    const int n0 = 1 + t % 4, n1 = 1 + (t / 4) % 4;
    int64_t nodes0[4], nodes1[4];
    double w0[4], w1[4], y[3 * 16], normal[3];
    for (int j = 0; j < n0; ++j) nodes0[j] = j;
    for (int j = 0; j < n1; ++j) nodes1[j] = 8 + j + (t % 3 == 0 && j == 0 ? -8 : 0); /* sometimes a shared node */
    random_weights(&s, n0, w0);
    random_weights(&s, n1, w1);
    for (int k = 0; k < 3 * 16; ++k) y[k] = uniform(&s, -1.0, 1.0);
    for (int d = 0; d < 3; ++d) normal[d] = uniform(&s, -1.0, 1.0);
    pbng_weak_constraint c;
    const char *err = pbng_weak_constraint_init(n0, nodes0, w0, n1, nodes1, w1, uniform(&s, 1.0, 1e3), uniform(&s, 0.0, 1e3),
                                                t % 2 ? normal : NULL, &c);
    if (err && n0 == 1 && n1 == 1 && t % 3 == 0) continue; /* the same single node on both sides */
    check(err == NULL, err ? err : "init", 0.0);
    if (!err) check_derivatives(&c, y, t % 2 ? "anisotropic" : "isotropic");
  }
}

/* A unit spring along x between node 0 and node 1: energy 1/2 k |x1 - x0 - 0|^2 for isotropic k;
 * with normal n = x and k_t = 0, motion across n costs nothing. */
static void check_stiffness_meaning(void)
{
  const int64_t a = 0, b = 1;
  const double one = 1.0, y[6] = {0, 0, 0, 0.5, 0.25, 0}, nx[3] = {2, 0, 0};
  pbng_weak_constraint c;
  check(pbng_weak_constraint_init(1, &a, &one, 1, &b, &one, 4.0, 4.0, NULL, &c) == NULL, "isotropic init", 0);
  const double e_iso = pbng_weak_constraint_energy(&c, y);
  check(fabs(e_iso - 0.5 * 4.0 * (0.25 + 0.0625)) <= 1e-14, "isotropic energy 1/2 k |C|^2", e_iso);
  check(pbng_weak_constraint_init(1, &a, &one, 1, &b, &one, 4.0, 0.0, nx, &c) == NULL, "anisotropic init", 0);
  const double e_n = pbng_weak_constraint_energy(&c, y);
  check(fabs(e_n - 0.5 * 4.0 * 0.25) <= 1e-14, "anisotropic: only the normal component costs", e_n);
}

static void check_rejections(void)
{
  const int64_t n2[2] = {0, 1}, n1[1] = {2}, many[5] = {0, 1, 2, 3, 4};
  const double half[2] = {0.5, 0.5}, bad_sum[2] = {0.5, 0.6}, negative[2] = {1.5, -0.5}, one = 1.0, fifth[5] = {0.2, 0.2, 0.2, 0.2, 0.2};
  const double zero[3] = {0, 0, 0}, quarter[4] = {0.25, 0.25, 0.25, 0.25};
  pbng_weak_constraint c;
  const char *e;
  e = pbng_weak_constraint_init(2, n2, bad_sum, 1, n1, &one, 1.0, 1.0, NULL, &c);
  check(e && strstr(e, "sum to one"), "weights not summing to one rejected", 0);
  e = pbng_weak_constraint_init(2, n2, negative, 1, n1, &one, 1.0, 1.0, NULL, &c);
  check(e && strstr(e, "non-negative"), "negative weight rejected", 0);
  e = pbng_weak_constraint_init(2, n2, half, 1, n1, &one, -1.0, 1.0, NULL, &c);
  check(e && strstr(e, "stiffness"), "negative stiffness rejected", 0);
  e = pbng_weak_constraint_init(2, n2, half, 1, n1, &one, 1.0, 1.0, zero, &c);
  check(e && strstr(e, "normal"), "zero normal rejected", 0);
  e = pbng_weak_constraint_init(5, many, fifth, 4, many, quarter, 1.0, 1.0, NULL, &c);
  check(e && strstr(e, "more than 8"), "too many nodes rejected", 0);
  e = pbng_weak_constraint_init(1, n1, &one, 1, n1, &one, 1.0, 1.0, NULL, &c);
  check(e && strstr(e, "two distinct"), "a constraint of one node rejected", 0);
  e = pbng_weak_constraint_init(0, n1, &one, 1, n1, &one, 1.0, 1.0, NULL, &c);
  check(e != NULL, "an empty side rejected", 0);
}

/* Contacts (issue 17): a target (C = sum a_j y_j - target) and the unilateral form. Derivatives by
 * differences away from the switch n.C = 0; the unilateral constraint acts exactly while n.C < 0. */
static void check_contact_forms(void)
{
  unsigned long long s = 777;
  for (int t = 0; t < 200; ++t) {
    pbng_weak_constraint c;
    memset(&c, 0, sizeof(c));
    double y[3 * 4], n[3], nn = 0;
    for (int d = 0; d < 3; ++d) n[d] = uniform(&s, -1.0, 1.0), nn += n[d] * n[d];
    for (int d = 0; d < 3; ++d) n[d] /= sqrt(nn);
    c.nnodes = t % 2 ? 1 : 4; /* an obstacle contact, or a vertex against a triangle */
    double w[3];
    random_weights(&s, 3, w);
    for (int j = 0; j < c.nnodes; ++j) c.node[j] = j, c.a[j] = j == 0 ? 1.0 : -w[j - 1];
    for (int d = 0; d < 3; ++d) c.target[d] = c.nnodes == 1 ? uniform(&s, -1.0, 1.0) : 0.0;
    c.unilateral = t % 4 >= 2;
    pbng_weak_constraint_set_stiffness(&c, uniform(&s, 1.0, 1e3), c.unilateral ? 0.0 : uniform(&s, 0.0, 1e3), n);
    for (int k = 0; k < 12; ++k) y[k] = uniform(&s, -1.0, 1.0);
    double C[3], K[9];
    pbng_weak_constraint_violation(&c, y, C);
    const double nC = n[0] * C[0] + n[1] * C[1] + n[2] * C[2];
    if (fabs(nC) < 1e-3) continue; /* the switch: not differentiable there */
    const int on = pbng_weak_constraint_stiffness_at(&c, y, K);
    check(on == (!c.unilateral || nC < 0), "unilateral: acts exactly while n.C < 0", nC);
    const double E = pbng_weak_constraint_energy(&c, y);
    if (c.unilateral) check(nC < 0 ? fabs(E - 0.5 * c.k_n * nC * nC) <= 1e-12 * (1 + E) : E == 0.0, "unilateral energy 1/2 k_n min(n.C, 0)^2", E);
    if (c.nnodes == 1) { /* C = y_0 - target */
      for (int d = 0; d < 3; ++d) check(fabs(C[d] - (y[d] - c.target[d])) <= 1e-15, "target subtracted", C[d]);
      double f[3], H[9]; /* one node: no sum-to-zero; force = -dE/dy by differences */
      pbng_weak_constraint_node_force(&c, y, 0, f, H);
      for (int d = 0; d < 3; ++d) {
        const double h = 1e-6, y0 = y[d];
        y[d] = y0 + h;
        const double ep = pbng_weak_constraint_energy(&c, y);
        y[d] = y0 - h;
        const double em = pbng_weak_constraint_energy(&c, y);
        y[d] = y0;
        check(fabs(f[d] + (ep - em) / (2 * h)) <= 1e-6 * (1.0 + fabs(f[d])), "obstacle contact: force = -dE/dy", f[d]);
      }
    } else
      check_derivatives(&c, y, c.unilateral ? "unilateral contact" : "contact spring");
  }
}

int main(void)
{
  check_random_constraints();
  check_contact_forms();
  check_stiffness_meaning();
  check_rejections();
  printf("test_weak_constraint: %ld checks, %ld failed\n", checks, failures);
  return failures != 0;
}
