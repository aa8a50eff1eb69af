#include "core/csr.h"

/* One body for both widths: count each row's items into start[r + 1], offsets by a running sum, then each item at
 * its row's next slot (start[r] advanced as the cursor, then every row's start shifted back by one row). */
#define CSR_BY_KEY(IDX)                                                                    \
  do {                                                                                     \
    IDX *s;                                                                                \
    int32_t *it;                                                                           \
    PetscCall(PetscCalloc1((size_t)nrows + 1, &s));                                        \
    for (int64_t k = 0; k < n; ++k)                                                        \
      if (key[k] >= 0 && key[k] < nrows) s[key[k] + 1]++;                                  \
    for (int64_t r = 0; r < nrows; ++r) s[r + 1] += s[r];                                  \
    PetscCall(PetscMalloc1((size_t)s[nrows] + 1, &it));                                    \
    for (int64_t k = 0; k < n; ++k)                                                        \
      if (key[k] >= 0 && key[k] < nrows) it[s[key[k]]++] = (int32_t)(k / stride);          \
    for (int64_t r = nrows; r > 0; --r) s[r] = s[r - 1];                                   \
    s[0] = 0;                                                                              \
    *start = s, *item = it;                                                                \
  } while (0)

PetscErrorCode pbng_csr_by_key64(int64_t n, const int32_t *key, int stride, int64_t nrows, int64_t **start, int32_t **item)
{
  PetscFunctionBegin;
  PetscCheck(n <= INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "compressed rows: %" PRId64 " items exceed the int32 item range", n);
  CSR_BY_KEY(int64_t);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_csr_by_key32(int64_t n, const int32_t *key, int stride, int32_t nrows, int32_t **start, int32_t **item)
{
  PetscFunctionBegin;
  PetscCheck(n <= INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "compressed rows: %" PRId64 " items exceed the int32 item range", n);
  CSR_BY_KEY(int32_t);
  PetscFunctionReturn(0);
}
