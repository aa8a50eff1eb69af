#include "core/plasticity.h"
#include <math.h>
#include <stddef.h>

static double frobenius(const double a[9])
{
  double s = 0;
  for (int k = 0; k < 9; ++k) s += a[k] * a[k];
  return sqrt(s);
}

const char *pbng_plasticity_check(const pbng_plasticity *p, double dt)
{
  if (!(p->yield >= 0 && isfinite(p->yield))) return "plasticity: the yield must be non-negative and finite";
  if (!(p->creep >= 0 && isfinite(p->creep))) return "plasticity: the creep rate must be non-negative and finite";
  if (!(p->max > 0 && isfinite(p->max))) return "plasticity: the maximum plastic strain must be positive and finite";
  if (!(dt > 0 && dt * p->creep <= 1)) return "plasticity: creep * dt must be in [0, 1] (the flow would overshoot the elastic deviator)";
  return NULL;
}

void pbng_strain_deviator(const double e[9], double dev[9])
{
  const double third = (e[0] + e[4] + e[8]) / 3.0;
  for (int k = 0; k < 9; ++k) dev[k] = e[k] - (k % 4 == 0 ? third : 0.0);
}

int pbng_plastic_update(const pbng_plasticity *p, double dt, const double eps[9], double eps_p[9])
{
  double elastic[9], dev[9];
  int changed = 0;
  for (int k = 0; k < 9; ++k) elastic[k] = eps[k] - eps_p[k];
  pbng_strain_deviator(elastic, dev);
  if (frobenius(dev) > p->yield && p->creep > 0) {
    for (int k = 0; k < 9; ++k) eps_p[k] += dt * p->creep * dev[k];
    changed = 1;
  }
  const double norm = frobenius(eps_p);
  if (norm > p->max) {
    for (int k = 0; k < 9; ++k) eps_p[k] *= p->max / norm;
    changed = 1;
  }
  return changed;
}

void pbng_strain_to_voigt(const double e[9], double v[6])
{
  v[0] = e[0], v[1] = e[4], v[2] = e[8], v[3] = e[5], v[4] = e[2], v[5] = e[1];
}

void pbng_strain_from_voigt(const double v[6], double e[9])
{
  e[0] = v[0], e[4] = v[1], e[8] = v[2];
  e[5] = e[7] = v[3], e[2] = e[6] = v[4], e[1] = e[3] = v[5];
}

int pbng_plastic_update_at(const pbng_plasticity *p, double dt, const double F[9], double eps_p[6])
{
  double E[9], ep[9];
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) E[3 * a + b] = 0.5 * (F[a] * F[b] + F[3 + a] * F[3 + b] + F[6 + a] * F[6 + b] - (a == b ? 1.0 : 0.0));
  pbng_strain_from_voigt(eps_p, ep);
  const int changed = pbng_plastic_update(p, dt, E, ep);
  pbng_strain_to_voigt(ep, eps_p);
  return changed;
}
