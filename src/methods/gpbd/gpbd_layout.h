/* GPBD's per-element rows in sweep order (issue 43): the Gauss-Seidel form visits its owned elements color by color
 * (pbng_color_groups' item array), so its rows of d_i, dd_i, pre_i and the closed form's element records are stored in
 * that order, each color's elements contiguous, instead of by element number (whose color-ordered access touches a new
 * cache line per row); the checkpoint keeps the element order, permuted at its writing and reading. Row moves only:
 * no value changes. */
#ifndef PBNG_METHODS_GPBD_LAYOUT_H
#define PBNG_METHODS_GPBD_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* to's row k = from's row order[k], k < n (rows of size bytes): element order into sweep order. */
void pbng_gpbd_rows_to_sweep(const int32_t *order, int32_t n, size_t size, const void *from, void *to);

/* to's row order[k] = from's row k, k < n: sweep order back into element order. */
void pbng_gpbd_rows_to_elements(const int32_t *order, int32_t n, size_t size, const void *from, void *to);

#endif
