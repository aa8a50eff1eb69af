/* Unit tests of src/parallel/reduce.c, the exact global sum: known sums that double arithmetic gets
 * wrong (cancellation of huge terms, subnormals, magnitudes beyond what a double sum survives), the
 * same bits in any order and any split into per-thread sums, agreement with a long-double sum where
 * that is accurate, more terms than one normalisation interval, NaN for non-finite terms, and the
 * array form's error. Run on 1 or more ranks (each rank adds a share; the expected values are the
 * totals). */
#include "parallel/reduce.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static long checks, failures;

static void check(int ok, const char *what, double value, double expected)
{
  ++checks;
  if (!ok && ++failures <= 40) printf("FAIL: %s (%.17g, expected %.17g)\n", what, value, expected);
}

static unsigned long long next(unsigned long long *s)
{
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

/* A term of random sign, mantissa and exponent in [lo, hi]. */
static double random_term(unsigned long long *s, int lo, int hi)
{
  const double m = 1.0 + (double)next(s) / 9007199254740992.0;
  const int e = lo + (int)(next(s) % (unsigned long long)(hi - lo + 1));
  return (next(s) & 1 ? -1.0 : 1.0) * ldexp(m, e);
}

/* The global sum of the terms this rank takes (every size-th from its rank on). */
static double global_sum(MPI_Comm comm, const double *terms, int n)
{
  int rank, size;
  pbng_exact_sum s;
  double sum;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  pbng_exact_sum_zero(&s);
  for (int k = rank; k < n; k += size) pbng_exact_sum_add(&s, terms[k]);
  if (pbng_exact_sum_allreduce(comm, &s, &sum)) return -INFINITY;
  return sum;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof(a)) == 0; }

/* v plus pairs t, -t of every magnitude, shuffled: exactly v. */
static void test_cancellation(MPI_Comm comm)
{
  enum { N = 2001 };
  static double t[N];
  unsigned long long s = 12345;
  const double values[] = {1.0, -3.5, 0x1p-1074, -0x1p-1070 * 7, 1e-300, 12345.678, -0x1.fffffffffffffp1023};
  for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); ++v) {
    t[0] = values[v];
    for (int k = 1; k < N; k += 2) t[k] = random_term(&s, -1074, 1020), t[k + 1] = -t[k];
    for (int k = N - 1; k > 0; --k) { /* Fisher-Yates */
      const int j = (int)(next(&s) % (unsigned long long)(k + 1));
      const double x = t[k];
      t[k] = t[j], t[j] = x;
    }
    const double sum = global_sum(comm, t, N);
    check(same_bits(sum, values[v]), "huge cancelling terms leave the small one exactly", sum, values[v]);
  }
}

/* Terms whose partial double sums overflow or underflow. */
static void test_range(MPI_Comm comm)
{
  const double big[] = {DBL_MAX, DBL_MAX, -DBL_MAX};
  double sum = global_sum(comm, big, 3);
  check(sum == DBL_MAX, "DBL_MAX + DBL_MAX - DBL_MAX", sum, DBL_MAX);
  const double over[] = {DBL_MAX, DBL_MAX};
  sum = global_sum(comm, over, 2);
  check(isinf(sum) && sum > 0, "a sum beyond the double range is +inf", sum, INFINITY);
  const double tiny[] = {0x1p-1074, 0x1p-1074, 0x1p-1074, -0x1p-1073};
  sum = global_sum(comm, tiny, 4);
  check(same_bits(sum, 0x1p-1074), "subnormals add exactly", sum, 0x1p-1074);
  const double zero[] = {0.0, -0.0, 5.0, -5.0};
  sum = global_sum(comm, zero, 4);
  check(sum == 0.0, "zeros and an exact cancellation give 0", sum, 0.0);
  const double negative[] = {-1e-20, -1.0, 1e-20, -2.0};
  sum = global_sum(comm, negative, 4);
  check(sum == -3.0, "a negative total", sum, -3.0);
}

/* The same bits whatever the order and the split into merged partial sums; close to a long-double
 * sum of positive terms (where that sum is accurate to ~1e-19 relative). */
static void test_order_and_merge(MPI_Comm comm)
{
  enum { N = 100000 };
  static double t[N];
  unsigned long long s = 777;
  long double reference = 0.0L;
  for (int k = 0; k < N; ++k) t[k] = fabs(random_term(&s, -30, 30)), reference += t[k];
  const double forward = global_sum(comm, t, N);
  for (int k = 0; k < N / 2; ++k) {
    const double x = t[k];
    t[k] = t[N - 1 - k], t[N - 1 - k] = x;
  }
  const double backward = global_sum(comm, t, N);
  check(same_bits(forward, backward), "reversed order: the same bits", backward, forward);
  double rank_sum;
  for (int parts = 2; parts <= 7; ++parts) { /* "threads": sums over interleaved shares, merged */
    pbng_exact_sum total, part;
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    pbng_exact_sum_zero(&total);
    for (int p = 0; p < parts; ++p) {
      pbng_exact_sum_zero(&part);
      for (int k = rank + size * p; k < N; k += size * parts) pbng_exact_sum_add(&part, t[k]);
      pbng_exact_sum_merge(&total, &part);
    }
    pbng_exact_sum_allreduce(comm, &total, &rank_sum);
    check(same_bits(rank_sum, forward), "merged partial sums: the same bits", rank_sum, forward);
  }
  check(fabs(forward - (double)reference) <= 1e-15 * (double)reference, "agrees with a long-double sum", forward, (double)reference);
}

/* More terms than one normalisation interval (2^27): limbs do not overflow. */
static void test_many_terms(MPI_Comm comm)
{
  int size;
  pbng_exact_sum s;
  double sum;
  const long long n = (1LL << 27) + 12345;
  MPI_Comm_size(comm, &size);
  pbng_exact_sum_zero(&s);
  for (long long k = 0; k < n; ++k) pbng_exact_sum_add(&s, 0x1.fffffffffffffp900); /* every mantissa bit set */
  pbng_exact_sum_allreduce(comm, &s, &sum);
  const double expected = (double)n * (double)size * 0x1.fffffffffffffp900;
  check(fabs(sum - expected) <= 2e-16 * expected, "2^27 + 12345 large terms per rank", sum, expected);
}

static void test_not_finite(MPI_Comm comm)
{
  const double with_nan[] = {1.0, NAN, 2.0}, with_inf[] = {INFINITY, -INFINITY};
  double sum = global_sum(comm, with_nan, 3);
  check(isnan(sum), "a NaN term gives NaN", sum, NAN);
  sum = global_sum(comm, with_inf, 2);
  check(isnan(sum), "infinite terms give NaN", sum, NAN);
  const double with_plus_inf[] = {1.0, INFINITY, 2.0, INFINITY}, with_minus_inf[] = {1.0, -INFINITY};
  sum = global_sum(comm, with_plus_inf, 4);
  check(sum == INFINITY, "+inf terms (and finite ones) give +inf", sum, INFINITY);
  sum = global_sum(comm, with_minus_inf, 2);
  check(isnan(sum), "a -inf term gives NaN", sum, NAN);
  const double *arrays[1] = {with_nan};
  const int64_t counts[1] = {3};
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  PetscErrorCode ierr = pbng_reproducible_sum(comm, 1, arrays, counts, &sum);
  PetscPopErrorHandler();
  check(ierr == PETSC_ERR_FP, "the array form refuses a non-finite term", (double)ierr, PETSC_ERR_FP);
  const double ok[] = {0.5, 0.25}, more[] = {1e300, -1e300, 0.125};
  const double *both[2] = {ok, more};
  const int64_t both_counts[2] = {2, 3};
  int size;
  MPI_Comm_size(comm, &size);
  ierr = pbng_reproducible_sum(comm, 2, both, both_counts, &sum); /* every rank adds both arrays */
  check(ierr == 0 && sum == 0.875 * size, "the array form sums every array of every rank", sum, 0.875 * size);
}

int main(int argc, char **argv)
{
  int rank, size;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  test_cancellation(PETSC_COMM_WORLD);
  test_range(PETSC_COMM_WORLD);
  test_order_and_merge(PETSC_COMM_WORLD);
  test_many_terms(PETSC_COMM_WORLD);
  test_not_finite(PETSC_COMM_WORLD);
  long all[2] = {checks, failures}, total[2];
  MPI_Allreduce(all, total, 2, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD);
  if (!rank) printf("test_reduce: %ld checks, %ld failures (%d rank(s))\n", total[0], total[1], size);
  PetscCall(PetscFinalize());
  return total[1] ? 1 : 0;
}
