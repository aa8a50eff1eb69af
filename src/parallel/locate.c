#include "parallel/locate.h"
#include <math.h>
#include <string.h>
#include "core/locate.h"

/* A uniform grid of cells over the rank's owned elements: cell -> elements whose bounding box
 * overlaps it (CSR). */
typedef struct {
  double lo[3], h;     /* origin and cell edge */
  int n[3];
  int64_t *start;      /* [ncells + 1] */
  int32_t *elem;       /* local element indices */
} bucket_grid;

typedef struct {
  double box[6]; /* lo, hi of the owned elements' rest positions */
  double hmax;   /* their longest edge */
} rank_extent;

static const double *vertex(const pbng_dmesh *m, int32_t e, int a) { return &m->X[3 * (int64_t)m->elems[4 * (int64_t)e + a]]; }

static void element_vertices(const pbng_dmesh *m, int32_t e, const double *X[4])
{
  for (int a = 0; a < 4; ++a) X[a] = vertex(m, e, a);
}

static rank_extent owned_extent(const pbng_dmesh *m)
{
  rank_extent r = {{INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY}, 0.0};
  for (int32_t e = 0; e < m->nowned_elems; ++e) {
    const double *X[4];
    element_vertices(m, e, X);
    for (int a = 0; a < 4; ++a)
      for (int k = 0; k < 3; ++k) r.box[k] = fmin(r.box[k], X[a][k]), r.box[3 + k] = fmax(r.box[3 + k], X[a][k]);
    r.hmax = fmax(r.hmax, pbng_tet_longest_edge(X));
  }
  return r;
}

static int cell_index(const bucket_grid *g, const double p[3], int k)
{
  const int c = (int)floor((p[k] - g->lo[k]) / g->h);
  return c < 0 ? 0 : (c >= g->n[k] ? g->n[k] - 1 : c);
}

/* The cells [r0..r1] x [r2..r3] x [r4..r5] overlapping the box lo..hi (clamped to the grid). */
static void cell_range(const bucket_grid *g, const double lo[3], const double hi[3], int r[6])
{
  for (int k = 0; k < 3; ++k) r[2 * k] = cell_index(g, lo, k), r[2 * k + 1] = cell_index(g, hi, k);
}

static int64_t cell_of(const bucket_grid *g, int i, int j, int k) { return i + (int64_t)g->n[0] * (j + (int64_t)g->n[1] * k); }

/* About one element per cell on average. */
static PetscErrorCode bucket_grid_build(const pbng_dmesh *m, const rank_extent *ext, bucket_grid *g)
{
  const int32_t ne = m->nowned_elems;
  int64_t ncells;

  PetscFunctionBeginUser;
  memset(g, 0, sizeof(*g));
  double L[3], vol = 1.0;
  for (int k = 0; k < 3; ++k) L[k] = fmax(ext->box[3 + k] - ext->box[k], 1e-300), vol *= L[k];
  g->h = fmax(cbrt(vol / (ne > 0 ? ne : 1)), 1e-3 * fmax(L[0], fmax(L[1], L[2])));
  for (int k = 0; k < 3; ++k) {
    g->lo[k] = ext->box[k];
    g->n[k] = (int)fmin(ceil(L[k] / g->h), 1024.0);
    if (g->n[k] < 1) g->n[k] = 1;
  }
  ncells = (int64_t)g->n[0] * g->n[1] * g->n[2];
  PetscCall(PetscCalloc1(ncells + 1, &g->start));
  for (int pass = 0; pass < 2; ++pass) { /* count, then fill */
    for (int32_t e = 0; e < ne; ++e) {
      const double *X[4];
      double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
      element_vertices(m, e, X);
      for (int a = 0; a < 4; ++a)
        for (int k = 0; k < 3; ++k) lo[k] = fmin(lo[k], X[a][k]), hi[k] = fmax(hi[k], X[a][k]);
      int r[6];
      cell_range(g, lo, hi, r);
      for (int kk = r[4]; kk <= r[5]; ++kk)
        for (int jj = r[2]; jj <= r[3]; ++jj)
          for (int ii = r[0]; ii <= r[1]; ++ii) {
            const int64_t c = cell_of(g, ii, jj, kk);
            if (pass == 0) g->start[c + 1]++;
            else g->elem[g->start[c]++] = e;
          }
    }
    if (pass == 0) {
      for (int64_t c = 0; c < ncells; ++c) g->start[c + 1] += g->start[c];
      PetscCall(PetscMalloc1(g->start[ncells] + 1, &g->elem));
    } else { /* the fill advanced start[c] to the old start[c+1]: shift back */
      for (int64_t c = ncells; c > 0; --c) g->start[c] = g->start[c - 1];
      g->start[0] = 0;
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode bucket_grid_destroy(bucket_grid *g)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(g->start));
  PetscCall(PetscFree(g->elem));
  PetscFunctionReturn(0);
}

/* Whether answer a is better than b: inside or nearer, ties by the lower global element id. */
static int better(const pbng_point_location *a, const pbng_point_location *b)
{
  if (a->elem < 0) return 0;
  if (b->elem < 0) return 1;
  if (a->distance != b->distance) return a->distance < b->distance;
  return a->elem < b->elem;
}

/* The rank's answer for point q: its owned elements in the cells within `reach` of q. */
static void answer_point(const pbng_dmesh *m, const int64_t *node_value, const bucket_grid *g, double radius, double reach, const double q[3],
                         pbng_point_location *best)
{
  memset(best, 0, sizeof(*best));
  best->elem = -1;
  double lo[3], hi[3];
  int r[6];
  for (int k = 0; k < 3; ++k) lo[k] = q[k] - reach, hi[k] = q[k] + reach;
  cell_range(g, lo, hi, r);
  for (int kk = r[4]; kk <= r[5]; ++kk)
    for (int jj = r[2]; jj <= r[3]; ++jj)
      for (int ii = r[0]; ii <= r[1]; ++ii) {
        const int64_t c = cell_of(g, ii, jj, kk);
        for (int64_t k = g->start[c]; k < g->start[c + 1]; ++k) {
          const int32_t e = g->elem[k];
          const double *X[4];
          pbng_point_location cand;
          element_vertices(m, e, X);
          cand.elem = m->global_elem[e];
          if (best->elem >= 0 && best->distance == 0 && cand.elem > best->elem) continue; /* cannot win */
          double wc[4];
          cand.distance = pbng_point_tet_distance(X, q, wc);
          cand.size = pbng_tet_longest_edge(X);
          if (cand.distance > radius * cand.size || !better(&cand, best)) continue;
          if (cand.distance > 0) { /* outside: extrapolate unless that is wild */
            double w[4];
            int wild = pbng_tet_barycentric(X, q, w) != 0;
            for (int a = 0; a < 4 && !wild; ++a) wild = w[a] < -0.5;
            for (int a = 0; a < 4; ++a) cand.w[a] = wild ? wc[a] : w[a];
          } else if (pbng_tet_barycentric(X, q, cand.w) != 0) continue;
          for (int a = 0; a < 4; ++a) cand.value[a] = node_value[m->elems[4 * (int64_t)e + a]];
          *best = cand;
        }
      }
}

typedef struct {
  double q[3];
  int64_t index; /* the query's index on its sender */
} query;

/* MPI_Alltoallv of items of `size` bytes. */
static PetscErrorCode alltoallv_items(const void *send, const int *scount, const int *sdispl, void *recv, const int *rcount, const int *rdispl,
                                      size_t size, MPI_Comm comm)
{
  MPI_Datatype t;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Type_contiguous((int)size, MPI_BYTE, &t));
  PetscCallMPI(MPI_Type_commit(&t));
  PetscCallMPI(MPI_Alltoallv(send, scount, sdispl, t, recv, rcount, rdispl, t, comm));
  PetscCallMPI(MPI_Type_free(&t));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_locate_points(const pbng_dmesh *mesh, const int64_t *node_value, double radius, int64_t n, const double *points,
                                  pbng_point_location *loc)
{
  MPI_Comm comm = mesh->comm;
  int size = mesh->size;
  rank_extent mine = owned_extent(mesh), *all;
  int *scount, *rcount, *sdispl, *rdispl;
  query *sbuf, *rbuf;
  pbng_point_location *abuf, *rabuf;
  bucket_grid grid;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(size, &all));
  PetscCallMPI(MPI_Allgather(&mine, (int)sizeof(rank_extent), MPI_BYTE, all, (int)sizeof(rank_extent), MPI_BYTE, comm));
  PetscCall(PetscCalloc4(size, &scount, size, &rcount, size + 1, &sdispl, size + 1, &rdispl));
  /* each point to every rank whose grown box contains it */
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      for (int r = 0; r < size; ++r) sdispl[r + 1] = sdispl[r] + scount[r], scount[r] = 0;
      PetscCall(PetscMalloc1(sdispl[size] + 1, &sbuf));
    }
    for (int64_t i = 0; i < n; ++i) {
      const double *q = &points[3 * i];
      for (int r = 0; r < size; ++r) {
        const double grow = radius * all[r].hmax;
        int in = all[r].hmax > 0;
        for (int k = 0; k < 3 && in; ++k) in = q[k] >= all[r].box[k] - grow && q[k] <= all[r].box[3 + k] + grow;
        if (!in) continue;
        if (pass == 1) {
          query *s = &sbuf[sdispl[r] + scount[r]];
          memcpy(s->q, q, sizeof(s->q));
          s->index = i;
        }
        scount[r]++;
      }
    }
  }
  PetscCallMPI(MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm));
  for (int r = 0; r < size; ++r) rdispl[r + 1] = rdispl[r] + rcount[r];
  PetscCall(PetscMalloc1(rdispl[size] + 1, &rbuf));
  PetscCall(alltoallv_items(sbuf, scount, sdispl, rbuf, rcount, rdispl, sizeof(query), comm));
  /* answer the points received */
  PetscCall(bucket_grid_build(mesh, &mine, &grid));
  PetscCall(PetscMalloc1(rdispl[size] + 1, &abuf));
  const double reach = radius * mine.hmax;
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t k = 0; k < rdispl[size]; ++k) answer_point(mesh, node_value, &grid, radius, reach, rbuf[k].q, &abuf[k]);
  PetscCall(bucket_grid_destroy(&grid));
  PetscCall(PetscMalloc1(sdispl[size] + 1, &rabuf));
  PetscCall(alltoallv_items(abuf, rcount, rdispl, rabuf, scount, sdispl, sizeof(pbng_point_location), comm));
  /* the best answer per point */
  for (int64_t i = 0; i < n; ++i) loc[i].elem = -1;
  for (int64_t k = 0; k < sdispl[size]; ++k) {
    pbng_point_location *l = &loc[sbuf[k].index];
    if (better(&rabuf[k], l)) *l = rabuf[k];
  }
  PetscCall(PetscFree(all));
  PetscCall(PetscFree4(scount, rcount, sdispl, rdispl));
  PetscCall(PetscFree(sbuf));
  PetscCall(PetscFree(rbuf));
  PetscCall(PetscFree(abuf));
  PetscCall(PetscFree(rabuf));
  PetscFunctionReturn(0);
}
