#include "parallel/reduce.h"
#include <math.h>
#include <string.h>

#define LIMB_BASE 4294967296LL   /* 2^32 */
#define LIMB_SHIFT_LOWEST 1074   /* limb k weighs 2^(32 k - 1074): limb 0's unit is the smallest subnormal */
#define PENDING_MAX (1LL << 27)  /* terms between normalisations: every |limb| stays below 2^32 (1 + terms) < 2^60 */

void pbng_exact_sum_zero(pbng_exact_sum *s) { memset(s, 0, sizeof(*s)); }

/* Carries move up until limbs 0..L-2 lie in [0, 2^32); the top limb keeps the sign. The value
 * sum_k limb[k] 2^(32 k) is unchanged. */
static void normalise(int64_t *limb)
{
  for (int k = 0; k < PBNG_EXACT_LIMBS - 1; ++k) {
    int64_t carry = limb[k] / LIMB_BASE;
    if (limb[k] % LIMB_BASE < 0) carry -= 1; /* floor division */
    limb[k] -= carry * LIMB_BASE;
    limb[k + 1] += carry;
  }
}

static void count_pending(pbng_exact_sum *s, int64_t terms)
{
  s->pending += terms;
  if (s->pending >= PENDING_MAX) normalise(s->limb), s->pending = 0;
}

/* v = m 2^(p - 1074) with the integer m < 2^53 and 0 <= p <= 2045 (the bits of the double); m 2^(p mod 32)
 * < 2^85 is added to limbs p/32 .. p/32 + 2 in three 32-bit pieces. */
void pbng_exact_sum_add(pbng_exact_sum *s, double v)
{
  uint64_t bits;
  memcpy(&bits, &v, sizeof(bits));
  const int biased = (int)((bits >> 52) & 0x7ff);
  if (biased == 0x7ff) {
    if (v == INFINITY) s->infinite++;
    else s->not_finite++;
    return;
  }
  uint64_t m = bits & ((1ULL << 52) - 1);
  int p = 0; /* subnormal: m 2^-1074 */
  if (biased) m |= 1ULL << 52, p = biased - 1;
  if (!m) return;
  const int k = p >> 5;
  const unsigned __int128 t = (unsigned __int128)m << (p & 31);
  const int64_t lo = (int64_t)(uint64_t)(t & 0xffffffffu), mid = (int64_t)(uint64_t)((t >> 32) & 0xffffffffu), hi = (int64_t)(uint64_t)(t >> 64);
  if (bits >> 63) s->limb[k] -= lo, s->limb[k + 1] -= mid, s->limb[k + 2] -= hi;
  else s->limb[k] += lo, s->limb[k + 1] += mid, s->limb[k + 2] += hi;
  count_pending(s, 1);
}

/* The bound on |limb| grows as if from's terms had been added to into one by one (plus one for from's
 * normalised part). */
void pbng_exact_sum_merge(pbng_exact_sum *into, const pbng_exact_sum *from)
{
  for (int k = 0; k < PBNG_EXACT_LIMBS; ++k) into->limb[k] += from->limb[k];
  into->not_finite += from->not_finite;
  into->infinite += from->infinite;
  count_pending(into, 1 + from->pending);
}

/* The normalised integer sum_k limb[k] 2^(32 k - 1074) as a double: its magnitude summed from the top
 * limb down (limbs below 2^32 are exact doubles), then the sign. */
static double to_double(int64_t *limb)
{
  double sign = 1.0, value = 0.0;
  if (limb[PBNG_EXACT_LIMBS - 1] < 0) {
    for (int k = 0; k < PBNG_EXACT_LIMBS; ++k) limb[k] = -limb[k];
    normalise(limb);
    sign = -1.0;
  }
  for (int k = PBNG_EXACT_LIMBS - 1; k >= 0; --k) value += ldexp((double)limb[k], 32 * k - LIMB_SHIFT_LOWEST);
  return sign * value;
}

enum { EXACT_WORDS = PBNG_EXACT_LIMBS + 2 };

PetscErrorCode pbng_exact_sums_allreduce(MPI_Comm comm, int n, pbng_exact_sum *s, double *sum)
{
  int64_t *mine, *total;

  PetscFunctionBeginUser;
  PetscCheck(n >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "exact sums: %d in one reduction", n);
  PetscCall(PetscMalloc2((size_t)n * EXACT_WORDS, &mine, (size_t)n * EXACT_WORDS, &total));
  for (int k = 0; k < n; ++k) {
    int64_t *w = &mine[k * EXACT_WORDS];
    normalise(s[k].limb), s[k].pending = 0; /* each rank's limbs below 2^32: any number of ranks adds up safely */
    memcpy(w, s[k].limb, sizeof(s[k].limb));
    w[PBNG_EXACT_LIMBS] = s[k].not_finite;
    w[PBNG_EXACT_LIMBS + 1] = s[k].infinite;
  }
  PetscCallMPI(MPI_Allreduce(mine, total, n * EXACT_WORDS, MPI_INT64_T, MPI_SUM, comm));
  for (int k = 0; k < n; ++k) {
    int64_t *w = &total[k * EXACT_WORDS];
    if (w[PBNG_EXACT_LIMBS] || w[PBNG_EXACT_LIMBS + 1]) {
      sum[k] = w[PBNG_EXACT_LIMBS] ? NAN : INFINITY;
      continue;
    }
    normalise(w);
    sum[k] = to_double(w);
  }
  PetscCall(PetscFree2(mine, total));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_exact_dots(Vec x, int n, const Vec *y, double *dots)
{
  const PetscScalar *xa;
  PetscInt len;
  pbng_exact_sum *s;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(x, &len));
  PetscCheck(len % 3 == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "exact dot products: %" PetscInt_FMT " local entries, not 3 per node", len);
  PetscCall(PetscMalloc1(n, &s));
  PetscCall(VecGetArrayRead(x, &xa));
  for (int v = 0; v < n; ++v) {
    const PetscScalar *ya;
    pbng_exact_sum_zero(&s[v]);
    PetscCall(VecGetArrayRead(y[v], &ya));
#pragma omp parallel
    {
      pbng_exact_sum part;
      pbng_exact_sum_zero(&part);
#pragma omp for schedule(static) nowait
      for (PetscInt k = 0; k < len; k += 3) pbng_exact_sum_add(&part, xa[k] * ya[k] + xa[k + 1] * ya[k + 1] + xa[k + 2] * ya[k + 2]);
#pragma omp critical(pbng_exact_dots)
      pbng_exact_sum_merge(&s[v], &part);
    }
    PetscCall(VecRestoreArrayRead(y[v], &ya));
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(pbng_exact_sums_allreduce(PetscObjectComm((PetscObject)x), n, s, dots));
  PetscCall(PetscFree(s));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_exact_sum_allreduce(MPI_Comm comm, pbng_exact_sum *s, double *sum) { return pbng_exact_sums_allreduce(comm, 1, s, sum); }

PetscErrorCode pbng_reproducible_sum(MPI_Comm comm, int narrays, const double *const *arrays, const int64_t *counts,
                                     double *sum)
{
  pbng_exact_sum s;

  PetscFunctionBeginUser;
  pbng_exact_sum_zero(&s);
  for (int a = 0; a < narrays; ++a)
    for (int64_t k = 0; k < counts[a]; ++k) pbng_exact_sum_add(&s, arrays[a][k] == INFINITY ? NAN : arrays[a][k]); /* +inf: an error here too */
  PetscCall(pbng_exact_sum_allreduce(comm, &s, sum));
  PetscCheck(!isnan(*sum), comm, PETSC_ERR_FP, "non-finite value in a global sum (the solution diverged?)");
  PetscFunctionReturn(0);
}

void pbng_comm_counts_now(pbng_comm_counts *c)
{
  c->reductions = petsc_allreduce_ct;
  c->messages = petsc_isend_ct + petsc_send_ct;
  c->bytes = petsc_isend_len + petsc_send_len;
}

void pbng_comm_counts_add_since(pbng_comm_counts *into, const pbng_comm_counts *earlier, const pbng_comm_counts *later)
{
  into->reductions += later->reductions - earlier->reductions;
  into->messages += later->messages - earlier->messages;
  into->bytes += later->bytes - earlier->bytes;
}

PetscErrorCode pbng_work_begin(const pbng_work_meter *meter, pbng_work_mark *mark)
{
  PetscFunctionBeginUser;
  mark->t = MPI_Wtime();
  pbng_comm_counts_now(&mark->comm);
  if (meter->event >= 0) PetscCall(PetscLogEventBegin(meter->event, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_work_end(pbng_work_meter *meter, const pbng_work_mark *mark)
{
  pbng_comm_counts now;

  PetscFunctionBeginUser;
  if (meter->event >= 0) PetscCall(PetscLogEventEnd(meter->event, 0, 0, 0, 0));
  pbng_comm_counts_now(&now);
  pbng_comm_counts_add_since(&meter->comm, &mark->comm, &now);
  meter->seconds += MPI_Wtime() - mark->t;
  PetscFunctionReturn(0);
}
