/* Repeated elements: two element records on the same set of nodes (a duplicated record would count the element
 * twice). Found by bucketing the elements by their smallest node and comparing within each bucket, by the whole
 * mesh's check (pbng_mesh_validate) and by the slices' (parallel/slice_check.h, each bucket on the process of its
 * node): both report the same pair, the first found in bucket order, with the same message. */
#ifndef PBNG_MESH_REPEATED_ELEMENTS_H
#define PBNG_MESH_REPEATED_ELEMENTS_H

#include <stddef.h>
#include <stdint.h>

/* Sorts a row's n nodes increasingly (rows are short: insertion sort). */
void pbng_sort_row_nodes(int32_t *v, int n);

/* Whether bucket members a and b are the same element repeated. */
typedef int (*pbng_same_element)(const void *ctx, int32_t a, int32_t b);
/* The first repeated pair of the buckets (bucket i: members[start[i] .. start[i + 1]), each in increasing order):
 * buckets in order, then members p < q; returns 1 and *a = members[p], *b = members[q], else 0. */
int pbng_first_repeated_pair(int64_t nbuckets, const int64_t *start, const int32_t *members, pbng_same_element same, const void *ctx, int32_t *a,
                             int32_t *b);
/* The error naming elements a < b of source (their records and kind). */
void pbng_repeated_elements_message(char *msg, size_t len, const char *source, int64_t a, int64_t b, int64_t record_a, int64_t record_b,
                                    const char *kind);

#endif
