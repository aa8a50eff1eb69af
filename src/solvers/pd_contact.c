#include "solvers/pd_contact.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/barrier.h"
#include "core/ccd.h"
#include "core/element.h"
#include "core/vec3.h"
#include "parallel/halo.h"

enum { PAIR_VT = 0, PAIR_EE = 1, PAIR_VO = 2 };

typedef struct {
  int kind;
  int32_t v[4]; /* VT: vertex, triangle corners; EE: edge a, edge b; VO: vertex, obstacle index in v[1] */
} pair;

struct pbng_pd_contact {
  pbng_pd_contact_options opt;
  double xi;
  MPI_Comm comm;
  int32_t nv, ntri, nedge;
  int64_t *gid;           /* [nv] sorted */
  int32_t *local;         /* [nv] local index here, or -1 */
  uint8_t *free;          /* [nv] 1: may move */
  int32_t (*tri)[3];      /* compact corners, outward order */
  int32_t (*edge)[2];     /* compact ends, a < b */
  int32_t *nbr_start, *nbr; /* vertex adjacency through edges (sorted) */
  int *count, *displ;     /* gather plan: rank r's owned surface vertices, in compact order */
  int32_t *order;         /* [nv] compact index of each gathered entry */
  int32_t nmine;          /* this rank's owned surface vertices */
  int32_t *mine_idx;      /* [nmine] their compact indices */
  double *mine;           /* [nmine][3] send buffer */
  double *y, *z, *z_prev, *work; /* [nv][3] */
  double *tmin;           /* [nv] */
  pair *pairs;
  int64_t npairs, cap;
  double cell;            /* broad phase cell size */
};

/* ---- topology ---------------------------------------------------------------------------------------- */

static int compare_i64(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int compare_tri(const void *a, const void *b)
{
  const int64_t *x = a, *y = b;
  for (int k = 0; k < 3; ++k)
    if (x[k] != y[k]) return (x[k] > y[k]) - (x[k] < y[k]);
  return 0;
}

static int compare_edge(const void *a, const void *b)
{
  const int32_t *x = a, *y = b;
  if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
  return (x[1] > y[1]) - (x[1] < y[1]);
}

static int32_t compact_of(const pbng_pd_contact *c, int64_t g)
{
  const int64_t *p = bsearch(&g, c->gid, (size_t)c->nv, sizeof(int64_t), compare_i64);
  return p ? (int32_t)(p - c->gid) : -1;
}

/* Every rank's tri3 rows as corner global ids, sorted (partition-independent order). */
static PetscErrorCode gather_triangles(const pbng_dmesh *dm, int *ntri, int64_t **all)
{
  int64_t *mine;
  int n = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(3 * (int64_t)dm->nowned_elems + 3, &mine));
  for (int32_t e = 0; e < dm->nowned_elems; ++e) {
    if (pbng_dmesh_element_type(dm, e)->kind != PBNG_ELEMENT_TRI3) continue;
    for (int a = 0; a < 3; ++a) mine[3 * n + a] = dm->global_node[dm->elems[(int64_t)dm->nen * e + a]];
    ++n;
  }
  PetscCall(pbng_allgather_items(dm->comm, 3 * sizeof(int64_t), n, mine, ntri, (void **)all));
  PetscCall(PetscFree(mine));
  qsort(*all, (size_t)*ntri, 3 * sizeof(int64_t), compare_tri);
  PetscFunctionReturn(0);
}

static PetscErrorCode build_topology(pbng_pd_contact *c, int ntri, const int64_t *tris)
{
  int64_t *g;
  int32_t (*e)[2];
  int32_t m = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(3 * (int64_t)ntri + 1, &g));
  memcpy(g, tris, sizeof(int64_t) * 3 * (size_t)ntri);
  qsort(g, 3 * (size_t)ntri, sizeof(int64_t), compare_i64);
  for (int64_t k = 0; k < 3 * (int64_t)ntri; ++k)
    if (k == 0 || g[k] != g[m - 1]) g[m++] = g[k];
  c->nv = m;
  c->gid = g;
  c->ntri = ntri;
  PetscCall(PetscMalloc1(ntri + 1, &c->tri));
  PetscCall(PetscMalloc1(3 * (int64_t)ntri + 1, &e));
  for (int t = 0; t < ntri; ++t) {
    for (int a = 0; a < 3; ++a) c->tri[t][a] = compact_of(c, tris[3 * t + a]);
    for (int a = 0; a < 3; ++a) {
      const int32_t p = c->tri[t][a], q = c->tri[t][(a + 1) % 3];
      e[3 * t + a][0] = PetscMin(p, q), e[3 * t + a][1] = PetscMax(p, q);
    }
  }
  qsort(e, 3 * (size_t)ntri, sizeof(e[0]), compare_edge);
  m = 0;
  for (int64_t k = 0; k < 3 * (int64_t)ntri; ++k)
    if (k == 0 || compare_edge(e[k], e[m - 1])) e[m][0] = e[k][0], e[m][1] = e[k][1], ++m;
  c->nedge = m;
  c->edge = e;
  PetscCall(PetscCalloc1(c->nv + 1, &c->nbr_start));
  PetscCall(PetscMalloc1(2 * (int64_t)m + 1, &c->nbr));
  for (int32_t k = 0; k < m; ++k) ++c->nbr_start[e[k][0] + 1], ++c->nbr_start[e[k][1] + 1];
  for (int32_t v = 0; v < c->nv; ++v) c->nbr_start[v + 1] += c->nbr_start[v];
  int32_t *fill;
  PetscCall(PetscCalloc1(c->nv + 1, &fill));
  for (int32_t k = 0; k < m; ++k) {
    c->nbr[c->nbr_start[e[k][0]] + fill[e[k][0]]++] = e[k][1];
    c->nbr[c->nbr_start[e[k][1]] + fill[e[k][1]]++] = e[k][0];
  }
  PetscCall(PetscFree(fill));
  PetscFunctionReturn(0);
}

/* Whether u and w are the same vertex or joined by an edge. */
static int near_in_mesh(const pbng_pd_contact *c, int32_t u, int32_t w)
{
  if (u == w) return 1;
  for (int32_t k = c->nbr_start[u]; k < c->nbr_start[u + 1]; ++k)
    if (c->nbr[k] == w) return 1;
  return 0;
}

/* The pair's primitives share a vertex or are a mesh edge apart: excluded. */
static int excluded(const pbng_pd_contact *c, const int32_t *a, int na, const int32_t *b, int nb)
{
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j)
      if (near_in_mesh(c, a[i], b[j])) return 1;
  return 0;
}

/* The gather plan: local indices, free flags, this rank's owned surface vertices. */
static PetscErrorCode build_gather(const pbng_dmesh *dm, pbng_pd_contact *c)
{
  int64_t *key;
  int size;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(2 * (int64_t)dm->nlocal + 2, &key));
  for (int32_t i = 0; i < dm->nlocal; ++i) key[2 * i] = dm->global_node[i], key[2 * i + 1] = i;
  qsort(key, (size_t)dm->nlocal, 2 * sizeof(int64_t), compare_i64);
  PetscCall(PetscMalloc1(c->nv + 1, &c->local));
  PetscCall(PetscMalloc1(c->nv + 1, &c->mine_idx));
  c->nmine = 0;
  for (int32_t v = 0; v < c->nv; ++v) {
    int64_t lo = 0, hi = dm->nlocal;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (key[2 * mid] < c->gid[v]) lo = mid + 1;
      else hi = mid;
    }
    c->local[v] = lo < dm->nlocal && key[2 * lo] == c->gid[v] ? (int32_t)key[2 * lo + 1] : -1;
    if (c->local[v] >= 0 && c->local[v] < dm->nowned) c->mine_idx[c->nmine++] = v;
  }
  PetscCall(PetscFree(key));
  PetscCallMPI(MPI_Comm_size(dm->comm, &size));
  PetscCall(PetscMalloc2(size, &c->count, size + 1, &c->displ));
  const int nm = (int)c->nmine;
  PetscCallMPI(MPI_Allgather(&nm, 1, MPI_INT, c->count, 1, MPI_INT, dm->comm));
  c->displ[0] = 0;
  for (int r = 0; r < size; ++r) c->displ[r + 1] = c->displ[r] + c->count[r];
  PetscCheck(c->displ[size] == c->nv, dm->comm, PETSC_ERR_PLIB, "pd contact: %d owned surface vertices over the ranks, %d in the surface", c->displ[size],
             (int)c->nv);
  PetscCall(PetscMalloc1(c->nv + 1, &c->order));
  PetscCallMPI(MPI_Allgatherv(c->mine_idx, c->nmine, MPI_INT32_T, c->order, c->count, c->displ, MPI_INT32_T, dm->comm));
  uint8_t *fm, *fall;
  PetscCall(PetscMalloc2(c->nmine + 1, &fm, c->nv + 1, &fall));
  for (int32_t k = 0; k < c->nmine; ++k) fm[k] = c->local[c->mine_idx[k]] < dm->nfree;
  PetscCallMPI(MPI_Allgatherv(fm, c->nmine, MPI_UINT8_T, fall, c->count, c->displ, MPI_UINT8_T, dm->comm));
  PetscCall(PetscMalloc1(c->nv + 1, &c->free));
  for (int32_t k = 0; k < c->nv; ++k) c->free[c->order[k]] = fall[k];
  PetscCall(PetscFree2(fm, fall));
  for (int r = 0; r <= size; ++r) c->displ[r] *= 3;
  for (int r = 0; r < size; ++r) c->count[r] *= 3;
  PetscCall(PetscMalloc1(3 * (int64_t)c->nmine + 3, &c->mine));
  PetscFunctionReturn(0);
}

/* out[nv][3] <- every rank's owned surface positions from x (local rows). Collective. */
static PetscErrorCode gather_positions(pbng_pd_contact *c, const double *x, double *out)
{
  PetscFunctionBeginUser;
  for (int32_t k = 0; k < c->nmine; ++k)
    for (int a = 0; a < 3; ++a) c->mine[3 * k + a] = x[3 * (int64_t)c->local[c->mine_idx[k]] + a];
  PetscCallMPI(MPI_Allgatherv(c->mine, 3 * c->nmine, MPI_DOUBLE, c->work, c->count, c->displ, MPI_DOUBLE, c->comm));
  for (int32_t k = 0; k < c->nv; ++k)
    for (int a = 0; a < 3; ++a) out[3 * (int64_t)c->order[k] + a] = c->work[3 * (int64_t)k + a];
  PetscFunctionReturn(0);
}

/* ---- broad phase -------------------------------------------------------------------------------------- */

typedef struct {
  int64_t key;
  int32_t id;
} cell_item;

/* The hashed cells: items grouped by bucket (hash of the cell key & mask), in insertion order within one. */
typedef struct {
  cell_item *item;
  int64_t *start; /* [mask + 2] */
  int64_t mask;
} cell_table;

/* The bucket of a cell key: splitmix64's finaliser (every bit of the key reaches the low bits), masked. */
static int64_t bucket_of(int64_t key, int64_t mask)
{
  uint64_t z = (uint64_t)key;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (int64_t)(z ^ (z >> 31)) & mask;
}

/* A cell's key (coordinates wrapped to 21 bits: distant cells may share a key, which only adds candidates). */
static int64_t cell_key(int64_t i, int64_t j, int64_t k) { return ((i & 0x1FFFFF) << 42) | ((j & 0x1FFFFF) << 21) | (k & 0x1FFFFF); }

/* The box of the vertices v[0..n) of a primitive at za and zb, grown by r. */
static void swept_box(const int32_t *v, int n, const double *za, const double *zb, double r, double lo[3], double hi[3])
{
  for (int a = 0; a < 3; ++a) lo[a] = INFINITY, hi[a] = -INFINITY;
  for (int k = 0; k < n; ++k)
    for (int a = 0; a < 3; ++a) {
      const double p = za[3 * (int64_t)v[k] + a], q = zb[3 * (int64_t)v[k] + a];
      lo[a] = fmin(lo[a], fmin(p, q) - r), hi[a] = fmax(hi[a], fmax(p, q) + r);
    }
}

/* The cells a box covers: [c0, c1] per axis; 0 when too many (a box of more than 4096 cells is treated as
 * the caller's fallback: every primitive is a candidate). */
static int box_cells(double h, const double lo[3], const double hi[3], int64_t c0[3], int64_t c1[3])
{
  double n = 1;
  for (int a = 0; a < 3; ++a) c0[a] = (int64_t)floor(lo[a] / h), c1[a] = (int64_t)floor(hi[a] / h), n *= (double)(c1[a] - c0[a] + 1);
  return n <= 4096;
}

static PetscErrorCode add_pair(pbng_pd_contact *c, int kind, const int32_t *v)
{
  PetscFunctionBeginUser;
  if (c->npairs == c->cap) {
    pair *p;
    c->cap = c->cap ? 2 * c->cap : 1024;
    PetscCall(PetscMalloc1(c->cap, &p));
    if (c->npairs) memcpy(p, c->pairs, sizeof(pair) * (size_t)c->npairs);
    PetscCall(PetscFree(c->pairs));
    c->pairs = p;
  }
  c->pairs[c->npairs].kind = kind;
  memcpy(c->pairs[c->npairs].v, v, sizeof(int32_t) * 4);
  ++c->npairs;
  PetscFunctionReturn(0);
}

/* The items (primitives `prims` of n vertices each) in the cells of their swept boxes grown by r. */
static PetscErrorCode hash_primitives(const pbng_pd_contact *c, const int32_t *prims, int n, int32_t count, const double *za, const double *zb, double r,
                                      cell_table *table, uint8_t *big)
{
  int64_t cap = 8 * (int64_t)count + 16, m = 0;
  cell_item *it;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(cap, &it));
  for (int32_t p = 0; p < count; ++p) {
    double lo[3], hi[3];
    int64_t c0[3], c1[3];
    swept_box(&prims[n * (int64_t)p], n, za, zb, r, lo, hi);
    big[p] = !box_cells(c->cell, lo, hi, c0, c1);
    if (big[p]) continue;
    for (int64_t i = c0[0]; i <= c1[0]; ++i)
      for (int64_t j = c0[1]; j <= c1[1]; ++j)
        for (int64_t k = c0[2]; k <= c1[2]; ++k) {
          if (m == cap) {
            cell_item *q;
            PetscCall(PetscMalloc1(2 * cap, &q));
            memcpy(q, it, sizeof(cell_item) * (size_t)m);
            PetscCall(PetscFree(it));
            it = q, cap *= 2;
          }
          it[m].key = cell_key(i, j, k), it[m].id = p, ++m;
        }
  }
  /* counting sort into 2^k >= 2 m buckets (no comparison sort: the broad phase runs once per projection) */
  int64_t nb = 1;
  while (nb < 2 * m) nb *= 2;
  table->mask = nb - 1;
  PetscCall(PetscCalloc1(nb + 1, &table->start));
  PetscCall(PetscMalloc1(m + 1, &table->item));
  for (int64_t k = 0; k < m; ++k) ++table->start[bucket_of(it[k].key, table->mask) + 1];
  for (int64_t b = 0; b < nb; ++b) table->start[b + 1] += table->start[b];
  for (int64_t k = 0; k < m; ++k) table->item[table->start[bucket_of(it[k].key, table->mask)]++] = it[k];
  for (int64_t b = nb; b > 0; --b) table->start[b] = table->start[b - 1];
  table->start[0] = 0;
  PetscCall(PetscFree(it));
  PetscFunctionReturn(0);
}

/* Query q (vertices qv) against item p (vertices iv): a pair unless seen for q already, ordered away (same-kind
 * lists keep p > q) or excluded (a one-ring apart). */
static PetscErrorCode consider(pbng_pd_contact *c, int kind, int32_t q, const int32_t *qv, int nq, int32_t p, const int32_t *iv, int ni, int32_t *stamp, int same)
{
  PetscFunctionBeginUser;
  if (stamp[p] == q || (same && p <= q)) PetscFunctionReturn(0);
  stamp[p] = q;
  if (excluded(c, qv, nq, iv, ni)) PetscFunctionReturn(0);
  int32_t v[4] = {0, 0, 0, 0};
  for (int k = 0; k < nq; ++k) v[k] = qv[k];
  for (int k = 0; k < ni; ++k) v[nq + k] = iv[k];
  PetscCall(add_pair(c, kind, v));
  PetscFunctionReturn(0);
}

/* Calls add_pair for each (query, item) whose boxes share a cell (or whose item box was too big), once,
 * keeping those the filter admits. Queries: primitives of nq vertices; items as hashed. */
static PetscErrorCode match(pbng_pd_contact *c, int kind, const int32_t *queries, int nq, int32_t nquery, const int32_t *items_v, int ni, int32_t nitem,
                            const cell_table *table, const uint8_t *big, const double *za, const double *zb, int same)
{
  int32_t *stamp;

  int32_t *bigs, nbig = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(nitem + 1, &stamp, nitem + 1, &bigs));
  for (int32_t p = 0; p < nitem; ++p) {
    stamp[p] = -1;
    if (big[p]) bigs[nbig++] = p;
  }
  for (int32_t q = 0; q < nquery; ++q) {
    const int32_t *qv = &queries[nq * (int64_t)q];
    double lo[3], hi[3];
    int64_t c0[3], c1[3];
    int all = 0;
    swept_box(qv, nq, za, zb, 0.0, lo, hi);
    if (!box_cells(c->cell, lo, hi, c0, c1)) all = 1;
    for (int pass = 0; pass < 2; ++pass) {
      /* pass 0: the big items (and every item when the query's box is big); pass 1: the hashed cells */
      if (pass == 0) {
        for (int32_t b = 0, nb = all ? nitem : nbig; b < nb; ++b) {
          const int32_t p = all ? b : bigs[b];
          PetscCall(consider(c, kind, q, qv, nq, p, &items_v[ni * (int64_t)p], ni, stamp, same));
        }
        continue;
      }
      if (all) continue;
      for (int64_t i = c0[0]; i <= c1[0]; ++i)
        for (int64_t j = c0[1]; j <= c1[1]; ++j)
          for (int64_t k = c0[2]; k <= c1[2]; ++k) {
            const int64_t key = cell_key(i, j, k), b = bucket_of(key, table->mask);
            for (int64_t s = table->start[b]; s < table->start[b + 1]; ++s)
              if (table->item[s].key == key)
                PetscCall(consider(c, kind, q, qv, nq, table->item[s].id, &items_v[ni * (int64_t)table->item[s].id], ni, stamp, same));
          }
    }
  }
  PetscCall(PetscFree2(stamp, bigs));
  PetscFunctionReturn(0);
}

/* Every pair whose primitives' swept boxes (from za to zb) come within r of each other, and every free
 * vertex within r (plus its move) of an obstacle. */
static PetscErrorCode collect_pairs(pbng_pd_contact *c, const double *za, const double *zb, double r)
{
  cell_table table;
  uint8_t *big;
  int32_t *verts;

  PetscFunctionBeginUser;
  c->npairs = 0;
  PetscCall(PetscMalloc1(PetscMax(c->ntri, c->nedge) + 1, &big));
  PetscCall(PetscMalloc1(c->nv + 1, &verts));
  for (int32_t v = 0; v < c->nv; ++v) verts[v] = v;
  PetscCall(hash_primitives(c, &c->tri[0][0], 3, c->ntri, za, zb, r, &table, big));
  PetscCall(match(c, PAIR_VT, verts, 1, c->nv, &c->tri[0][0], 3, c->ntri, &table, big, za, zb, 0));
  PetscCall(PetscFree(table.item));
  PetscCall(PetscFree(table.start));
  PetscCall(hash_primitives(c, &c->edge[0][0], 2, c->nedge, za, zb, r, &table, big));
  PetscCall(match(c, PAIR_EE, &c->edge[0][0], 2, c->nedge, &c->edge[0][0], 2, c->nedge, &table, big, za, zb, 1));
  PetscCall(PetscFree(table.item));
  PetscCall(PetscFree(table.start));
  for (int32_t v = 0; v < c->nv; ++v) {
    if (!c->free[v]) continue;
    double q[3], n[3], d[3];
    vec3_sub(&zb[3 * (int64_t)v], &za[3 * (int64_t)v], d);
    for (int o = 0; o < c->opt.nobstacles; ++o) {
      const double phi = fmin(pbng_obstacle_closest(&c->opt.obstacle[o], &za[3 * (int64_t)v], q, n), pbng_obstacle_closest(&c->opt.obstacle[o], &zb[3 * (int64_t)v], q, n));
      if (phi < r + vec3_norm(d)) {
        const int32_t pv[4] = {v, o, 0, 0};
        PetscCall(add_pair(c, PAIR_VO, pv));
      }
    }
  }
  PetscCall(PetscFree(big));
  PetscCall(PetscFree(verts));
  PetscFunctionReturn(0);
}

/* ---- pairs ------------------------------------------------------------------------------------------- */

static int pair_vertices(const pair *p) { return p->kind == PAIR_VO ? 1 : 4; }

static int pair_moves(const pbng_pd_contact *c, const pair *p)
{
  for (int k = 0; k < pair_vertices(p); ++k)
    if (c->free[p->v[k]]) return 1;
  return 0;
}

/* The pair's distance at z (an obstacle's: the signed one), the unit direction dir from its second primitive
 * to its first, and per vertex slot the weight w (the closest points' barycentric coordinates, negative on
 * the second primitive: a move of the slots along w dir separates them). */
static double pair_geometry(const pbng_pd_contact *c, const pair *p, const double *z, double w[4], double dir[3])
{
  const double *P[4];
  double d[3], q[3], len;
  for (int k = 0; k < pair_vertices(p); ++k) P[k] = &z[3 * (int64_t)p->v[k]];
  if (p->kind == PAIR_VO) {
    w[0] = 1;
    return pbng_obstacle_closest(&c->opt.obstacle[p->v[1]], P[0], q, dir);
  }
  if (p->kind == PAIR_VT) {
    double b[3];
    len = sqrt(pbng_point_triangle_closest(P[0], P[1], P[2], P[3], b, q));
    vec3_sub(P[0], q, d);
    w[0] = 1, w[1] = -b[0], w[2] = -b[1], w[3] = -b[2];
    if (!(len > 0)) pbng_triangle_normal(P[1], P[2], P[3], d), len = 0;
  } else {
    double s, t, pa[3], pb[3];
    len = sqrt(pbng_segment_segment_closest(P[0], P[1], P[2], P[3], &s, &t));
    for (int a = 0; a < 3; ++a) pa[a] = (1 - s) * P[0][a] + s * P[1][a], pb[a] = (1 - t) * P[2][a] + t * P[3][a];
    vec3_sub(pa, pb, d);
    w[0] = 1 - s, w[1] = s, w[2] = -(1 - t), w[3] = -t;
    if (!(len > 0)) {
      double e1[3], e2[3];
      vec3_sub(P[1], P[0], e1), vec3_sub(P[3], P[2], e2);
      vec3_cross(e1, e2, d);
    }
  }
  const double n = vec3_norm(d);
  for (int a = 0; a < 3; ++a) dir[a] = n > 0 ? d[a] / n : (a == 0);
  return len;
}

/* A lower bound of the pair's time of impact from z_prev to z (Alg. 2 line 6; 1: none within the step). An
 * obstacle's: advances by the gap over the vertex's speed (the signed distance is 1-Lipschitz). */
static double pair_toi(const pbng_pd_contact *c, const pair *p)
{
  double x[4][3], dx[4][3];
  for (int k = 0; k < pair_vertices(p); ++k)
    for (int a = 0; a < 3; ++a) x[k][a] = c->z_prev[3 * (int64_t)p->v[k] + a], dx[k][a] = c->z[3 * (int64_t)p->v[k] + a] - x[k][a];
  if (p->kind == PAIR_VT) return pbng_accd_point_triangle(x, dx, c->xi, PBNG_ACCD_CONSERVATIVE, PBNG_ACCD_MAX_ITERATIONS);
  if (p->kind == PAIR_EE) return pbng_accd_edge_edge(x, dx, c->xi, PBNG_ACCD_CONSERVATIVE, PBNG_ACCD_MAX_ITERATIONS);
  const double speed = vec3_norm(dx[0]);
  double q[3], n[3], t = 0, pt[3];
  const double g0 = pbng_obstacle_closest(&c->opt.obstacle[p->v[1]], x[0], q, n) - c->xi;
  if (!(g0 > 0)) return 0;
  if (!(speed > 0)) return 1;
  for (int it = 0; it < 100000; ++it) {
    for (int a = 0; a < 3; ++a) pt[a] = x[0][a] + t * dx[0][a];
    const double g = pbng_obstacle_closest(&c->opt.obstacle[p->v[1]], pt, q, n) - c->xi;
    if (g < (1 - PBNG_ACCD_CONSERVATIVE) * g0) return t;
    t += PBNG_ACCD_CONSERVATIVE * g / speed;
    if (t >= 1) return 1;
  }
  return t;
}

/* Alg. 2 lines 4-17 with the check of the header's step 2: every free vertex moved back along its move to
 * its time of impact, then any pair closer than xi sends its vertices to z_prev until none is. */
static PetscErrorCode clamp_pass(pbng_pd_contact *c, pbng_pd_contact_stats *st)
{
  PetscFunctionBeginUser;
  for (int32_t v = 0; v < c->nv; ++v) c->tmin[v] = 1;
  for (int64_t k = 0; k < c->npairs; ++k) {
    const pair *p = &c->pairs[k];
    if (!pair_moves(c, p)) continue;
    const double t = pair_toi(c, p);
    for (int s = 0; s < pair_vertices(p); ++s) c->tmin[p->v[s]] = fmin(c->tmin[p->v[s]], t);
  }
  for (int32_t v = 0; v < c->nv; ++v)
    if (c->free[v] && c->tmin[v] < 1) {
      for (int a = 0; a < 3; ++a) c->z[3 * (int64_t)v + a] = c->z_prev[3 * (int64_t)v + a] + c->tmin[v] * (c->z[3 * (int64_t)v + a] - c->z_prev[3 * (int64_t)v + a]);
      ++st->clamped;
    }
  for (int pass = 0; pass <= c->nv; ++pass) {
    int reverted = 0;
    for (int64_t k = 0; k < c->npairs; ++k) {
      const pair *p = &c->pairs[k];
      double w[4], dir[3];
      if (!pair_moves(c, p) || pair_geometry(c, p, c->z, w, dir) > c->xi) continue;
      for (int s = 0; s < pair_vertices(p); ++s) {
        const int32_t v = p->v[s];
        if (!c->free[v] || !memcmp(&c->z[3 * (int64_t)v], &c->z_prev[3 * (int64_t)v], 3 * sizeof(double))) continue;
        memcpy(&c->z[3 * (int64_t)v], &c->z_prev[3 * (int64_t)v], 3 * sizeof(double));
        ++st->reverted, reverted = 1;
      }
    }
    if (!reverted) break;
  }
  PetscFunctionReturn(0);
}

/* One gradient step of Eq. 49 with the step bound of Eq. 53; returns the largest vertex move. */
static PetscErrorCode gradient_step(pbng_pd_contact *c, pbng_pd_contact_stats *st, double *move)
{
  const pbng_pd_contact_options *o = &c->opt;
  double *g = c->work, *asum = c->tmin, alpha0 = 0, disp = 0;

  PetscFunctionBeginUser;
  for (int32_t v = 0; v < c->nv; ++v) {
    asum[v] = 0;
    for (int a = 0; a < 3; ++a) g[3 * (int64_t)v + a] = c->free[v] ? c->y[3 * (int64_t)v + a] - c->z[3 * (int64_t)v + a] : 0.0;
    disp = fmax(disp, vec3_norm(&g[3 * (int64_t)v]));
  }
  st->pairs = 0;
  for (int64_t k = 0; k < c->npairs; ++k) {
    const pair *p = &c->pairs[k];
    double w[4], dir[3];
    const double d = pair_geometry(c, p, c->z, w, dir), x = pbng_contact_distance_rescale(d, c->xi, o->eps) - c->xi;
    if (x >= o->dhat || !pair_moves(c, p)) continue;
    const double push = -pbng_barrier_derivative(x, o->dhat); /* the bracket of Eq. 49, > 0 */
    ++st->pairs;
    for (int s = 0; s < pair_vertices(p); ++s) {
      const int32_t v = p->v[s];
      if (!c->free[v]) continue;
      for (int a = 0; a < 3; ++a) g[3 * (int64_t)v + a] += o->mu * push * w[s] * dir[a];
      asum[v] += fabs(w[s]);
    }
  }
  for (int32_t v = 0; v < c->nv; ++v) alpha0 = fmax(alpha0, asum[v]);
  double lambda = pbng_contact_step_bound(o->eps, c->xi, o->mu, alpha0, pbng_barrier_derivative_bound(c->xi, o->eps, o->dhat), disp);
  if (!(st->pairs > 0 && isfinite(lambda))) lambda = 0; /* no pair within reach: z stays where the clamp left it */
  *move = 0;
  for (int32_t v = 0; v < c->nv; ++v) {
    if (!c->free[v]) continue;
    for (int a = 0; a < 3; ++a) c->z[3 * (int64_t)v + a] += lambda * g[3 * (int64_t)v + a];
    *move = fmax(*move, lambda * vec3_norm(&g[3 * (int64_t)v]));
  }
  ++st->steps;
  PetscFunctionReturn(0);
}

/* The smallest distance at z over the candidate pairs (inf: none). */
static PetscErrorCode min_distance(pbng_pd_contact *c, const double *z, double *dmin, const pair **worst)
{
  PetscFunctionBeginUser;
  *dmin = INFINITY;
  if (worst) *worst = NULL;
  for (int64_t k = 0; k < c->npairs; ++k) {
    double w[4], dir[3];
    const double d = pair_geometry(c, &c->pairs[k], z, w, dir);
    if (d < *dmin) {
      *dmin = d;
      if (worst) *worst = &c->pairs[k];
    }
  }
  PetscFunctionReturn(0);
}

/* ---- the interface ----------------------------------------------------------------------------------- */

PetscErrorCode pbng_pd_contact_create(const pbng_dmesh *dm, const pbng_pd_contact_options *o, double xi, pbng_pd_contact **out)
{
  pbng_pd_contact *c;
  int64_t *tris;
  int ntri;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&c));
  c->opt = *o;
  c->xi = xi;
  c->comm = dm->comm;
  PetscCall(gather_triangles(dm, &ntri, &tris));
  PetscCall(build_topology(c, ntri, tris));
  PetscCall(PetscFree(tris));
  PetscCall(build_gather(dm, c));
  PetscCall(PetscMalloc5(3 * (int64_t)c->nv + 3, &c->y, 3 * (int64_t)c->nv + 3, &c->z, 3 * (int64_t)c->nv + 3, &c->z_prev, 3 * (int64_t)c->nv + 3, &c->work,
                         (int64_t)c->nv + 1, &c->tmin));
  PetscCall(gather_positions(c, dm->X, c->z_prev));
  double len = 0;
  for (int32_t k = 0; k < c->nedge; ++k) {
    double d[3];
    vec3_sub(&c->z_prev[3 * (int64_t)c->edge[k][1]], &c->z_prev[3 * (int64_t)c->edge[k][0]], d);
    len += vec3_norm(d) / c->nedge;
  }
  c->cell = fmax(len, xi + o->dhat);
  double dmin;
  const pair *worst;
  PetscCall(collect_pairs(c, c->z_prev, c->z_prev, xi + o->dhat));
  PetscCall(min_distance(c, c->z_prev, &dmin, &worst));
  if (worst && !(dmin > xi)) {
    const int n = pair_vertices(worst);
    SETERRQ(dm->comm, PETSC_ERR_ARG_OUTOFRANGE,
            "-pd_contact: at rest, %s %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " are %g apart, not more than the contact thickness %g (a smaller "
            "-pd_contact_thickness, a finer mesh, or obstacles farther away)",
            worst->kind == PAIR_VT ? "vertex, triangle" : worst->kind == PAIR_EE ? "edges" : "vertex, obstacle", c->gid[worst->v[0]],
            n > 1 ? c->gid[worst->v[1]] : (int64_t)worst->v[1], n > 1 ? c->gid[worst->v[2]] : -1, n > 1 ? c->gid[worst->v[3]] : -1, dmin, xi);
  }
  *out = c;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_pd_contact_destroy(pbng_pd_contact **c)
{
  PetscFunctionBeginUser;
  if (!*c) PetscFunctionReturn(0);
  PetscCall(PetscFree((*c)->gid));
  PetscCall(PetscFree((*c)->local));
  PetscCall(PetscFree((*c)->free));
  PetscCall(PetscFree((*c)->tri));
  PetscCall(PetscFree((*c)->edge));
  PetscCall(PetscFree((*c)->nbr_start));
  PetscCall(PetscFree((*c)->nbr));
  PetscCall(PetscFree2((*c)->count, (*c)->displ));
  PetscCall(PetscFree((*c)->order));
  PetscCall(PetscFree((*c)->mine_idx));
  PetscCall(PetscFree((*c)->mine));
  PetscCall(PetscFree5((*c)->y, (*c)->z, (*c)->z_prev, (*c)->work, (*c)->tmin));
  PetscCall(PetscFree((*c)->pairs));
  PetscCall(PetscFree(*c));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_pd_contact_reset(pbng_pd_contact *c, const double *x)
{
  PetscFunctionBeginUser;
  PetscCall(gather_positions(c, x, c->z_prev));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_pd_contact_project(pbng_pd_contact *c, double *x, pbng_pd_contact_stats *st)
{
  PetscFunctionBeginUser;
  memset(st, 0, sizeof(*st));
  PetscCall(gather_positions(c, x, c->y));
  memcpy(c->z, c->y, sizeof(double) * 3 * (size_t)c->nv);
  /* the candidates of the whole projection: z only moves back along z_prev -> y (clamps, reverts) and by at most
   * eps xi per gradient step (Eq. 53), so pairs farther apart than xi + dhat + that can never act */
  PetscCall(collect_pairs(c, c->z_prev, c->y, c->xi + c->opt.dhat + (c->opt.iterations + 1) * c->opt.eps * c->xi));
  for (int m = 0;; ++m) {
    double move = 0;
    PetscCall(clamp_pass(c, st));
    if (m == c->opt.iterations) break;
    PetscCall(gradient_step(c, st, &move));
    if (move < 1e-3 * c->xi) {
      PetscCall(clamp_pass(c, st));
      break;
    }
  }
  for (int32_t v = 0; v < c->nv; ++v)
    if (c->local[v] >= 0 && c->free[v]) memcpy(&x[3 * (int64_t)c->local[v]], &c->z[3 * (int64_t)v], 3 * sizeof(double));
  memcpy(c->z_prev, c->z, sizeof(double) * 3 * (size_t)c->nv);
  PetscCall(min_distance(c, c->z, &st->min_distance, NULL));
  PetscFunctionReturn(0);
}
