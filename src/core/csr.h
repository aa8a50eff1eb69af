/* Compressed rows by key: the count -> offsets -> fill idiom (a stable counting sort) written once. Position k of
 * [0, n) joins row key[k] as the item k / stride when 0 <= key[k] < nrows (others, e.g. the padding of mixed kinds'
 * element rows or the ghost nodes of a subdomain, are left out): stride 1 lists positions (a node's element-row
 * entries), stride m the groups of m positions (a node's weak constraints, m slots each); *start [nrows + 1] the
 * offsets, *item the items row by row, each row in increasing k (with room for one item at least). PETSc's allocator; the caller frees both with PetscFree. Two
 * offset widths, for the callers' own arrays. */
#ifndef PBNG_CORE_CSR_H
#define PBNG_CORE_CSR_H

#include <petscsys.h>
#include <stdint.h>

PetscErrorCode pbng_csr_by_key64(int64_t n, const int32_t *key, int stride, int64_t nrows, int64_t **start, int32_t **item);
PetscErrorCode pbng_csr_by_key32(int64_t n, const int32_t *key, int stride, int32_t nrows, int32_t **start, int32_t **item);

#endif
