/* Global sums that do not depend on the number of ranks or threads, nor on the order of the terms:
 * the sum is accumulated exactly, as an integer multiple of 2^-1074 (the smallest double) held in
 * 32-bit limbs of int64 counters, and rounded to a double only once, after the ranks' limbs are added
 * up. Every term is added as it is computed (pbng_exact_sum_add): a sum over millions of elements needs
 * no array of its terms. Used for the residual, the energy and the line searches' slopes. */
#ifndef PBNG_PARALLEL_REDUCE_H
#define PBNG_PARALLEL_REDUCE_H

#include <mpi.h>
#include <petscvec.h>
#include <stdint.h>

/* Limb k weighs 2^(32 k - 1074); 68 limbs hold any sum of up to 2^60 finite doubles. */
enum { PBNG_EXACT_LIMBS = 68 };

typedef struct {
  int64_t limb[PBNG_EXACT_LIMBS];
  int64_t pending;  /* terms added since the limbs were last normalised (each limb then in [0, 2^32)) */
  int64_t not_finite; /* terms that were NaN or -inf */
  int64_t infinite;   /* terms that were +inf (an energy with no value: neohookean_log's inverted elements) */
} pbng_exact_sum;

void pbng_exact_sum_zero(pbng_exact_sum *s);
/* s += v, exactly (a non-finite v is counted instead: +inf apart from NaN and -inf). */
void pbng_exact_sum_add(pbng_exact_sum *s, double v);
/* into += from, exactly (e.g. each thread's sum into the rank's). */
void pbng_exact_sum_merge(pbng_exact_sum *into, const pbng_exact_sum *from);
/* *sum = the sum over every rank's s, rounded once to a double; NaN when any rank added a NaN or -inf
 * term, else +inf when any added +inf. The same value on every rank. Collective; s is left normalised. */
PetscErrorCode pbng_exact_sum_allreduce(MPI_Comm comm, pbng_exact_sum *s, double *sum);
/* n such sums in one reduction: sum[k] of s[k] (fewer synchronisations: an energy and a slope together). */
PetscErrorCode pbng_exact_sums_allreduce(MPI_Comm comm, int n, pbng_exact_sum *s, double *sum);
/* dots[k] = x . y[k] (k < n) over every rank, in one reduction: each node's three products summed in their order,
 * then the nodes' terms summed exactly, so that the value does not depend on the ranks and threads (VecMDot's
 * does). For vectors of 3 entries per node (the local sizes multiples of 3). Collective. */
PetscErrorCode pbng_exact_dots(Vec x, int n, const Vec *y, double *dots);

/* *sum = the sum over all ranks of every entry of arrays[0..narrays-1] (counts[k] entries each), as
 * above. Collective. A non-finite term is an error (PETSC_ERR_FP). */
PetscErrorCode pbng_reproducible_sum(MPI_Comm comm, int narrays, const double *const *arrays, const int64_t *counts,
                                     double *sum);

/* Communication so far, as PETSc's logging counts it on this rank (its MPI macros count pbng's own calls too):
 * reductions (all-reduces and all-to-alls on a communicator of more than one rank; none on one rank), messages
 * sent point to point and their bytes. Differences of two readings give the work between them. */
typedef struct {
  double reductions, messages, bytes;
} pbng_comm_counts;

void pbng_comm_counts_now(pbng_comm_counts *c);
/* into += (later - earlier). */
void pbng_comm_counts_add_since(pbng_comm_counts *into, const pbng_comm_counts *earlier, const pbng_comm_counts *later);

/* A piece of work's wall time and communication over all its calls (this rank), and, with an event (>= 0),
 * its PETSc log event, so that -log_view lists it too: pbng_work_begin at its start, pbng_work_end at its end. */
typedef struct {
  double seconds;
  pbng_comm_counts comm;
  PetscLogEvent event; /* -1: none */
} pbng_work_meter;
typedef struct {
  double t;
  pbng_comm_counts comm;
} pbng_work_mark;

PetscErrorCode pbng_work_begin(const pbng_work_meter *meter, pbng_work_mark *mark);
PetscErrorCode pbng_work_end(pbng_work_meter *meter, const pbng_work_mark *mark);

#endif
