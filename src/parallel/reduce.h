/* Global sums that do not depend on the number of ranks or threads, nor on the order of the terms:
 * every term is rounded once to a fixed-point grid set by the global largest magnitude (2^-100 of
 * it), the integers are summed exactly in 32-bit limbs held in int64, and only the final limb sums
 * are converted back. Used for the residual and the energy. */
#ifndef PBNG_PARALLEL_REDUCE_H
#define PBNG_PARALLEL_REDUCE_H

#include <mpi.h>
#include <petscsys.h>
#include <stdint.h>

/* *sum = the sum over all ranks of every entry of arrays[0..narrays-1] (counts[k] entries each).
 * Collective. Terms must be finite; at most 2^31 terms per rank. */
PetscErrorCode pbng_reproducible_sum(MPI_Comm comm, int narrays, const double *const *arrays, const int64_t *counts,
                                     double *sum);

#endif
