#include "mesh/repeated_elements.h"
#include <inttypes.h>
#include <stdio.h>

void pbng_sort_row_nodes(int32_t *v, int n)
{
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && v[j - 1] > v[j]; --j) {
      const int32_t tmp = v[j];
      v[j] = v[j - 1];
      v[j - 1] = tmp;
    }
}

int pbng_first_repeated_pair(int64_t nbuckets, const int64_t *start, const int32_t *members, pbng_same_element same, const void *ctx, int32_t *a,
                             int32_t *b)
{
  for (int64_t i = 0; i < nbuckets; ++i)
    for (int64_t p = start[i]; p < start[i + 1]; ++p)
      for (int64_t q = p + 1; q < start[i + 1]; ++q)
        if (same(ctx, members[p], members[q])) {
          *a = members[p], *b = members[q];
          return 1;
        }
  return 0;
}

void pbng_repeated_elements_message(char *msg, size_t len, const char *source, int64_t a, int64_t b, int64_t record_a, int64_t record_b,
                                    const char *kind)
{
  snprintf(msg, len, "%s: elements %" PRId64 " and %" PRId64 " (records %" PRId64 " and %" PRId64 ") are duplicates: two %s on the same nodes", source,
           a, b, record_a, record_b, kind);
}
