#include "core/barrier.h"
#include <math.h>

double pbng_barrier(double x, double dhat)
{
  if (!(x > 0)) return INFINITY;
  if (x >= dhat) return 0;
  const double r = x - dhat;
  return -r * r * log(x / dhat); /* Eq. 3 */
}

double pbng_barrier_derivative(double x, double dhat)
{
  if (!(x > 0)) return -INFINITY;
  if (x >= dhat) return 0;
  const double r = x - dhat;
  return -2 * r * log(x / dhat) - r * r / x; /* -[ (d - dhat)^2 / d + 2 (d - dhat) log(d / dhat) ] of Eq. 49 */
}

double pbng_barrier_second_derivative(double x, double dhat)
{
  if (!(x > 0)) return INFINITY;
  if (x >= dhat) return 0;
  const double r = x - dhat;
  return -2 * log(x / dhat) - 4 * r / x + r * r / (x * x); /* d/dx of pbng_barrier_derivative's */
}

double pbng_contact_distance_rescale(double d, double xi, double eps)
{
  if (d <= xi) return (1 + eps) * xi; /* Eq. 51, first branch */
  if (d <= (1 + 2 * eps) * xi) return (d - xi) * (d - xi) / (4 * eps * xi) + (1 + eps) * xi;
  return d;
}

double pbng_contact_distance_rescale_derivative(double d, double xi, double eps)
{
  if (d <= xi) return 0;
  if (d <= (1 + 2 * eps) * xi) return (d - xi) / (2 * eps * xi);
  return 1;
}

double pbng_barrier_derivative_bound(double xi, double eps, double dhat)
{
  return fabs(pbng_barrier_derivative(eps * xi, dhat));
}

double pbng_contact_step_bound(double eps, double xi, double mu, double alpha0, double dB_bound, double displacement_bound)
{
  return eps * xi / (mu * alpha0 * dB_bound + displacement_bound); /* Eq. 53 */
}
