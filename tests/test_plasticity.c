/* The plastic strain update of seed position-based-continuous-materials.txt Sec. 4.2
 * (src/core/plasticity.c; docs/cloth.md#plasticity): parameters refused by name; below the yield nothing
 * flows (a load below it and its release leave no plastic strain); above it one step adds exactly
 * dt creep dev(eps - eps_p); the cap keeps |eps_p| <= max along its direction; a pure dilation never
 * flows; the flow stays deviatoric; held at a strain above the yield, the elastic deviator creeps down
 * to the yield surface; released and relaxed (eps = eps_p) the plastic strain stays (a permanent set),
 * held at the rest shape it flows back. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/plasticity.h"
#include "test_check.h"

static double frob(const double a[9])
{
  double s = 0;
  for (int k = 0; k < 9; ++k) s += a[k] * a[k];
  return sqrt(s);
}

static void random_symmetric(uint64_t *s, double scale, double e[9])
{
  for (int i = 0; i < 3; ++i)
    for (int j = i; j < 3; ++j) e[3 * i + j] = e[3 * j + i] = scale * (2 * next_random(s) - 1);
}

int main(void)
{
  const pbng_plasticity p = {.yield = 0.01, .creep = 50, .max = 0.2};
  const double dt = 0.002;
  check(pbng_plasticity_check(&p, dt) == NULL, "parameters accepted", 0, 0);
  const struct {
    pbng_plasticity p;
    double dt;
    const char *expect;
  } bad[] = {{{-1, 1, 1}, 0.01, "yield"}, {{0, NAN, 1}, 0.01, "creep rate"}, {{0, 1, 0}, 0.01, "maximum"}, {{0, 200, 1}, 0.01, "creep * dt"}};
  for (int k = 0; k < 4; ++k) {
    const char *msg = pbng_plasticity_check(&bad[k].p, bad[k].dt);
    char what[160];
    snprintf(what, sizeof(what), "bad plasticity %d refused naming '%s' (got '%s')", k, bad[k].expect, msg ? msg : "(null)");
    check(msg && strstr(msg, bad[k].expect), what, 0, 0);
  }
  uint64_t s = 5;
  for (int t = 0; t < 200; ++t) {
    double eps[9], ep[9] = {0}, dev[9], before[9];
    random_symmetric(&s, 0.004, eps); /* |dev| < 0.004 * 3 < yield... checked below */
    pbng_strain_deviator(eps, dev);
    if (frob(dev) < p.yield) check(pbng_plastic_update(&p, dt, eps, ep) == 0 && frob(ep) == 0, "below the yield: no flow", frob(ep), 0);
    random_symmetric(&s, 0.1, eps);
    random_symmetric(&s, 0.02, ep);
    memcpy(before, ep, sizeof(ep));
    double el[9];
    for (int k = 0; k < 9; ++k) el[k] = eps[k] - ep[k];
    pbng_strain_deviator(el, dev);
    const int flowed = frob(dev) > p.yield;
    pbng_plastic_update(&p, dt, eps, ep);
    double worst = 0;
    for (int k = 0; k < 9; ++k) worst = fmax(worst, fabs(ep[k] - (before[k] + (flowed ? dt * p.creep * dev[k] : 0))));
    if (frob(ep) < p.max) check(worst < 1e-15, "above the yield: eps_p += dt creep dev(eps - eps_p)", worst, 0);
  }
  { /* the cap */
    double eps[9] = {1, 0.3, 0, 0.3, -1, 0, 0, 0, 0}, ep[9] = {0.19, 0, 0, 0, -0.19, 0, 0, 0, 0};
    pbng_plastic_update(&p, dt, eps, ep);
    check(fabs(frob(ep) - p.max) < 1e-15 && ep[1] > 0, "cap: |eps_p| = max along the flowed direction", frob(ep), p.max);
  }
  { /* a pure dilation never flows */
    double eps[9] = {0.3, 0, 0, 0, 0.3, 0, 0, 0, 0.3}, ep[9] = {0};
    check(pbng_plastic_update(&p, dt, eps, ep) == 0 && frob(ep) == 0, "pure dilation: no flow", frob(ep), 0);
  }
  { /* held above the yield: the elastic deviator creeps to the yield surface, the flow deviatoric;
       released: the plastic strain stays */
    double eps[9] = {0.05, 0.02, 0, 0.02, -0.01, 0.01, 0, 0.01, 0.03}, ep[9] = {0}, el[9], dev[9];
    for (int step = 0; step < 2000; ++step) pbng_plastic_update(&p, dt, eps, ep);
    for (int k = 0; k < 9; ++k) el[k] = eps[k] - ep[k];
    pbng_strain_deviator(el, dev);
    check(frob(dev) <= p.yield * (1 + 1e-12) && frob(dev) > 0.9 * p.yield, "held: the elastic deviator creeps to the yield surface", frob(dev), p.yield);
    check(fabs(ep[0] + ep[4] + ep[8]) < 1e-15, "held: the plastic flow is deviatoric (tr eps_p = 0)", ep[0] + ep[4] + ep[8], 0);
    /* released, the body relaxes to its plastic shape (eps = eps_p: no elastic strain): nothing flows back */
    double relaxed[9], kept[9];
    memcpy(relaxed, ep, sizeof(ep)), memcpy(kept, ep, sizeof(ep));
    for (int step = 0; step < 10; ++step) pbng_plastic_update(&p, dt, relaxed, ep);
    check(!memcmp(ep, kept, sizeof(ep)) && frob(ep) > p.yield, "released and relaxed: the plastic strain stays (a permanent set)", frob(ep), frob(kept));
    /* held at the rest shape instead (eps = 0), the elastic strain -eps_p is above the yield: it flows back */
    double zero[9] = {0};
    pbng_plastic_update(&p, dt, zero, ep);
    check(frob(ep) < frob(kept), "held at the rest shape: the plastic strain flows back", frob(ep), frob(kept));
  }
  printf("test_plasticity: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
