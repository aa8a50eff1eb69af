#include "contact/box_hash.h"
#include <math.h>
#include <string.h>

/* The k-th smallest of v[0 .. n) (v is reordered): quickselect, median-of-three pivots. */
static double kth_smallest(double *v, int64_t n, int64_t k)
{
  int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const double a = v[lo], b = v[mid], c = v[hi];
    const double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    int64_t i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot) ++i;
      while (v[j] > pivot) --j;
      if (i <= j) {
        const double t = v[i];
        v[i++] = v[j], v[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return v[k];
  }
  return v[k];
}

PetscErrorCode pbng_box_hash_median_edge(int32_t n, const double (*box)[6], double *h)
{
  double *ext;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(n + 1, &ext));
  for (int32_t k = 0; k < n; ++k) ext[k] = fmax(box[k][3] - box[k][0], fmax(box[k][4] - box[k][1], box[k][5] - box[k][2]));
  *h = n > 0 ? kth_smallest(ext, n, n / 2) : 1.0;
  PetscCall(PetscFree(ext));
  PetscFunctionReturn(0);
}

int64_t pbng_box_hash_cell(const pbng_box_hash *g, double x)
{
  const double c = floor(x / g->h), lim = 1099511627776.0; /* 2^40: far beyond any mesh, no overflow */
  return (int64_t)(c < -lim ? -lim : c > lim ? lim : c);
}

uint64_t pbng_box_hash_bucket(const pbng_box_hash *g, int64_t i, int64_t j, int64_t k)
{
  uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ (uint64_t)j * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)k * 0x165667B19E3779F9ull;
  h ^= h >> 31, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 29;
  return h & g->mask;
}

int64_t pbng_box_hash_cells(const pbng_box_hash *g, const double box[6], int64_t c[6])
{
  int64_t n = 1;
  for (int k = 0; k < 3; ++k) c[2 * k] = pbng_box_hash_cell(g, box[k]), c[2 * k + 1] = pbng_box_hash_cell(g, box[3 + k]), n *= c[2 * k + 1] - c[2 * k] + 1;
  return n;
}

/* Box id's buckets: pass 0 counts (start[b + 1]), pass 1 fills (fill[b]); listed once per bucket (last[b]: the last box
 * listed there). */
static void list_box(pbng_box_hash *g, const double box[6], int32_t id, int pass, int32_t *last, int64_t *fill)
{
  int64_t c[6];
  pbng_box_hash_cells(g, box, c);
  for (int64_t k = c[4]; k <= c[5]; ++k)
    for (int64_t j = c[2]; j <= c[3]; ++j)
      for (int64_t i = c[0]; i <= c[1]; ++i) {
        const uint64_t b = pbng_box_hash_bucket(g, i, j, k);
        if (last[b] == id) continue;
        last[b] = id;
        if (pass == 0) g->start[b + 1]++;
        else g->item[fill[b]++] = id;
      }
}

PetscErrorCode pbng_box_hash_create(int32_t n, const double (*box)[6], double h, int64_t max_cells, pbng_box_hash *g)
{
  int64_t entries = 0, c[6], *fill;
  int32_t *last;

  PetscFunctionBeginUser;
  memset(g, 0, sizeof(*g));
  g->h = h;
  PetscCall(PetscMalloc1(n + 1, &g->large));
  for (int32_t k = 0; k < n; ++k) {
    const int64_t cells = pbng_box_hash_cells(g, box[k], c);
    if (cells > max_cells) g->large[g->nlarge++] = k;
    else entries += cells;
  }
  uint64_t buckets = 16;
  while (buckets < 2 * (uint64_t)entries) buckets *= 2;
  g->mask = buckets - 1;
  PetscCall(PetscCalloc1(buckets + 1, &g->start));
  PetscCall(PetscMalloc2(buckets, &last, buckets, &fill));
  for (int pass = 0; pass < 2; ++pass) {
    for (uint64_t b = 0; b < buckets; ++b) last[b] = -1;
    if (pass == 1) {
      for (uint64_t b = 0; b < buckets; ++b) g->start[b + 1] += g->start[b], fill[b] = g->start[b];
      PetscCall(PetscMalloc1(g->start[buckets] + 1, &g->item));
    }
    for (int32_t k = 0, l = 0; k < n; ++k) {
      if (l < g->nlarge && g->large[l] == k) {
        ++l;
        continue;
      }
      list_box(g, box[k], k, pass, last, fill);
    }
  }
  PetscCall(PetscFree2(last, fill));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_box_hash_destroy(pbng_box_hash *g)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(g->start));
  PetscCall(PetscFree(g->item));
  PetscCall(PetscFree(g->large));
  memset(g, 0, sizeof(*g));
  PetscFunctionReturn(0);
}
