#include "methods/gpbd/gpbd_layout.h"
#include <string.h>

void pbng_gpbd_rows_to_sweep(const int32_t *order, int32_t n, size_t size, const void *from, void *to)
{
  for (int32_t k = 0; k < n; ++k) memcpy((char *)to + size * (size_t)k, (const char *)from + size * (size_t)order[k], size);
}

void pbng_gpbd_rows_to_elements(const int32_t *order, int32_t n, size_t size, const void *from, void *to)
{
  for (int32_t k = 0; k < n; ++k) memcpy((char *)to + size * (size_t)order[k], (const char *)from + size * (size_t)k, size);
}
