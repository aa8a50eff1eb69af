#include "parallel/reduce.h"
#include <math.h>

enum { FRACTION_BITS = 100, LIMBS = 4 };

/* [0]: the largest |term|; [1]: 1 when a term is not finite (fmax alone would skip NaNs), else 0. */
static void local_max_abs(int narrays, const double *const *arrays, const int64_t *counts, double out[2])
{
  out[0] = out[1] = 0.0;
  for (int a = 0; a < narrays; ++a)
    for (int64_t k = 0; k < counts[a]; ++k) {
      if (!isfinite(arrays[a][k])) out[1] = 1.0;
      else out[0] = fmax(out[0], fabs(arrays[a][k]));
    }
}

/* Adds round(v 2^(FRACTION_BITS - e)) to the limb sums (limb k weighs 2^(32 k)). */
static void add_fixed_point(double v, int e, int64_t limb[LIMBS])
{
  const __int128 t = (__int128)ldexp(v, FRACTION_BITS - e); /* |t| < 2^100: exact scaling, truncated */
  for (int k = 0; k < LIMBS - 1; ++k) limb[k] += (int64_t)((t >> (32 * k)) & 0xffffffff);
  limb[LIMBS - 1] += (int64_t)(t >> (32 * (LIMBS - 1)));
}

PetscErrorCode pbng_reproducible_sum(MPI_Comm comm, int narrays, const double *const *arrays, const int64_t *counts,
                                     double *sum)
{
  double mine[2], max[2];
  int64_t limb[LIMBS] = {0}, total[LIMBS];
  int e;

  PetscFunctionBeginUser;
  local_max_abs(narrays, arrays, counts, mine);
  PetscCallMPI(MPI_Allreduce(mine, max, 2, MPI_DOUBLE, MPI_MAX, comm));
  PetscCheck(max[1] == 0.0, comm, PETSC_ERR_FP, "non-finite value in a global sum (the solution diverged?)");
  const double global = max[0];
  *sum = 0.0;
  if (global == 0.0) PetscFunctionReturn(0);
  e = ilogb(global) + 1; /* every |term| < 2^e */
  for (int a = 0; a < narrays; ++a)
    for (int64_t k = 0; k < counts[a]; ++k) add_fixed_point(arrays[a][k], e, limb);
  PetscCallMPI(MPI_Allreduce(limb, total, LIMBS, MPI_INT64_T, MPI_SUM, comm));
  for (int k = LIMBS - 1; k >= 0; --k) *sum += ldexp((double)total[k], 32 * k + e - FRACTION_BITS);
  PetscFunctionReturn(0);
}
