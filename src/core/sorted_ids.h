#ifndef PBNG_CORE_SORTED_IDS_H
#define PBNG_CORE_SORTED_IDS_H
/* Arrays of int64 ids (global node ids, keys) kept sorted: the qsort/bsearch order and the lookup. */
#include <stdint.h>
#include <stdlib.h>

/* qsort/bsearch comparison of two int64_t. */
static inline int pbng_compare_int64(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* An id with the local index it belongs to: tables sorted by id (qsort with pbng_compare_id_local). */
typedef struct {
  int64_t id;
  int32_t local;
} pbng_id_local;

static inline int pbng_compare_id_local(const void *a, const void *b)
{
  const int64_t x = ((const pbng_id_local *)a)->id, y = ((const pbng_id_local *)b)->id;
  return (x > y) - (x < y);
}

/* The index of id in sorted[0..n), or -1 when it is not there. */
static inline int64_t pbng_sorted_index(const int64_t *sorted, int64_t n, int64_t id)
{
  const int64_t *at = n > 0 ? bsearch(&id, sorted, (size_t)n, sizeof(int64_t), pbng_compare_int64) : NULL;
  return at ? at - sorted : -1;
}

#endif
