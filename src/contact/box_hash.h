/* The contact code's one broad phase (docs/contact.md#detection): a spatial hash of axis-aligned boxes, used by the
 * detector of contact records (contact_detect.c: surface triangles against vertices) and by the barrier contact step
 * (pd_contact.c: primitives against primitives). Cells (i, j, k) = floor(x / h); every box is listed once in the
 * bucket of each cell it covers (2^k buckets, at least twice the listings; a bucket may mix cells, so what it holds
 * are candidates, for the caller's own test); a box covering more than max_cells cells is kept apart in `large`, a
 * candidate everywhere. Buckets list their boxes in increasing index. */
#ifndef PBNG_CONTACT_BOX_HASH_H
#define PBNG_CONTACT_BOX_HASH_H

#include <petscsys.h>
#include <stdint.h>

typedef struct {
  double h;       /* cell edge */
  uint64_t mask;  /* buckets - 1 (a power of two) */
  int64_t *start; /* [buckets + 1] */
  int32_t *item;  /* [start[buckets]] box indices */
  int32_t nlarge, *large;
} pbng_box_hash;

/* The n boxes box[k] = (lo, hi) hashed with cell edge h. */
PetscErrorCode pbng_box_hash_create(int32_t n, const double (*box)[6], double h, int64_t max_cells, pbng_box_hash *g);
PetscErrorCode pbng_box_hash_destroy(pbng_box_hash *g);

/* A cell edge for n boxes: the median of their longest sides (a median box then covers at most 2 cells per axis);
 * 1 for none. */
PetscErrorCode pbng_box_hash_median_edge(int32_t n, const double (*box)[6], double *h);

/* The cell index of coordinate x (clamped far beyond any mesh). */
int64_t pbng_box_hash_cell(const pbng_box_hash *g, double x);
/* The bucket of cell (i, j, k): its candidates are item[start[b] .. start[b + 1]) and the large boxes. */
uint64_t pbng_box_hash_bucket(const pbng_box_hash *g, int64_t i, int64_t j, int64_t k);
/* The cells box (lo, hi) covers, [c[0]..c[1]] x [c[2]..c[3]] x [c[4]..c[5]]; returns how many. */
int64_t pbng_box_hash_cells(const pbng_box_hash *g, const double box[6], int64_t c[6]);

#endif
