/* The contact barrier (src/core/barrier.c, seed projective-peridynamics-membranes.txt Eq. 3, 51, 53):
 * B >= 0, B(dhat) = 0, B -> inf as its argument -> 0, B' and B'' against central differences (B' < 0,
 * B'' > 0 inside; pbng_barrier_second_derivative, SISSM's D); the rescale f of Eq. 51 against its branches, C^1 at both joints, f(d) - xi >= eps xi;
 * the bound of |B'| against dense sampling of the rescaled gaps; Eq. 53's step bound against random
 * gradients of Eq. 49. */
#include <math.h>
#include <stdio.h>
#include "core/barrier.h"
#include "test_check.h"

static void check_barrier_values(void)
{
  const double dhats[3] = {1e-3, 0.1, 2.5};
  for (int k = 0; k < 3; ++k) {
    const double dhat = dhats[k];
    check(pbng_barrier(dhat, dhat) == 0 && pbng_barrier(2 * dhat, dhat) == 0, "B(dhat) = 0 and B = 0 beyond", pbng_barrier(dhat, dhat), 0);
    check(pbng_barrier_derivative(dhat, dhat) == 0 && pbng_barrier_second_derivative(3 * dhat, dhat) == 0, "B' and B'' are 0 from dhat on", 0, 0);
    check(isinf(pbng_barrier(0, dhat)) && isinf(pbng_barrier(-dhat, dhat)) && pbng_barrier_derivative(0, dhat) == -INFINITY, "B = +inf, B' = -inf at 0 and below",
          pbng_barrier(0, dhat), 0);
    double prev = INFINITY;
    int monotone = 1, non_negative = 1;
    for (int i = 1; i <= 1000; ++i) { /* B >= 0 and decreasing on (0, dhat] */
      const double b = pbng_barrier(dhat * i / 1000.0, dhat);
      non_negative &= b >= 0;
      monotone &= b <= prev;
      prev = b;
    }
    check(non_negative && monotone, "B >= 0, non-increasing on (0, dhat]", 0, 0);
    /* B(x) -> inf as x -> 0, like dhat^2 log(dhat / x): B(dhat 10^-j) / (dhat^2 j log 10) -> 1 */
    const double last = pbng_barrier(dhat * 1e-300, dhat), growth = dhat * dhat * 300 * log(10.0);
    check(fabs(last / growth - 1) < 1e-2, "B -> inf as x -> 0 (like dhat^2 log(dhat / x))", last, growth);
    check(fabs(pbng_barrier_second_derivative(dhat * (1 - 1e-9), dhat)) < 1e-6, "B'' -> 0 at dhat (B is C^2)",
          pbng_barrier_second_derivative(dhat * (1 - 1e-9), dhat), 0);
  }
}

/* Central differences with step h = 1e-5 x: errors O(h^2 B''') plus rounding O(eps B / h). */
static void check_barrier_derivatives(void)
{
  uint64_t s = 0x5eedull;
  double worst1 = 0, worst2 = 0;
  for (int n = 0; n < 2000; ++n) {
    const double dhat = pow(10.0, -3 + 4 * next_random(&s));
    const double x = dhat * (0.01 + 0.98 * next_random(&s)), h = 1e-5 * x;
    const double d1 = pbng_barrier_derivative(x, dhat), d2 = pbng_barrier_second_derivative(x, dhat);
    const double fd1 = (pbng_barrier(x + h, dhat) - pbng_barrier(x - h, dhat)) / (2 * h);
    const double fd2 = (pbng_barrier_derivative(x + h, dhat) - pbng_barrier_derivative(x - h, dhat)) / (2 * h);
    worst1 = fmax(worst1, fabs(fd1 - d1) / (fabs(d1) + 1e-8 * dhat));
    worst2 = fmax(worst2, fabs(fd2 - d2) / (fabs(d2) + 1e-8));
    check(d1 < 0 && d2 > 0, "B' < 0 and B'' > 0 on (0, dhat)", d1, d2);
  }
  printf("barrier: worst relative central-difference error B' %.2e, B'' %.2e (2000 points)\n", worst1, worst2);
  check(worst1 < 1e-6, "B' against central differences of B", worst1, 1e-6);
  check(worst2 < 1e-6, "B'' against central differences of B'", worst2, 1e-6);
}

static void check_rescale(void)
{
  const double epss[3] = {1e-2, 0.1, 0.5}, xis[2] = {1.4e-3, 0.3};
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 2; ++b) {
      const double eps = epss[a], xi = xis[b], lo = xi, hi = (1 + 2 * eps) * xi, h = 1e-7 * xi;
      double min_gap = INFINITY, worst_fd = 0;
      for (int i = 0; i <= 4000; ++i) {
        const double d = 3 * hi * i / 4000.0, f = pbng_contact_distance_rescale(d, xi, eps);
        const double expect = d <= lo ? (1 + eps) * xi : d <= hi ? (d - xi) * (d - xi) / (4 * eps * xi) + (1 + eps) * xi : d;
        check(fabs(f - expect) <= 1e-15 * hi, "Eq. 51 branches", f, expect);
        min_gap = fmin(min_gap, f - xi);
        if (d > h) {
          const double fd = (pbng_contact_distance_rescale(d + h, xi, eps) - pbng_contact_distance_rescale(d - h, xi, eps)) / (2 * h);
          worst_fd = fmax(worst_fd, fabs(fd - pbng_contact_distance_rescale_derivative(d, xi, eps)));
        }
      }
      check(min_gap >= eps * xi * (1 - 1e-14), "f(d) - xi >= eps xi (Eq. 50)", min_gap, eps * xi);
      check(worst_fd < 1e-6, "f' against central differences (C^1: no jump at the joints)", worst_fd, 0);
      const double joint[2] = {lo, hi}, slope[2] = {0, 1};
      for (int j = 0; j < 2; ++j) {
        const double left = pbng_contact_distance_rescale(joint[j] * (1 - 1e-12), xi, eps), right = pbng_contact_distance_rescale(joint[j] * (1 + 1e-12), xi, eps);
        check(fabs(left - right) <= 1e-10 * xi, "f continuous at the joints", left, right);
        const double dl = pbng_contact_distance_rescale_derivative(joint[j] * (1 - 1e-12), xi, eps),
                     dr = pbng_contact_distance_rescale_derivative(joint[j] * (1 + 1e-12), xi, eps);
        check(fabs(dl - slope[j]) < 1e-9 && fabs(dr - slope[j]) < 1e-9, "f' continuous at the joints (0 at xi, 1 at (1 + 2 eps) xi)", dl, dr);
      }
    }
}

/* |B'(f(d) - xi)| over a dense sweep of d never exceeds the bound, which it reaches for d <= xi. */
static void check_derivative_bound(void)
{
  const double xis[3] = {0.2, 0.3, 0.5}, dhat = 1.0, eps = 0.1; /* the seed's Fig. 9 */
  for (int k = 0; k < 3; ++k) {
    const double xi = xis[k], bound = pbng_barrier_derivative_bound(xi, eps, dhat);
    double worst = 0;
    for (int i = 0; i <= 100000; ++i) {
      const double d = 2 * (xi + dhat) * i / 100000.0;
      worst = fmax(worst, fabs(pbng_barrier_derivative(pbng_contact_distance_rescale(d, xi, eps) - xi, dhat)));
    }
    check(worst <= bound && worst >= bound * (1 - 1e-15), "max |B'(f(d) - xi)| equals the bound", worst, bound);
  }
  check(pbng_barrier_derivative_bound(1.0, 0.5, 0.4) == 0, "no bound needed when eps xi >= dhat", 0, 0);
  check(isinf(pbng_barrier_derivative_bound(0.0, 0.1, 1.0)), "unbounded for xi = 0", 0, 0);
}

/* Eq. 53 against the gradient of Eq. 49 at random vertices: pairs with barycentric weights summing to
 * at most alpha0, distances anywhere (rescaled by Eq. 51), unit normals, |y - z| <= D: |lambda g_i| <=
 * eps xi. */
static void check_step_bound(void)
{
  const double eps = 0.1, xi = 1.4e-3, dhat = 4 * xi, mu = 2.0, alpha0 = 3.0, D = 0.01; /* the seed's cloth_on_table xi, dhat */
  const double dB = pbng_barrier_derivative_bound(xi, eps, dhat), lambda = pbng_contact_step_bound(eps, xi, mu, alpha0, dB, D);
  check(fabs(lambda - eps * xi / (mu * alpha0 * dB + D)) <= 1e-15 * lambda, "Eq. 53", lambda, eps * xi / (mu * alpha0 * dB + D));
  uint64_t s = 0xabcdefull;
  double worst = 0;
  for (int n = 0; n < 2000; ++n) {
    double g[3], yz[3], len = 0;
    for (int k = 0; k < 3; ++k) yz[k] = 2 * next_random(&s) - 1, len += yz[k] * yz[k];
    const double scale = D * next_random(&s) / sqrt(len);
    for (int k = 0; k < 3; ++k) g[k] = scale * yz[k];
    const int pairs = 1 + (int)(6 * next_random(&s));
    double alpha[6], sum = 0;
    for (int c = 0; c < pairs; ++c) alpha[c] = next_random(&s), sum += alpha[c];
    const double shrink = next_random(&s) * alpha0 / sum;
    for (int c = 0; c < pairs; ++c) {
      double nrm[3], l = 0;
      for (int k = 0; k < 3; ++k) nrm[k] = 2 * next_random(&s) - 1, l += nrm[k] * nrm[k];
      const double d = 2 * dhat * next_random(&s), x = pbng_contact_distance_rescale(d, xi, eps) - xi;
      for (int k = 0; k < 3; ++k) g[k] += mu * alpha[c] * shrink * -pbng_barrier_derivative(x, dhat) * nrm[k] / sqrt(l);
    }
    worst = fmax(worst, lambda * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]));
  }
  check(worst <= eps * xi * (1 + 1e-14), "lambda |g_i| <= eps xi for gradients of Eq. 49", worst, eps * xi);
}

int main(void)
{
  check_barrier_values();
  check_barrier_derivatives();
  check_rescale();
  check_derivative_bound();
  check_step_bound();
  printf("test_barrier: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
