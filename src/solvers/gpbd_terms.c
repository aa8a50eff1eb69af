#include "solvers/gpbd_terms.h"
#include <math.h>
#include "core/element.h"
#include "core/stress_derivative.h"

double pbng_gpbd_material_tet_energy(const void *ctx, const double *y, double *grad, double *hess)
{
  const pbng_gpbd_material_tet *t = ctx;
  const double *B = t->rest->B, V = t->rest->volume;
  double F[9];
  pbng_gpbd_tet_deformation(t->rest, (const double(*)[3])y, F);
  const double U = V * pbng_energy_density(t->mat, F);
  if (!isfinite(U)) return INFINITY;
  if (grad) {
    double P[9], g[3];
    pbng_first_piola(t->mat, F, P);
    for (int a = 0; a < 4; ++a) {
      pbng_tet_shape_gradient(B, a, g);
      for (int i = 0; i < 3; ++i) grad[3 * a + i] = V * (P[3 * i] * g[0] + P[3 * i + 1] * g[1] + P[3 * i + 2] * g[2]);
    }
  }
  if (hess) {
    double D[81];
    pbng_stress_derivative(t->mat, F, D);
    pbng_tet_stiffness(D, B, V, hess);
  }
  return U;
}
