/* The Chebyshev semi-iterative weight (the PBNG paper's Eq. 39, after Wang 2015), shared by PBNG's sweep and SISSM. */
#ifndef PBNG_CORE_CHEBYSHEV_H
#define PBNG_CORE_CHEBYSHEV_H

/* omega_{l+1} after iteration l (0-based) from omega_l, with the spectral radius estimate rho: 1 for the first two
 * iterations, 2 / (2 - rho^2) at the third, 4 / (4 - rho^2 omega_l) after. */
static inline double pbng_chebyshev_omega(int l, double rho, double omega_l)
{
  if (l < 2) return 1.0;
  if (l == 2) return 2.0 / (2.0 - rho * rho);
  return 4.0 / (4.0 - rho * rho * omega_l);
}

#endif
