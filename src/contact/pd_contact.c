#include "contact/pd_contact.h"
#include "core/csr.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/barrier.h"
#include "core/ccd.h"
#include "core/element.h"
#include "core/grow.h"
#include "core/sorted_ids.h"
#include "core/vec3.h"
#include "contact/box_hash.h"
#include "contact/surface.h"
#include "parallel/halo.h"

enum { PAIR_VT = 0, PAIR_EE = 1, PAIR_VO = 2 };

/* The candidate list's two references: its pairs of one group (body) are kept from one, its pairs of two groups from the
 * other, so that bodies closing on each other remake the latter only (make_list). */
enum { REF_SELF = 0, REF_CROSS = 1 };

/* The paths of a stage (list_bounds, select_from_list): SEGMENTS, each vertex anywhere on its segment z_prev -> end
 * (Alg. 2's clamps stop vertices at different fractions of their moves); COMMON, every vertex at one fraction t of its
 * move (z_prev + t (end - z_prev), ACCD's own paths: a rigidly moving body keeps its distances). */
enum { PATHS_SEGMENTS = 0, PATHS_COMMON = 1 };

/* What make_list collects: every pair (both references made again), or the pairs of two groups only. */
enum { COLLECT_NONE = 0, COLLECT_ALL = 1, COLLECT_CROSS = 2 };

typedef struct {
  double *ref;        /* [nv][3] the positions (z_prev) when these pairs were collected; entries of the vertices active then */
  double (*T)[3], *E; /* [3 ngroups] per group: translation from ref and largest stray at z_prev, at the stage's end, over
                       * both (group_motion) */
  double *stray;      /* [nv] an active vertex's stray |z_prev - ref - T_g(z_prev)| (list_strays) */
} list_ref;

typedef struct {
  int kind;
  int32_t v[4]; /* VT: vertex, triangle corners; EE: edge a, edge b; VO: vertex, obstacle index in v[1] */
  double d;     /* the distance at z_prev when collected (in the candidate list: at its ref); an obstacle pair's: the signed one */
} pair;

struct pbng_pd_contact {
  pbng_pd_contact_options opt;
  double xi;
  MPI_Comm comm;
  int rank, size;
  int32_t nv, ntri, nedge; /* the whole surface (its topology is replicated; positions are not) */
  int64_t *gid;           /* [nv] sorted */
  int32_t *local;         /* [nv] local index here, or -1 */
  uint8_t *free;          /* [nv] 1: may move */
  uint8_t *owned;         /* [nv] 1: owned here */
  int *owner;             /* [nv] the owning rank */
  int32_t (*tri)[3];      /* compact corners, outward order */
  int32_t (*edge)[2];     /* compact ends, a < b */
  int32_t *nbr_start, *nbr, *nbr_edge; /* vertex adjacency through edges (sorted), and each entry's edge */
  int32_t *vt_start, *vt; /* vertex -> its triangles */
  int64_t *body;          /* [nv] body (pbng_body_labels: the smallest global node id of its component) */
  double *rest;           /* [nv][3] rest positions */
  double rest_exclusion;  /* in effect (pbng_pd_contact_rest_exclusion) */
  double longest_edge;    /* at rest */
  int32_t nmine;          /* this rank's owned surface vertices */
  int32_t *mine;          /* [nmine] their compact indices, increasing */
  pbng_halo ghosts;       /* owned -> the ranks holding them as ghosts (static; compact indices, one color) */
  pbng_halo halo;         /* owned -> the ranks whose pairs need them (rebuilt per projection) */
  uint8_t *active;        /* [nv] 1: positions known here in this projection (owned, ghosts, halo) */
  int32_t nactive, *active_list;
  int32_t nltri, nledge;  /* the primitives whose vertices are all active, in increasing global order */
  int32_t (*ltri)[3], (*ledge)[2];
  double *y, *z, *z_prev, *work; /* [nv][3]: entries of active vertices valid */
  double *tmin;           /* [nv] */
  double *seg;            /* [nv] an active vertex's move |y - z_prev| in this projection */
  const double *end;      /* the far end of the current stage's segments z_prev -> end: y, then z after a gradient step
                           * (pbng_pd_contact_project) */
  int stage_paths;        /* the paths the stage's pairs were selected on from the list (PATHS_*), or -1: collected afresh */
  double drift;           /* the gradient steps' moves since the stage's pairs were selected (kept: next_stage) */
  double step_move;       /* the last projection's largest gradient step move (stage_margin) */
  /* the candidate list (VT, EE): the pairs not left out by the rest exclusion whose distance at their ref (z_prev when
   * they were collected: lref[g != h]) is below xi + dhat + W_gh (width, per pair of groups), kept over the projections
   * while no pair of groups can have come closer by more than its width, up to each group's common translation
   * (list_valid, list_bounds); its halo plan and active primitives are the halo's */
  pair *list;
  int64_t nlist, listcap;
  list_ref lref[2];       /* REF_SELF, REF_CROSS */
  int32_t ngroups, *group; /* [nv] each vertex's body as 0 .. ngroups - 1 (all 0 beyond PD_MAX_GROUPS bodies) */
  double *width;          /* [ngroups^2] the list's width W_gh for the pairs of groups g, h (symmetric) */
  double *bound;          /* [ngroups^2] this projection's group_bounds (list_bounds) */
  double *spread;         /* [ngroups^2] common-time paths: the most a pair of groups' vertices move apart (list_bounds) */
  double (*gbox)[6];      /* [ngroups] each group's box over z_prev and the stage's end (group_motion) */
  int collecting;         /* while the list is being made: the pairs kept are those within xi + dhat + W_gh at z_prev (COLLECT_ALL),
                           * of two groups only (COLLECT_CROSS) */
  int list_valid;
  double *list_d0;        /* [list_d0_cap] a list pair's distance at z_prev, computed once per projection (select_from_list; its
                           * stages select from the list at one z_prev); valid while list_d0_known */
  int64_t list_d0_cap;
  int list_d0_known;      /* 0: z_prev or the list changed since list_d0 was last cleared (forget_list_distances) */
  pair *pairs;            /* this rank's pairs (pair_rank), sorted */
  int64_t npairs, cap;
  double cell;            /* broad phase cell size */
  double *xb;             /* [nv][3] pbng_pd_contact_barrier's positions (entries of active vertices valid) */
};

/* ---- topology ---------------------------------------------------------------------------------------- */

static int compare_i64_pair(const void *a, const void *b)
{
  const int64_t *x = a, *y = b;
  if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
  return (x[1] > y[1]) - (x[1] < y[1]);
}

static int compare_i32(const void *a, const void *b)
{
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
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

/* Pairs in a partition-independent order: kind, then vertices (compact indices are global). */
static int compare_pair(const void *a, const void *b)
{
  const pair *x = a, *y = b;
  if (x->kind != y->kind) return (x->kind > y->kind) - (x->kind < y->kind);
  for (int k = 0; k < 4; ++k)
    if (x->v[k] != y->v[k]) return (x->v[k] > y->v[k]) - (x->v[k] < y->v[k]);
  return 0;
}

static int32_t compact_of(const pbng_pd_contact *c, int64_t g)
{
  return (int32_t)pbng_sorted_index(c->gid, c->nv, g);
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

/* The vertex -> edge adjacency (nbr, with each entry's edge in nbr_edge) and vertex -> triangle incidence. */
static PetscErrorCode build_adjacency(pbng_pd_contact *c)
{
  PetscFunctionBeginUser;
  /* each vertex's edges (the edges' end positions by vertex, as edges k; edges are sorted, so each vertex's entries
   * come out sorted), and the other end of each */
  PetscCall(pbng_csr_by_key32(2 * (int64_t)c->nedge, &c->edge[0][0], 2, c->nv, &c->nbr_start, &c->nbr_edge));
  PetscCall(PetscMalloc1(2 * (int64_t)c->nedge + 1, &c->nbr));
  for (int32_t v = 0; v < c->nv; ++v)
    for (int32_t j = c->nbr_start[v]; j < c->nbr_start[v + 1]; ++j) {
      const int32_t *e = c->edge[c->nbr_edge[j]];
      c->nbr[j] = e[0] == v ? e[1] : e[0];
    }
  PetscCall(pbng_csr_by_key32(3 * (int64_t)c->ntri, &c->tri[0][0], 3, c->nv, &c->vt_start, &c->vt)); /* each vertex's triangles */
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
  qsort(g, 3 * (size_t)ntri, sizeof(int64_t), pbng_compare_int64);
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
  PetscCall(build_adjacency(c));
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

/* ---- ownership, and the exchanges between ranks ---------------------------------------------------------- */

typedef struct {
  int32_t v;
  int32_t rank;
  uint8_t free;
  double x[3];
  int64_t body;
} vertex_item;

/* local[], owned[], this rank's owned surface vertices; free flags, rest positions and bodies of the whole surface
 * (gathered once; the bodies are the contact code's one labelling, pbng_body_labels). */
static PetscErrorCode build_ownership(const pbng_dmesh *dm, pbng_pd_contact *c)
{
  int64_t *key;
  vertex_item *mine, *all;
  int total;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(2 * (int64_t)dm->nlocal + 2, &key));
  for (int32_t i = 0; i < dm->nlocal; ++i) key[2 * i] = dm->global_node[i], key[2 * i + 1] = i;
  qsort(key, (size_t)dm->nlocal, 2 * sizeof(int64_t), pbng_compare_int64);
  PetscCall(PetscMalloc1(c->nv + 1, &c->local));
  PetscCall(PetscCalloc1(c->nv + 1, &c->owned));
  PetscCall(PetscMalloc1(c->nv + 1, &c->mine));
  c->nmine = 0;
  for (int32_t v = 0; v < c->nv; ++v) {
    int64_t lo = 0, hi = dm->nlocal;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (key[2 * mid] < c->gid[v]) lo = mid + 1;
      else hi = mid;
    }
    c->local[v] = lo < dm->nlocal && key[2 * lo] == c->gid[v] ? (int32_t)key[2 * lo + 1] : -1;
    if (c->local[v] >= 0 && c->local[v] < dm->nowned) c->mine[c->nmine++] = v, c->owned[v] = 1;
  }
  PetscCall(PetscFree(key));
  int64_t *body, nbodies;
  int rounds;
  PetscCall(PetscMalloc1(dm->nlocal + 1, &body));
  PetscCall(pbng_body_labels(dm, body, &nbodies, &rounds));
  PetscCall(PetscCalloc1(c->nmine + 1, &mine)); /* zeroed: the items' padding is sent too */
  for (int32_t k = 0; k < c->nmine; ++k) {
    const int32_t v = c->mine[k], i = c->local[v];
    mine[k].v = v, mine[k].rank = c->rank, mine[k].free = i < dm->nfree, mine[k].body = body[i];
    for (int a = 0; a < 3; ++a) mine[k].x[a] = dm->X[3 * (int64_t)i + a];
  }
  PetscCall(PetscFree(body));
  PetscCall(pbng_allgather_items(dm->comm, sizeof(vertex_item), c->nmine, mine, &total, (void **)&all));
  PetscCheck(total == c->nv, dm->comm, PETSC_ERR_PLIB, "pd contact: %d owned surface vertices over the ranks, %d in the surface", total, (int)c->nv);
  PetscCall(PetscMalloc1(c->nv + 1, &c->free));
  PetscCall(PetscMalloc1(3 * (int64_t)c->nv + 3, &c->rest));
  PetscCall(PetscMalloc1(c->nv + 1, &c->body));
  PetscCall(PetscMalloc1(c->nv + 1, &c->owner));
  for (int k = 0; k < total; ++k) {
    c->free[all[k].v] = all[k].free, c->body[all[k].v] = all[k].body, c->owner[all[k].v] = all[k].rank;
    memcpy(&c->rest[3 * (int64_t)all[k].v], all[k].x, sizeof(all[k].x));
  }
  PetscCall(PetscFree(mine));
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* The static plan: every surface vertex this rank holds as a ghost, from its owner. */
static PetscErrorCode build_ghost_plan(const pbng_dmesh *dm, pbng_pd_contact *c)
{
  int *count;
  int32_t *idx, n = 0;
  int64_t *key;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(c->size, &count));
  PetscCall(PetscMalloc1(2 * (int64_t)c->nv + 2, &key));
  for (int32_t v = 0; v < c->nv; ++v)
    if (c->local[v] >= dm->nowned) key[2 * n] = pbng_dmesh_node_owner(dm, c->local[v]), key[2 * n + 1] = v, ++count[key[2 * n]], ++n;
  qsort(key, (size_t)n, 2 * sizeof(int64_t), compare_i64_pair); /* by owner, then vertex */
  PetscCall(PetscMalloc1(n + 1, &idx));
  for (int32_t k = 0; k < n; ++k) idx[k] = (int32_t)key[2 * k + 1];
  PetscCall(PetscFree(key));
  PetscCall(pbng_halo_create_from_one_side(c->comm, 0, count, idx, &c->ghosts));
  PetscCall(PetscFree(count));
  PetscFunctionReturn(0);
}

/* The bodies each with its own translation in the candidate list's test: beyond this many, one for all. */
#define PD_MAX_GROUPS 64

/* Each vertex's group: its body's rank among the surface's bodies (pbng_body_labels), or 0 for all. */
static PetscErrorCode build_groups(pbng_pd_contact *c)
{
  int64_t *b;
  int32_t n = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(c->nv + 1, &b));
  memcpy(b, c->body, sizeof(int64_t) * (size_t)c->nv);
  qsort(b, (size_t)c->nv, sizeof(int64_t), pbng_compare_int64);
  for (int32_t k = 0; k < c->nv; ++k)
    if (k == 0 || b[k] != b[n - 1]) b[n++] = b[k];
  c->ngroups = n <= PD_MAX_GROUPS ? PetscMax(n, 1) : 1;
  PetscCall(PetscMalloc1(c->nv + 1, &c->group));
  for (int32_t v = 0; v < c->nv; ++v) c->group[v] = c->ngroups > 1 ? (int32_t)pbng_sorted_index(b, n, c->body[v]) : 0;
  for (int r = 0; r < 2; ++r) {
    list_ref *l = &c->lref[r];
    PetscCall(PetscMalloc4(3 * c->ngroups, &l->T, 3 * c->ngroups, &l->E, 3 * (int64_t)c->nv + 3, &l->ref, c->nv + 1, &l->stray));
    memcpy(l->ref, c->rest, sizeof(double) * 3 * (size_t)c->nv); /* (defined everywhere; read where collected only) */
  }
  PetscCall(PetscMalloc1(c->ngroups, &c->gbox));
  PetscCall(PetscCalloc3((size_t)c->ngroups * c->ngroups, &c->width, (size_t)c->ngroups * c->ngroups, &c->bound, (size_t)c->ngroups * c->ngroups, &c->spread));
  PetscCall(PetscFree(b));
  PetscFunctionReturn(0);
}

/* ---- the surface halo of a projection --------------------------------------------------------------------- */

/* The box of vertex v and its edge neighbours (every primitive containing v), swept from za to zb. */
static void neighbourhood_box(const pbng_pd_contact *c, int32_t v, const double *za, const double *zb, double lo[3], double hi[3])
{
  for (int a = 0; a < 3; ++a) lo[a] = INFINITY, hi[a] = -INFINITY;
  for (int32_t k = c->nbr_start[v] - 1; k < c->nbr_start[v + 1]; ++k) {
    const int32_t u = k < c->nbr_start[v] ? v : c->nbr[k];
    for (int a = 0; a < 3; ++a) {
      const double p = za[3 * (int64_t)u + a], q = zb[3 * (int64_t)u + a];
      lo[a] = fmin(lo[a], fmin(p, q)), hi[a] = fmax(hi[a], fmax(p, q));
    }
  }
}

static int boxes_within(const double *lo, const double *hi, const double *lo2, const double *hi2, double r)
{
  for (int a = 0; a < 3; ++a)
    if (lo[a] > hi2[a] + r || hi[a] < lo2[a] - r) return 0;
  return 1;
}

/* The halo plan of this projection: each owned vertex goes to every rank whose region (the box of the
 * neighbourhoods of its owned vertices) comes within r of the vertex's neighbourhood, so that every pair
 * within r of a primitive with an owned vertex has all its vertices here. Collective. */
static PetscErrorCode build_halo_plan(pbng_pd_contact *c, double r)
{
  double box[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY}, *boxes, (*nb)[6];
  int *count;
  int32_t *idx, n = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3(6 * (int64_t)c->size, &boxes, c->nmine + 1, &nb, c->size, &count));
  for (int32_t k = 0; k < c->nmine; ++k) {
    neighbourhood_box(c, c->mine[k], c->z_prev, c->end, &nb[k][0], &nb[k][3]);
    for (int a = 0; a < 3; ++a) box[a] = fmin(box[a], nb[k][a]), box[3 + a] = fmax(box[3 + a], nb[k][3 + a]);
  }
  PetscCallMPI(MPI_Allgather(box, 6, MPI_DOUBLE, boxes, 6, MPI_DOUBLE, c->comm));
  for (int q = 0; q < c->size; ++q) {
    count[q] = 0;
    if (q == c->rank) continue;
    for (int32_t k = 0; k < c->nmine; ++k) count[q] += boxes_within(nb[k], &nb[k][3], &boxes[6 * q], &boxes[6 * q + 3], r);
    n += count[q];
  }
  PetscCall(PetscMalloc1(n + 1, &idx));
  n = 0;
  for (int q = 0; q < c->size; ++q) {
    if (q == c->rank) continue;
    for (int32_t k = 0; k < c->nmine; ++k)
      if (boxes_within(nb[k], &nb[k][3], &boxes[6 * q], &boxes[6 * q + 3], r)) idx[n++] = c->mine[k];
  }
  PetscCall(pbng_halo_destroy(&c->halo)); /* the last projection's */
  PetscCall(pbng_halo_create_from_one_side(c->comm, 1, count, idx, &c->halo));
  PetscCall(PetscFree3(boxes, nb, count));
  PetscFunctionReturn(0);
}

static void activate(pbng_pd_contact *c, int32_t v)
{
  if (!c->active[v]) c->active[v] = 1, c->active_list[c->nactive++] = v;
}

/* The active vertices (owned, ghosts, halo) and the primitives all of whose vertices are active, in
 * increasing global order (so local order comparisons are global ones). */
static PetscErrorCode build_active_primitives(pbng_pd_contact *c)
{
  int32_t *ids, n = 0, cap = 0;

  PetscFunctionBeginUser;
  for (int32_t k = 0; k < c->nactive; ++k) c->active[c->active_list[k]] = 0;
  c->nactive = 0;
  for (int32_t k = 0; k < c->nmine; ++k) activate(c, c->mine[k]);
  for (int32_t k = 0; k < c->ghosts.recv_start[c->ghosts.nneighbors]; ++k) activate(c, c->ghosts.recv_node[k]);
  for (int32_t k = 0; k < c->halo.recv_start[c->halo.nneighbors]; ++k) activate(c, c->halo.recv_node[k]);
  qsort(c->active_list, (size_t)c->nactive, sizeof(int32_t), compare_i32);
  for (int32_t k = 0; k < c->nactive; ++k) cap += c->vt_start[c->active_list[k] + 1] - c->vt_start[c->active_list[k]] + c->nbr_start[c->active_list[k] + 1] - c->nbr_start[c->active_list[k]];
  PetscCall(PetscMalloc1(cap + 1, &ids));
  for (int32_t k = 0; k < c->nactive; ++k) { /* a triangle from its smallest corner */
    const int32_t v = c->active_list[k];
    for (int32_t j = c->vt_start[v]; j < c->vt_start[v + 1]; ++j) {
      const int32_t *t = c->tri[c->vt[j]];
      if (v == PetscMin(t[0], PetscMin(t[1], t[2])) && c->active[t[0]] && c->active[t[1]] && c->active[t[2]]) ids[n++] = c->vt[j];
    }
  }
  qsort(ids, (size_t)n, sizeof(int32_t), compare_i32);
  PetscCall(PetscFree(c->ltri));
  PetscCall(PetscMalloc1(n + 1, &c->ltri));
  for (int32_t k = 0; k < n; ++k) memcpy(c->ltri[k], c->tri[ids[k]], sizeof(c->ltri[k]));
  c->nltri = n, n = 0;
  for (int32_t k = 0; k < c->nactive; ++k) { /* an edge from its first end */
    const int32_t v = c->active_list[k];
    for (int32_t j = c->nbr_start[v]; j < c->nbr_start[v + 1]; ++j)
      if (v < c->nbr[j] && c->active[c->nbr[j]]) ids[n++] = c->nbr_edge[j];
  }
  qsort(ids, (size_t)n, sizeof(int32_t), compare_i32);
  PetscCall(PetscFree(c->ledge));
  PetscCall(PetscMalloc1(n + 1, &c->ledge));
  for (int32_t k = 0; k < n; ++k) memcpy(c->ledge[k], c->edge[ids[k]], sizeof(c->ledge[k]));
  c->nledge = n;
  PetscCall(PetscFree(ids));
  PetscFunctionReturn(0);
}

/* Each active vertex's move |end - z_prev| along the stage's segment. */
static void segment_lengths(pbng_pd_contact *c)
{
  for (int32_t k = 0; k < c->nactive; ++k) {
    const int32_t v = c->active_list[k];
    double d[3];
    vec3_sub(&c->end[3 * (int64_t)v], &c->z_prev[3 * (int64_t)v], d);
    c->seg[v] = vec3_norm(d);
  }
}

/* The list's distances at z_prev (list_d0) no longer hold: z_prev or the list has changed. */
static void forget_list_distances(pbng_pd_contact *c) { c->list_d0_known = 0; }

/* The positions y and z_prev (and z when with_z: mid-projection) of every vertex this rank's pairs within r can involve
 * (the halo plan of r around the stage's segments: build_halo_plan), the active primitives, and each active vertex's
 * move along its segment. Collective. */
static PetscErrorCode share_reach(pbng_pd_contact *c, double r, int with_z)
{
  PetscFunctionBeginUser;
  forget_list_distances(c);
  PetscCall(build_halo_plan(c, r));
  PetscCall(pbng_halo_exchange(&c->halo, 0, c->y));
  PetscCall(pbng_halo_exchange(&c->halo, 0, c->z_prev));
  if (with_z) PetscCall(pbng_halo_exchange(&c->halo, 0, c->z));
  PetscCall(build_active_primitives(c));
  segment_lengths(c);
  PetscFunctionReturn(0);
}

/* y <- the owned positions of x (x NULL: y <- z_prev), and y and z_prev of the ghosts; the first stage's segments end at
 * y. Collective. */
static PetscErrorCode load_positions(pbng_pd_contact *c, const double *x)
{
  PetscFunctionBeginUser;
  forget_list_distances(c);
  c->end = c->y;
  for (int32_t k = 0; k < c->nmine; ++k) {
    const int32_t v = c->mine[k];
    memcpy(&c->y[3 * (int64_t)v], x ? &x[3 * (int64_t)c->local[v]] : &c->z_prev[3 * (int64_t)v], 3 * sizeof(double));
  }
  PetscCall(pbng_halo_exchange(&c->ghosts, 0, c->y));
  PetscCall(pbng_halo_exchange(&c->ghosts, 0, c->z_prev));
  PetscFunctionReturn(0);
}

static void start_at_y(pbng_pd_contact *c)
{
  for (int32_t k = 0; k < c->nactive; ++k) memcpy(&c->z[3 * (int64_t)c->active_list[k]], &c->y[3 * (int64_t)c->active_list[k]], 3 * sizeof(double));
}

/* A projection's start afresh: y <- the owned positions of x (x NULL: y <- z_prev), then the positions y and z_prev of
 * every vertex this rank's pairs within r can involve (ghosts first: their neighbourhoods make the halo), the active
 * primitives, and z <- y. Collective. */
static PetscErrorCode begin_projection(pbng_pd_contact *c, const double *x, double r)
{
  PetscFunctionBeginUser;
  PetscCall(load_positions(c, x));
  c->list_valid = 0; /* its halo plan is replaced */
  c->stage_paths = -1, c->drift = 0;
  PetscCall(share_reach(c, r, 0));
  start_at_y(c);
  PetscFunctionReturn(0);
}

/* ---- broad phase (contact/box_hash.h) ------------------------------------------------------------------ */

/* The box of the vertices v[0..n) of a primitive at za and zb, grown by r. */
static void swept_box(const int32_t *v, int n, const double *za, const double *zb, double r, double lo[3], double hi[3])
{
  for (int a = 0; a < 3; ++a) lo[a] = INFINITY, hi[a] = -INFINITY;
  for (int k = 0; k < n; ++k)
    for (int a = 0; a < 3; ++a) {
      const double p = za[3 * (int64_t)v[k] + a], q = zb[3 * (int64_t)v[k] + a];
      const double l = (p < q ? p : q) - r, h = (p > q ? p : q) + r; /* (comparisons, not fmin / fmax: calls without -ffinite-math-only) */
      lo[a] = l < lo[a] ? l : lo[a], hi[a] = h > hi[a] ? h : hi[a];
    }
}

/* A box of more than this many cells is a candidate of every query (the caller's fallback), and a query's box of more
 * than this many cells takes every item as a candidate. */
#define PD_HASH_MAX_CELLS 4096

static PetscErrorCode add_pair(pbng_pd_contact *c, int kind, const int32_t *v, double d)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_grow(&c->pairs, sizeof(*c->pairs), c->npairs + 1, &c->cap));
  c->pairs[c->npairs].kind = kind;
  c->pairs[c->npairs].d = d;
  memcpy(c->pairs[c->npairs].v, v, sizeof(int32_t) * 4);
  ++c->npairs;
  PetscFunctionReturn(0);
}

/* The broad phase (contact/box_hash.h) over the items: primitives `prims` of n vertices each, their boxes swept from za
 * to zb and grown by r (box[count], kept for the overlap test), cells of edge c->cell. */
static PetscErrorCode hash_primitives(const pbng_pd_contact *c, const int32_t *prims, int n, int32_t count, const double *za, const double *zb, double r,
                                      pbng_box_hash *g, double (**box)[6])
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(count + 1, box));
  for (int32_t p = 0; p < count; ++p) swept_box(&prims[n * (int64_t)p], n, za, zb, r, &(*box)[p][0], &(*box)[p][3]);
  PetscCall(pbng_box_hash_create(count, (const double(*)[6]) * box, c->cell, PD_HASH_MAX_CELLS, g));
  PetscFunctionReturn(0);
}

static double pair_geometry(const pbng_pd_contact *c, const pair *p, const double *z, double w[4], double dir[3]);

/* Whether the pair's primitives are closer than r at rest: decided by the distance of their first vertices
 * where it can be (the primitives' distance is at most that, and at least that less their diameters, each at
 * most the longest rest edge), else computed. quick: only the first vertices' test (0 when undecided). */
static int rest_distance_below(const pbng_pd_contact *c, const pair *p, double r, int quick)
{
  const int nq = p->kind == PAIR_VT ? 1 : 2;
  double d[3], w[4], dir[3];
  vec3_sub(&c->rest[3 * (int64_t)p->v[0]], &c->rest[3 * (int64_t)p->v[nq]], d);
  const double dv2 = vec3_dot(d, d);
  if (dv2 < r * r) return 1;
  if (quick || sqrt(dv2) - (nq == 1 ? 1 : 2) * c->longest_edge >= r) return 0;
  return pair_geometry(c, p, c->rest, w, dir) < r;
}

/* The most the pair's two primitives can close in this stage of the projection: the largest move along its segment
 * z_prev -> end (clamps and reverts stay on it) of each side's vertices, added (VT, EE pairs). */
static double side_moves(const pbng_pd_contact *c, const pair *p)
{
  const int nq = p->kind == PAIR_VT ? 1 : 2;
  double ma = 0, mb = 0;
  for (int k = 0; k < 4; ++k) { /* (comparisons, not fmax: a call per use without -ffinite-math-only) */
    const double s = c->seg[p->v[k]];
    if (k < nq) ma = s > ma ? s : ma;
    else mb = s > mb ? s : mb;
  }
  return ma + mb;
}

/* Moves beyond which ACCD may stop early on a pair whose gap stays above dhat (it stops where the gap falls below
 * (1 - s) of its first one): s / (1 - s) dhat. */
static double early_stop_moves(const pbng_pd_contact *c) { return PBNG_ACCD_CONSERVATIVE / (1 - PBNG_ACCD_CONSERVATIVE) * c->opt.dhat; }

/* Whether the pair at distance d0 at z_prev can come within the barrier's reach xi + dhat in this projection (Eq. 3,
 * 51: f(d) >= d, so a pair acts, and is clamped or sent back, only at d < xi + dhat): d0 less the most each of its
 * primitives can move (the distance is 1-Lipschitz in the largest move of each primitive's vertices, the closest
 * points being convex combinations of them). A pair that cannot also never stops ACCD early (its gap stays above
 * (1 - s) of its first one) unless it moves more than s / (1 - s) dhat: such pairs are kept. */
static int may_act(const pbng_pd_contact *c, const pair *p, double d0)
{
  const double m = side_moves(c, p);
  return d0 - m < c->xi + c->opt.dhat || m > early_stop_moves(c);
}

/* The index g ngroups + h of a VT or EE pair's groups (its first vertex's and its second primitive's). */
static int32_t group_pair(const pbng_pd_contact *c, const pair *p)
{
  return c->group[p->v[0]] * c->ngroups + c->group[p->v[p->kind == PAIR_VT ? 1 : 2]];
}

/* The rest exclusion of a candidate (decided at rest, the same every projection): primitives of one body closer
 * than the rest exclusion at rest, or sharing a vertex or a mesh edge (a one-ring apart; those are of one body,
 * and closer than the longest edge: covered by the distance test when the exclusion is larger). Cheapest tests
 * first: the first vertices' rest distance, which leaves out most of them. */
static int rest_excluded(const pbng_pd_contact *c, const pair *p, const int32_t *qv, int nq, const int32_t *iv, int ni, int final)
{
  if (c->body[qv[0]] != c->body[iv[0]]) return 0;
  if (!final) return rest_distance_below(c, p, c->rest_exclusion, 1);
  return rest_distance_below(c, p, c->rest_exclusion, 0) || (c->rest_exclusion <= c->longest_edge && excluded(c, qv, nq, iv, ni));
}

/* Whether the axis-aligned boxes of the pair's two primitives at z are farther apart than r, with room for the round-off of
 * the distances: then so are the primitives (the box gap is at most their distance), and no closest points need be computed
 * to know it (VT and EE pairs; an obstacle pair: 0). Comparisons only: it costs a fraction of pair_geometry. Never with
 * -pd_contact_fresh_pairs (the tests' reference computes every distance). */
static int boxes_beyond(const pbng_pd_contact *c, const pair *p, const double *z, double r)
{
  if (p->kind == PAIR_VO || c->opt.fresh_pairs) return 0;
  const int nq = p->kind == PAIR_VT ? 1 : 2;
  const double *P[4];
  double g2 = 0;
  for (int k = 0; k < 4; ++k) P[k] = &z[3 * (int64_t)p->v[k]];
  for (int a = 0; a < 3; ++a) {
    double lo = P[0][a], hi = lo, lo2 = P[nq][a], hi2 = lo2;
    for (int k = 1; k < nq; ++k) lo = P[k][a] < lo ? P[k][a] : lo, hi = P[k][a] > hi ? P[k][a] : hi;
    for (int k = nq + 1; k < 4; ++k) lo2 = P[k][a] < lo2 ? P[k][a] : lo2, hi2 = P[k][a] > hi2 ? P[k][a] : hi2;
    const double g = lo2 - hi > lo - hi2 ? lo2 - hi : lo - hi2;
    if (g > 0) g2 += g * g;
  }
  const double rr = (1 + 1e-9) * r;
  return g2 > rr * rr;
}

/* The gap between the query's box qbox and the item's box grown by r (both swept from z_prev to y, so containing the
 * primitives at z_prev): at most the primitives' distance at z_prev. */
static double box_gap(const double qbox[6], const double ibox[6], double r)
{
  double g2 = 0;
  for (int k = 0; k < 3; ++k) {
    const double a = qbox[k] - (ibox[3 + k] - r), b = (ibox[k] + r) - qbox[3 + k], g = a > b ? a : b;
    if (g > 0) g2 += g * g;
  }
  return sqrt(g2);
}

/* The rank that does a pair's work (pair_here): one of its vertices' owners, chosen by a hash of the pair's key (its kind
 * and compact vertex ids, the same on every rank), so that the pairs across two ranks' vertices are split between them. */
static int pair_rank(const pbng_pd_contact *c, const pair *p)
{
  if (c->size == 1) return 0;
  const int n = p->kind == PAIR_VO ? 1 : 4;
  int owners[4], nown = 0;
  uint64_t h = (uint64_t)p->kind + 1;
  for (int k = 0; k < n; ++k) {
    const int r = c->owner[p->v[k]];
    int seen = 0;
    for (int j = 0; j < nown; ++j) seen |= owners[j] == r;
    if (!seen) owners[nown++] = r;
    h = (h ^ (uint64_t)(uint32_t)p->v[k]) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  if (nown == 1) return owners[0];
  for (int i = 1; i < nown; ++i) /* the owners in increasing order: the choice does not depend on the vertices' order */
    for (int j = i; j > 0 && owners[j - 1] > owners[j]; --j) {
      const int t = owners[j];
      owners[j] = owners[j - 1], owners[j - 1] = t;
    }
  return owners[(h >> 17) % (uint64_t)nown];
}

static int pair_here(const pbng_pd_contact *c, const pair *p) { return pair_rank(c, p) == c->rank; }

/* Query q (vertices qv) against item p (vertices iv): a pair unless seen for q already, ordered away (same-kind
 * lists keep p > q), another rank's (pair_rank: one owner of its vertices does a pair's work), left out by the rest
 * exclusion (rest_excluded), or unable to come within the barrier's reach in this projection (may_act; making the
 * candidate list: within its width). */
static PetscErrorCode consider(pbng_pd_contact *c, int kind, int32_t q, const int32_t *qv, int nq, int32_t p, const int32_t *iv, int ni, int32_t *stamp, int same,
                               double gap)
{
  pair cand = {.kind = kind, .v = {0, 0, 0, 0}};

  PetscFunctionBeginUser;
  if (stamp[p] == q || (same && p <= q)) PetscFunctionReturn(0);
  stamp[p] = q;
  if (c->collecting == COLLECT_CROSS && c->group[qv[0]] == c->group[iv[0]]) PetscFunctionReturn(0); /* the list keeps these */
  for (int k = 0; k < nq; ++k) cand.v[k] = qv[k];
  for (int k = 0; k < ni; ++k) cand.v[nq + k] = iv[k];
  if (!pair_here(c, &cand)) PetscFunctionReturn(0); /* another rank's pair */
  if (c->collecting && gap > (1 + 1e-12) * (c->xi + c->opt.dhat + c->width[group_pair(c, &cand)])) PetscFunctionReturn(0); /* beyond the list's width */
  if (rest_excluded(c, &cand, qv, nq, iv, ni, 0)) PetscFunctionReturn(0);
  if (c->collecting && boxes_beyond(c, &cand, c->z_prev, c->xi + c->opt.dhat + c->width[group_pair(c, &cand)])) PetscFunctionReturn(0); /* d0 beyond too */
  double w[4], dir[3];
  const double d0 = pair_geometry(c, &cand, c->z_prev, w, dir);
  const int keep = c->collecting ? d0 < c->xi + c->opt.dhat + c->width[group_pair(c, &cand)] : may_act(c, &cand, d0);
  if (!keep || rest_excluded(c, &cand, qv, nq, iv, ni, 1)) PetscFunctionReturn(0);
  PetscCall(add_pair(c, kind, cand.v, d0));
  PetscFunctionReturn(0);
}

/* The pairs of each query (nq vertices, box swept from za to zb) with the items of the hash g whose boxes grown by r overlap
 * its box, the large items, or every item when the query's box covers too many cells; `same`: queries and items are
 * one list (each pair once). */
static PetscErrorCode match(pbng_pd_contact *c, int kind, const int32_t *queries, int nq, int32_t nquery, const int32_t *items_v, int ni, int32_t nitem,
                            const pbng_box_hash *g, const double (*box)[6], double r, const double *za, const double *zb, int same)
{
  int32_t *stamp;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nitem + 1, &stamp));
  for (int32_t p = 0; p < nitem; ++p) stamp[p] = -1;
  for (int32_t q = 0; q < nquery; ++q) {
    const int32_t *qv = &queries[nq * (int64_t)q];
    double qbox[6];
    int64_t cc[6];
    swept_box(qv, nq, za, zb, 0.0, &qbox[0], &qbox[3]);
    if (pbng_box_hash_cells(g, qbox, cc) > PD_HASH_MAX_CELLS) {
      for (int32_t p = 0; p < nitem; ++p) PetscCall(consider(c, kind, q, qv, nq, p, &items_v[ni * (int64_t)p], ni, stamp, same, box_gap(qbox, box[p], r)));
      continue;
    }
    for (int32_t l = 0; l < g->nlarge; ++l)
      PetscCall(consider(c, kind, q, qv, nq, g->large[l], &items_v[ni * (int64_t)g->large[l]], ni, stamp, same, box_gap(qbox, box[g->large[l]], r)));
    for (int64_t i = cc[0]; i <= cc[1]; ++i)
      for (int64_t j = cc[2]; j <= cc[3]; ++j)
        for (int64_t k = cc[4]; k <= cc[5]; ++k) {
          const uint64_t b = pbng_box_hash_bucket(g, i, j, k);
          for (int64_t s = g->start[b]; s < g->start[b + 1]; ++s) {
            const int32_t p = g->item[s];
            if (boxes_within(&qbox[0], &qbox[3], &box[p][0], &box[p][3], 0))
              PetscCall(consider(c, kind, q, qv, nq, p, &items_v[ni * (int64_t)p], ni, stamp, same, box_gap(qbox, box[p], r)));
          }
        }
  }
  PetscCall(PetscFree(stamp));
  PetscFunctionReturn(0);
}

/* Every owned free vertex within r (plus its move from za to zb) of an obstacle: added to the pairs (pair.d: the signed
 * distance at za). */
static PetscErrorCode collect_obstacle_pairs(pbng_pd_contact *c, const double *za, const double *zb, double r)
{
  PetscFunctionBeginUser;
  for (int32_t k = 0; k < c->nmine; ++k) {
    const int32_t v = c->mine[k];
    if (!c->free[v]) continue;
    double q[3], n[3], d[3];
    vec3_sub(&zb[3 * (int64_t)v], &za[3 * (int64_t)v], d);
    for (int o = 0; o < c->opt.nobstacles; ++o) {
      const double phia = pbng_obstacle_closest(&c->opt.obstacle[o], &za[3 * (int64_t)v], q, n);
      const double phi = fmin(phia, pbng_obstacle_closest(&c->opt.obstacle[o], &zb[3 * (int64_t)v], q, n));
      if (phi < r + vec3_norm(d)) {
        const int32_t pv[4] = {v, o, 0, 0};
        PetscCall(add_pair(c, PAIR_VO, pv, phia));
      }
    }
  }
  PetscFunctionReturn(0);
}

/* Some active primitives: vertices, triangles and edges (in increasing global order). */
typedef struct {
  const int32_t *vert, (*tri)[3], (*edge)[2];
  int32_t nvert, ntri, nedge;
} primitives;

/* This rank's pairs (pair_rank) of the primitives whose swept boxes (from za to zb) come within r of each other, and
 * every owned free vertex within r (plus its move) of an obstacle; sorted (compare_pair). */
static PetscErrorCode collect_pairs_of(pbng_pd_contact *c, const primitives *pr, const double *za, const double *zb, double r)
{
  pbng_box_hash g;
  double(*box)[6];

  PetscFunctionBeginUser;
  c->npairs = 0;
  PetscCall(hash_primitives(c, &pr->tri[0][0], 3, pr->ntri, za, zb, r, &g, &box));
  PetscCall(match(c, PAIR_VT, pr->vert, 1, pr->nvert, &pr->tri[0][0], 3, pr->ntri, &g, (const double(*)[6])box, r, za, zb, 0));
  PetscCall(pbng_box_hash_destroy(&g));
  PetscCall(PetscFree(box));
  PetscCall(hash_primitives(c, &pr->edge[0][0], 2, pr->nedge, za, zb, r, &g, &box));
  PetscCall(match(c, PAIR_EE, &pr->edge[0][0], 2, pr->nedge, &pr->edge[0][0], 2, pr->nedge, &g, (const double(*)[6])box, r, za, zb, 1));
  PetscCall(pbng_box_hash_destroy(&g));
  PetscCall(PetscFree(box));
  if (!c->collecting) PetscCall(collect_obstacle_pairs(c, za, zb, r)); /* the list holds no obstacle pairs */
  if (c->npairs > 1) qsort(c->pairs, (size_t)c->npairs, sizeof(pair), compare_pair); /* (pairs is NULL while none was added) */
  PetscFunctionReturn(0);
}

/* collect_pairs_of over every active primitive. */
static PetscErrorCode collect_pairs(pbng_pd_contact *c, const double *za, const double *zb, double r)
{
  const primitives all = {.vert = c->active_list, .tri = (const int32_t(*)[3])c->ltri, .edge = (const int32_t(*)[2])c->ledge, .nvert = c->nactive, .ntri = c->nltri, .nedge = c->nledge};
  return collect_pairs_of(c, &all, za, zb, r);
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

static double common_moves(const pbng_pd_contact *c, const pair *p);
static double common_moves_to(const pbng_pd_contact *c, const pair *p, const double *end);

/* The most the stage pair can close on the stage's paths: common_moves on COMMON paths, else side_moves (its vertices
 * anywhere on their segments); an obstacle pair's: its vertex's move. */
static double stage_moves(const pbng_pd_contact *c, const pair *p)
{
  if (p->kind == PAIR_VO) return c->seg[p->v[0]];
  return c->stage_paths == PATHS_COMMON ? common_moves(c, p) : side_moves(c, p);
}

/* Whether the stage pair stays farther apart than r wherever its vertices are in this stage: its distance at z_prev less
 * stage_moves (the distance is 1-Lipschitz in each primitive's largest move; an obstacle's signed distance in the vertex's),
 * with room for the round-off of the distances and of the bound; no distance of it need be computed to know that. */
static int stays_beyond(const pbng_pd_contact *c, const pair *p, double r) { return p->d - stage_moves(c, p) > (1 + 1e-9) * r; }

/* Whether the stage pair's time of impact is 1 without ACCD: it stays beyond the barrier's reach and moves too little to
 * stop ACCD early (may_act's argument). */
static int no_impact(const pbng_pd_contact *c, const pair *p)
{
  return p->kind != PAIR_VO && stays_beyond(c, p, c->xi + c->opt.dhat) && stage_moves(c, p) <= early_stop_moves(c);
}

/* Whether the stage pair's time of impact from z_prev to z (ACCD's common-time paths, pair_toi) is 1 without ACCD: no_impact's
 * argument with the pair's moves on those paths (common_moves_to z), which on the SEGMENTS are far below side_moves for a
 * body that moves nearly rigidly (its own pairs). pair.d is the distance at z_prev. Never with -pd_contact_fresh_pairs. */
static int no_impact_to_z(const pbng_pd_contact *c, const pair *p)
{
  if (p->kind == PAIR_VO || c->opt.fresh_pairs) return 0;
  const double m = common_moves_to(c, p, c->z);
  return p->d - m > (1 + 1e-9) * (c->xi + c->opt.dhat) && m <= early_stop_moves(c);
}

/* A vertex's contributions of the pairs (pair order: the sums of Eq. 49 and of the barrier are added in the pairs' global
 * order on any number of ranks): the pair, the vertex and up to 7 values. */
typedef struct {
  pair p;
  int32_t v, unused;
  double val[7];
} contrib;

typedef struct {
  contrib *e;
  int64_t n, cap;
  void (*apply)(void *ctx, const contrib *e); /* [0] only: how a value is added */
  void *ctx;
  int direct;             /* [0] only, with no halo neighbours: the values added at once (pair order) */
} contrib_list;

/* The lists of one sum: [0] this rank's owned vertices, [1 + n] the halo's neighbour n's; apply(ctx, e) adds one. */
static PetscErrorCode contrib_lists_create(const pbng_pd_contact *c, void (*apply)(void *ctx, const contrib *e), void *ctx, contrib_list **out)
{
  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(c->halo.nneighbors + 1, out));
  (*out)[0].apply = apply, (*out)[0].ctx = ctx, (*out)[0].direct = !c->halo.nneighbors;
  PetscFunctionReturn(0);
}

static PetscErrorCode contrib_lists_destroy(const pbng_pd_contact *c, contrib_list **l)
{
  PetscFunctionBeginUser;
  for (int n = 0; n <= c->halo.nneighbors; ++n) PetscCall(PetscFree((*l)[n].e));
  PetscCall(PetscFree(*l));
  PetscFunctionReturn(0);
}

/* Vertex v's values of pair p, to the list of its owner. */
static PetscErrorCode contrib_add(const pbng_pd_contact *c, contrib_list *l, const pair *p, int32_t v, const double *val, int nval)
{
  int to = 0;

  PetscFunctionBeginUser;
  if (!c->owned[v]) {
    for (int n = 0; n < c->halo.nneighbors && !to; ++n)
      if (c->halo.neighbor[n] == c->owner[v]) to = 1 + n;
    PetscCheck(to > 0, c->comm, PETSC_ERR_PLIB, "pd contact: vertex %d's owner %d is not a halo neighbour", (int)v, c->owner[v]);
  }
  contrib_list *t = &l[to];
  if (t->direct) {
    contrib e = {.p = *p, .v = v};
    for (int k = 0; k < nval; ++k) e.val[k] = val[k];
    t->apply(t->ctx, &e);
    PetscFunctionReturn(0);
  }
  if (t->n == t->cap) {
    contrib *e;
    t->cap = t->cap ? 2 * t->cap : 1024;
    PetscCall(PetscCalloc1(t->cap, &e));
    if (t->n) memcpy(e, t->e, (size_t)t->n * sizeof(*e));
    PetscCall(PetscFree(t->e));
    t->e = e;
  }
  contrib *e = &t->e[t->n++];
  e->p = *p, e->v = v;
  for (int k = 0; k < nval; ++k) e->val[k] = val[k];
  PetscFunctionReturn(0);
}

static int compare_contrib(const contrib *a, const contrib *b)
{
  const int o = compare_pair(&a->p, &b->p);
  return o ? o : (a->v > b->v) - (a->v < b->v);
}

/* The lists sent to the owners, and every owned vertex's contributions handed to apply in the pairs' global order (a merge
 * of this rank's list and the neighbours', each in pair order). Collective. */
static PetscErrorCode contrib_sum(pbng_pd_contact *c, contrib_list *l)
{
  void (*apply)(void *, const contrib *) = l[0].apply;
  void *ctx = l[0].ctx;
  const int N = c->halo.nneighbors, tag = 7301;
  int64_t *nsend, *nrecv;
  MPI_Request *req;
  contrib_list *in;
  int64_t *cur;

  PetscFunctionBeginUser;
  if (l[0].direct) PetscFunctionReturn(0); /* no neighbours: added already */
  PetscCall(PetscMalloc5(N + 1, &nsend, N + 1, &nrecv, 2 * N + 1, &req, N + 2, &in, N + 2, &cur));
  for (int n = 0; n < N; ++n) nsend[n] = l[1 + n].n;
  for (int n = 0; n < N; ++n) PetscCallMPI(MPI_Irecv(&nrecv[n], 1, MPI_INT64_T, c->halo.neighbor[n], tag, c->comm, &req[n]));
  for (int n = 0; n < N; ++n) PetscCallMPI(MPI_Isend(&nsend[n], 1, MPI_INT64_T, c->halo.neighbor[n], tag, c->comm, &req[N + n]));
  PetscCallMPI(MPI_Waitall(2 * N, req, MPI_STATUSES_IGNORE));
  in[0] = l[0];
  MPI_Datatype item; /* one contribution: counts in contributions, not bytes */
  PetscCallMPI(MPI_Type_contiguous((int)sizeof(contrib), MPI_BYTE, &item));
  PetscCallMPI(MPI_Type_commit(&item));
  for (int n = 0; n < N; ++n) {
    PetscCheck(nrecv[n] <= INT_MAX && nsend[n] <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "pd contact: more than %d pair contributions between two ranks (use more ranks)", INT_MAX);
    in[1 + n].n = nrecv[n], in[1 + n].cap = nrecv[n];
    PetscCall(PetscMalloc1(nrecv[n] + 1, &in[1 + n].e));
    req[n] = req[N + n] = MPI_REQUEST_NULL;
    if (nrecv[n]) PetscCallMPI(MPI_Irecv(in[1 + n].e, (int)nrecv[n], item, c->halo.neighbor[n], tag + 1, c->comm, &req[n]));
    if (nsend[n]) PetscCallMPI(MPI_Isend(l[1 + n].e, (int)nsend[n], item, c->halo.neighbor[n], tag + 1, c->comm, &req[N + n]));
  }
  PetscCallMPI(MPI_Waitall(2 * N, req, MPI_STATUSES_IGNORE));
  PetscCallMPI(MPI_Type_free(&item));
  for (int n = 0; n <= N; ++n) cur[n] = 0;
  for (;;) {
    int best = -1;
    for (int n = 0; n <= N; ++n)
      if (cur[n] < in[n].n && (best < 0 || compare_contrib(&in[n].e[cur[n]], &in[best].e[cur[best]]) < 0)) best = n;
    if (best < 0) break;
    apply(ctx, &in[best].e[cur[best]++]);
  }
  for (int n = 0; n < N; ++n) PetscCall(PetscFree(in[1 + n].e));
  PetscCall(PetscFree5(nsend, nrecv, req, in, cur));
  PetscFunctionReturn(0);
}

/* v[3 u] of every active vertex u (any value on the others) to the owners, reduced there by op (min or max): each owned
 * vertex's v[3 u] becomes the reduction over its own and every copy's. Collective. */
static PetscErrorCode reduce_to_owners(pbng_pd_contact *c, pbng_halo_reverse_mode op, double *v)
{
  for (int32_t k = 0; k < c->nactive; ++k) v[3 * (int64_t)c->active_list[k] + 1] = v[3 * (int64_t)c->active_list[k] + 2] = v[3 * (int64_t)c->active_list[k]];
  return pbng_halo_reverse(&c->halo, op, NULL, v);
}

/* The owned vertices' z sent to the ranks that hold them (the halo's plan covers the ghosts). Collective. */
static PetscErrorCode share_z(pbng_pd_contact *c) { return pbng_halo_exchange(&c->halo, 0, c->z); }

/* Alg. 2 lines 4-17 with the check of the header's step 2: every owned free vertex moved back along its move to
 * its time of impact, then any pair closer than xi sends its owned vertices to z_prev, all such pairs of the
 * current positions at once (a Jacobi pass: the same on any number of ranks), until none is; clear: every time of impact
 * is known to be 1 (no_clamp), none computed again; *none_reverted: no vertex was sent back. Pairs that stay beyond xi
 * (stays_beyond) are not computed, nor the times of impact of no_impact pairs on the SEGMENTS (on COMMON paths the bound
 * holds at z = end only: no_clamp has found them there, and the first revert pass is there). Collective. */
static PetscErrorCode clamp_pass(pbng_pd_contact *c, pbng_pd_contact_stats *st, int clear, int *none_reverted)
{
  double *t3 = c->work; /* [nv][3] a vertex's value in its first entry (reduce_to_owners) */

  PetscFunctionBeginUser;
  for (int32_t k = 0; k < c->nactive; ++k) t3[3 * (int64_t)c->active_list[k]] = 1;
  for (int64_t k = 0; k < c->npairs && !clear; ++k) {
    const pair *p = &c->pairs[k];
    if (!pair_moves(c, p) || (c->stage_paths != PATHS_COMMON && (no_impact(c, p) || no_impact_to_z(c, p)))) continue;
    const double t = pair_toi(c, p);
    for (int s = 0; s < pair_vertices(p); ++s) t3[3 * (int64_t)p->v[s]] = fmin(t3[3 * (int64_t)p->v[s]], t);
  }
  PetscCall(reduce_to_owners(c, PBNG_HALO_MIN, t3)); /* each pair's time on one rank: the owners take the least */
  for (int32_t k = 0; k < c->nmine; ++k) c->tmin[c->mine[k]] = t3[3 * (int64_t)c->mine[k]];
  for (int32_t k = 0; k < c->nmine; ++k) {
    const int32_t v = c->mine[k];
    if (!c->free[v] || !(c->tmin[v] < 1)) continue;
    for (int a = 0; a < 3; ++a) c->z[3 * (int64_t)v + a] = c->z_prev[3 * (int64_t)v + a] + c->tmin[v] * (c->z[3 * (int64_t)v + a] - c->z_prev[3 * (int64_t)v + a]);
    ++st->clamped;
  }
  PetscCall(share_z(c));
  for (int pass = 0; pass <= c->nv; ++pass) {
    int reverted = 0, any;
    for (int32_t k = 0; k < c->nactive; ++k) t3[3 * (int64_t)c->active_list[k]] = 0; /* here: 1 marks a vertex to send back */
    for (int64_t k = 0; k < c->npairs; ++k) {
      const pair *p = &c->pairs[k];
      double w[4], dir[3];
      if (!pair_moves(c, p) || boxes_beyond(c, p, c->z, c->xi) || ((pass == 0 || c->stage_paths != PATHS_COMMON) && stays_beyond(c, p, c->xi)) ||
          pair_geometry(c, p, c->z, w, dir) > c->xi)
        continue;
      for (int s = 0; s < pair_vertices(p); ++s) t3[3 * (int64_t)p->v[s]] = 1;
    }
    PetscCall(reduce_to_owners(c, PBNG_HALO_MAX, t3));
    for (int32_t k = 0; k < c->nmine; ++k) c->tmin[c->mine[k]] = t3[3 * (int64_t)c->mine[k]];
    for (int32_t k = 0; k < c->nmine; ++k) {
      const int32_t v = c->mine[k];
      if (!(c->tmin[v] > 0) || !c->free[v] || !memcmp(&c->z[3 * (int64_t)v], &c->z_prev[3 * (int64_t)v], 3 * sizeof(double))) continue;
      memcpy(&c->z[3 * (int64_t)v], &c->z_prev[3 * (int64_t)v], 3 * sizeof(double));
      ++st->reverted, reverted = 1;
    }
    PetscCallMPI(MPI_Allreduce(&reverted, &any, 1, MPI_INT, MPI_LOR, c->comm));
    if (pass == 0) *none_reverted = !any;
    if (!any) break;
    PetscCall(share_z(c));
  }
  PetscFunctionReturn(0);
}

/* A pair's part of Eq. 49's sum at an owned vertex (g: c->work) and of its weights' sum (c->tmin, Eq. 53's alpha0). */
static void add_step_contrib(void *ctx, const contrib *e)
{
  pbng_pd_contact *c = ctx;
  for (int a = 0; a < 3; ++a) c->work[3 * (int64_t)e->v + a] += e->val[a];
  c->tmin[e->v] += e->val[3];
}

/* One gradient step of Eq. 49 with the step bound of Eq. 53; returns the largest vertex move (over the ranks).
 * Collective. */
static PetscErrorCode gradient_step(pbng_pd_contact *c, pbng_pd_contact_stats *st, double *move)
{
  const pbng_pd_contact_options *o = &c->opt;
  double *g = c->work, *asum = c->tmin, mine[2] = {0, 0}, all[2]; /* alpha0, the largest |y - z| */
  int64_t counted = 0;

  PetscFunctionBeginUser;
  for (int32_t k = 0; k < c->nmine; ++k) {
    const int32_t v = c->mine[k];
    asum[v] = 0;
    for (int a = 0; a < 3; ++a) g[3 * (int64_t)v + a] = c->free[v] ? c->y[3 * (int64_t)v + a] - c->z[3 * (int64_t)v + a] : 0.0;
    mine[1] = fmax(mine[1], vec3_norm(&g[3 * (int64_t)v]));
  }
  contrib_list *l;
  PetscCall(contrib_lists_create(c, add_step_contrib, c, &l));
  for (int64_t k = 0; k < c->npairs; ++k) {
    const pair *p = &c->pairs[k];
    double w[4], dir[3];
    if (boxes_beyond(c, p, c->z, c->xi + o->dhat) || stays_beyond(c, p, c->xi + o->dhat)) continue; /* f(d) >= d (Eq. 51): its rescaled gap is beyond dhat */
    const double d = pair_geometry(c, p, c->z, w, dir), x = pbng_contact_distance_rescale(d, c->xi, o->eps) - c->xi;
    if (x >= o->dhat || !pair_moves(c, p)) continue;
    const double push = -pbng_barrier_derivative(x, o->dhat); /* the bracket of Eq. 49, > 0 */
    ++counted;
    for (int s = 0; s < pair_vertices(p); ++s) {
      const int32_t v = p->v[s];
      double val[4];
      if (!c->free[v]) continue;
      for (int a = 0; a < 3; ++a) val[a] = o->mu * push * w[s] * dir[a];
      val[3] = fabs(w[s]);
      PetscCall(contrib_add(c, l, p, v, val, 4));
    }
  }
  PetscCall(contrib_sum(c, l));
  PetscCall(contrib_lists_destroy(c, &l));
  for (int32_t k = 0; k < c->nmine; ++k) mine[0] = fmax(mine[0], asum[c->mine[k]]);
  PetscCallMPI(MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, c->comm));
  PetscCallMPI(MPI_Allreduce(&counted, &st->pairs, 1, MPI_INT64_T, MPI_SUM, c->comm));
  double lambda = pbng_contact_step_bound(o->eps, c->xi, o->mu, all[0], pbng_barrier_derivative_bound(c->xi, o->eps, o->dhat), all[1]);
  if (!(st->pairs > 0 && isfinite(lambda))) lambda = 0; /* no pair within reach: z stays where the clamp left it */
  double moved = 0;
  for (int32_t k = 0; k < c->nmine; ++k) {
    const int32_t v = c->mine[k];
    if (!c->free[v]) continue;
    for (int a = 0; a < 3; ++a) c->z[3 * (int64_t)v + a] += lambda * g[3 * (int64_t)v + a];
    moved = fmax(moved, lambda * vec3_norm(&g[3 * (int64_t)v]));
  }
  PetscCallMPI(MPI_Allreduce(&moved, move, 1, MPI_DOUBLE, MPI_MAX, c->comm));
  PetscCall(share_z(c));
  ++st->steps;
  PetscFunctionReturn(0);
}

/* The smallest distance at z over this rank's pairs within the barrier's reach xi + dhat (inf: none; every such
 * pair is among the projection's), and the pair (the first of that distance). z is on the stage's paths: a pair that
 * stays beyond the smallest distance so far (stays_beyond) has no distance computed. */
static void min_distance(const pbng_pd_contact *c, const double *z, double *dmin, const pair **worst)
{
  *dmin = INFINITY;
  *worst = NULL;
  for (int64_t k = 0; k < c->npairs; ++k) {
    double w[4], dir[3];
    const double r = fmin(*dmin, c->xi + c->opt.dhat);
    if (boxes_beyond(c, &c->pairs[k], z, r) || stays_beyond(c, &c->pairs[k], r)) continue;
    const double d = pair_geometry(c, &c->pairs[k], z, w, dir);
    if (d < *dmin && d < c->xi + c->opt.dhat) *dmin = d, *worst = &c->pairs[k];
  }
}

/* This rank's pairs (each pair on one rank: pair_rank) with a free vertex whose rescaled gap at z is below dhat (Eq. 51): those
 * the barrier acts on. */
static int64_t pairs_within_reach(const pbng_pd_contact *c, const double *z)
{
  int64_t n = 0;
  for (int64_t k = 0; k < c->npairs; ++k) {
    const pair *p = &c->pairs[k];
    double w[4], dir[3];
    if (!pair_moves(c, p) || boxes_beyond(c, p, z, c->xi + c->opt.dhat) || stays_beyond(c, p, c->xi + c->opt.dhat)) continue;
    n += pbng_contact_distance_rescale(pair_geometry(c, p, z, w, dir), c->xi, c->opt.eps) - c->xi < c->opt.dhat;
  }
  return n;
}

/* ---- the interface ----------------------------------------------------------------------------------- */

double pbng_pd_contact_dhat(const pbng_pd_contact_options *o, double xi) { return o->dhat > 0 ? o->dhat : 4 * xi; }

double pbng_pd_contact_rest_exclusion(const pbng_pd_contact_options *o, double xi, double dhat) { return o->rest_exclusion < 0 ? xi + dhat : o->rest_exclusion; }

/* The closest pair over the ranks at z_prev (the rest state at creation) not farther apart than xi: refused,
 * naming it. Collective. */
static PetscErrorCode check_rest_state(const pbng_pd_contact *c)
{
  struct {
    double d;
    int rank;
  } mine, best;
  int64_t ids[5] = {-1, -1, -1, -1, -1}; /* kind, 4 global ids (an obstacle: its index) */
  const pair *worst;

  PetscFunctionBeginUser;
  min_distance(c, c->z_prev, &mine.d, &worst);
  mine.rank = c->rank;
  PetscCallMPI(MPI_Allreduce(&mine, &best, 1, MPI_DOUBLE_INT, MPI_MINLOC, c->comm));
  if (best.d > c->xi) PetscFunctionReturn(0);
  if (best.rank == c->rank) {
    const int n = pair_vertices(worst);
    ids[0] = worst->kind;
    for (int k = 0; k < 4; ++k) ids[1 + k] = k < n ? c->gid[worst->v[k]] : k == 1 ? worst->v[1] : -1;
  }
  PetscCallMPI(MPI_Bcast(ids, 5, MPI_INT64_T, best.rank, c->comm));
  SETERRQ(c->comm, PETSC_ERR_ARG_OUTOFRANGE,
          "-pd_contact: at rest, %s %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " are %g apart, not more than the contact thickness %g (a smaller "
          "-pd_contact_thickness, a larger -pd_contact_rest_exclusion, or bodies and obstacles farther apart)",
          ids[0] == PAIR_VT ? "vertex, triangle" : ids[0] == PAIR_EE ? "edges" : "vertex, obstacle", ids[1], ids[2], ids[3], ids[4], best.d, c->xi);
}

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
  PetscCallMPI(MPI_Comm_rank(dm->comm, &c->rank));
  PetscCallMPI(MPI_Comm_size(dm->comm, &c->size));
  PetscCall(gather_triangles(dm, &ntri, &tris));
  PetscCall(build_topology(c, ntri, tris));
  PetscCall(PetscFree(tris));
  PetscCall(build_ownership(dm, c));
  PetscCall(build_ghost_plan(dm, c));
  PetscCall(build_groups(c));
  c->rest_exclusion = pbng_pd_contact_rest_exclusion(o, xi, o->dhat);
  PetscCall(PetscMalloc5(3 * (int64_t)c->nv + 3, &c->y, 3 * (int64_t)c->nv + 3, &c->z, 3 * (int64_t)c->nv + 3, &c->z_prev, 3 * (int64_t)c->nv + 3, &c->work,
                         (int64_t)c->nv + 1, &c->tmin));
  PetscCall(PetscCalloc1(c->nv + 1, &c->active));
  PetscCall(PetscMalloc1(c->nv + 1, &c->seg));
  PetscCall(PetscMalloc1(c->nv + 1, &c->active_list));
  PetscCall(PetscMalloc1(3 * (int64_t)c->nv + 3, &c->xb));
  if (o->kappa > 0) c->opt.iterations = 0; /* the barrier is in the frame's energy: the projection only keeps the thickness */
  memcpy(c->z_prev, c->rest, sizeof(double) * 3 * (size_t)c->nv);
  double len = 0;
  for (int32_t k = 0; k < c->nedge; ++k) {
    double d[3];
    vec3_sub(&c->rest[3 * (int64_t)c->edge[k][1]], &c->rest[3 * (int64_t)c->edge[k][0]], d);
    len += vec3_norm(d) / c->nedge;
    c->longest_edge = fmax(c->longest_edge, vec3_norm(d));
  }
  c->cell = fmax(len, xi + o->dhat);
  PetscCall(begin_projection(c, NULL, xi + o->dhat));
  PetscCall(collect_pairs(c, c->z_prev, c->z_prev, xi + o->dhat));
  const PetscErrorCode refused = check_rest_state(c);
  if (refused) { /* the message is printed; free what was built */
    PetscCall(pbng_pd_contact_destroy(&c));
    PetscCall(refused);
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
  PetscCall(PetscFree((*c)->owned));
  PetscCall(PetscFree((*c)->owner));
  PetscCall(PetscFree((*c)->tri));
  PetscCall(PetscFree((*c)->edge));
  PetscCall(PetscFree((*c)->nbr_start));
  PetscCall(PetscFree((*c)->nbr));
  PetscCall(PetscFree((*c)->nbr_edge));
  PetscCall(PetscFree((*c)->vt_start));
  PetscCall(PetscFree((*c)->vt));
  PetscCall(PetscFree((*c)->body));
  PetscCall(PetscFree((*c)->rest));
  PetscCall(PetscFree((*c)->mine));
  PetscCall(pbng_halo_destroy(&(*c)->ghosts));
  PetscCall(pbng_halo_destroy(&(*c)->halo));
  PetscCall(PetscFree((*c)->active));
  PetscCall(PetscFree((*c)->seg));
  PetscCall(PetscFree((*c)->list));
  PetscCall(PetscFree((*c)->list_d0));
  PetscCall(PetscFree((*c)->group));
  for (int r = 0; r < 2; ++r) PetscCall(PetscFree4((*c)->lref[r].T, (*c)->lref[r].E, (*c)->lref[r].ref, (*c)->lref[r].stray));
  PetscCall(PetscFree((*c)->gbox));
  PetscCall(PetscFree3((*c)->width, (*c)->bound, (*c)->spread));
  PetscCall(PetscFree((*c)->active_list));
  PetscCall(PetscFree((*c)->ltri));
  PetscCall(PetscFree((*c)->ledge));
  PetscCall(PetscFree5((*c)->y, (*c)->z, (*c)->z_prev, (*c)->work, (*c)->tmin));
  PetscCall(PetscFree((*c)->pairs));
  PetscCall(PetscFree((*c)->xb));
  PetscCall(PetscFree(*c));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_pd_contact_reset(pbng_pd_contact *c, const double *x)
{
  PetscFunctionBeginUser;
  forget_list_distances(c);
  for (int32_t k = 0; k < c->nmine; ++k) memcpy(&c->z_prev[3 * (int64_t)c->mine[k]], &x[3 * (int64_t)c->local[c->mine[k]]], 3 * sizeof(double));
  PetscFunctionReturn(0);
}

/* ---- the candidate list ------------------------------------------------------------------------------- */

/* Each group's translation T_g, the middle of the box of its vertices' displacements u from each list reference's ref
 * (fresh: from z_prev, u(z_prev) = 0) at z_prev (T[0 .. ng)), at the stage's end (y, or z after a gradient step:
 * T[ng .. 2 ng)) and over both (T[2 ng .. 3 ng)), and largest stray E_g = max |u - T_g| there (exact min/max reductions:
 * the same on any number of ranks; on a segment |u - T_g| is at most its ends'); each group's box over z_prev and the end
 * (gbox: it holds every point of the vertices' segments); *seg_max: the largest move |end - z_prev|. Collective. */
static PetscErrorCode group_motion(pbng_pd_contact *c, int fresh, double *seg_max)
{
  const int32_t ng = c->ngroups;
  double *box, seg = 0;

  PetscFunctionBeginUser;
  /* per reference, end and group: min u, min -u (12 ng a reference); then per group: min z, min -z */
  PetscCall(PetscMalloc1(30 * (int64_t)ng + 1, &box));
  for (int64_t k = 0; k < 30 * (int64_t)ng; ++k) box[k] = INFINITY;
  for (int32_t k = 0; k < c->nmine; ++k)
    for (int end = 0; end < 2; ++end) {
      const int64_t v = 3 * (int64_t)c->mine[k];
      const double *z = end ? c->end : c->z_prev;
      for (int r = 0; r < 2; ++r) {
        const double *ref = fresh ? c->z_prev : c->lref[r].ref;
        double *b = &box[12 * (int64_t)r * ng + 6 * ((int64_t)end * ng + c->group[c->mine[k]])];
        for (int a = 0; a < 3; ++a) b[a] = fmin(b[a], z[v + a] - ref[v + a]), b[3 + a] = fmin(b[3 + a], ref[v + a] - z[v + a]);
      }
      double *p = &box[24 * (int64_t)ng + 6 * c->group[c->mine[k]]];
      for (int a = 0; a < 3; ++a) p[a] = fmin(p[a], z[v + a]), p[3 + a] = fmin(p[3 + a], -z[v + a]);
    }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, box, 30 * ng, MPI_DOUBLE, MPI_MIN, c->comm));
  for (int32_t g = 0; g < ng; ++g)
    for (int a = 0; a < 3; ++a) c->gbox[g][a] = box[24 * (int64_t)ng + 6 * g + a], c->gbox[g][3 + a] = -box[24 * (int64_t)ng + 6 * g + 3 + a];
  for (int r = 0; r < 2; ++r)
    for (int32_t g = 0; g < ng; ++g)
      for (int end = 0; end < 3; ++end) {
        const double *b0 = &box[12 * (int64_t)r * ng + 6 * g], *b1 = &box[12 * (int64_t)r * ng + 6 * ((int64_t)ng + g)];
        double lo[6];
        for (int a = 0; a < 6; ++a) lo[a] = end == 0 ? b0[a] : end == 1 ? b1[a] : fmin(b0[a], b1[a]);
        for (int a = 0; a < 3; ++a) c->lref[r].T[(int64_t)end * ng + g][a] = isfinite(lo[a]) ? 0.5 * (lo[a] - lo[3 + a]) : 0.0; /* (min + max) / 2 */
        c->lref[r].E[(int64_t)end * ng + g] = 0;
      }
  PetscCall(PetscFree(box));
  for (int32_t k = 0; k < c->nmine; ++k) {
    const int32_t g = c->group[c->mine[k]];
    const int64_t v = 3 * (int64_t)c->mine[k];
    double u[3], d[3];
    for (int r = 0; r < 2; ++r) {
      list_ref *l = &c->lref[r];
      const double *ref = fresh ? c->z_prev : l->ref;
      for (int end = 0; end < 2; ++end) {
        const double *z = end ? c->end : c->z_prev;
        for (int both = 0; both < 2; ++both) {
          const int64_t at = (int64_t)(both ? 2 : end) * ng + g;
          for (int a = 0; a < 3; ++a) u[a] = z[v + a] - ref[v + a] - l->T[at][a];
          l->E[at] = fmax(l->E[at], vec3_norm(u));
        }
      }
    }
    vec3_sub(&c->end[v], &c->z_prev[v], d);
    seg = fmax(seg, vec3_norm(d));
  }
  for (int r = 0; r < 2; ++r) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, c->lref[r].E, 3 * ng, MPI_DOUBLE, MPI_MAX, c->comm));
  PetscCallMPI(MPI_Allreduce(&seg, seg_max, 1, MPI_DOUBLE, MPI_MAX, c->comm));
  PetscFunctionReturn(0);
}

/* Whether the boxes of groups g and h (over z_prev and y, so holding every point of their segments) are farther apart than
 * the barrier's reach xi + dhat: then no pair of theirs can act in this projection, whatever the list holds. */
static int groups_apart(const pbng_pd_contact *c, int32_t g, int32_t h)
{
  double g2 = 0;
  for (int a = 0; a < 3; ++a) {
    const double u = c->gbox[g][a] - c->gbox[h][3 + a], w = c->gbox[h][a] - c->gbox[g][3 + a], d = u > w ? u : w;
    if (d > 0) g2 += d * d;
  }
  return sqrt(g2) > (1 + 1e-12) * (c->xi + c->opt.dhat);
}


/* The most a pair of groups g, h can have come closer than at its ref (lref[g != h]), into c->bound[g ng + h] (group_motion's
 * T, E of that reference): a pair's
 * distance is the same with both its primitives moved by one translation, so it is at least its distance at ref less
 * E_g + E_h + |T_g - T_h| (2 E_g for g = h) with
 *   SEGMENTS: the box over both ends (a vertex anywhere on its segment);
 *   COMMON: each end's own T and E, the larger taken (at a common fraction t each vertex is (1 - t) its z_prev end + t its
 *           y end, so its stray from (1 - t) T(z_prev) + t T(y) is at most the ends' larger).
 * Groups whose boxes are apart (groups_apart) get
 * -inf: no pair of theirs can act, in the list or not. COMMON also gives c->spread[g ng + h], the most two vertices of g and h move apart on the paths: (y - z_prev) of each
 * differs from T_g(y) - T_g(z_prev) by at most E_g(z_prev) + E_g(y). excess[r]: the largest bound over the pairs of groups
 * of reference r minus their widths (> 0: the list does not hold every pair that can come within xi + dhat); returns the
 * larger. */
static double list_bounds(pbng_pd_contact *c, int paths, double excess[2])
{
  const int32_t ng = c->ngroups;
  excess[REF_SELF] = excess[REF_CROSS] = -INFINITY;
  for (int32_t g = 0; g < ng; ++g)
    for (int32_t h = 0; h < ng; ++h) {
      const int r = g != h;
      const double(*T)[3] = c->lref[r].T, *E = c->lref[r].E;
      double b = 0, d[3];
      for (int end = paths == PATHS_COMMON ? 0 : 2; end < (paths == PATHS_COMMON ? 2 : 3); ++end) {
        vec3_sub(T[(int64_t)end * ng + g], T[(int64_t)end * ng + h], d);
        b = fmax(b, (g == h ? 0.0 : vec3_norm(d)));
      }
      const double Eg = paths == PATHS_COMMON ? fmax(E[g], E[ng + g]) : E[2 * ng + g];
      const double Eh = paths == PATHS_COMMON ? fmax(E[h], E[ng + h]) : E[2 * ng + h];
      c->bound[g * ng + h] = b + Eg + Eh;
      if (g != h && groups_apart(c, g, h)) c->bound[g * ng + h] = -INFINITY; /* no pair of g and h can come within reach */
      if (paths == PATHS_COMMON) {
        double tg[3], th[3];
        vec3_sub(T[ng + g], T[g], tg), vec3_sub(T[ng + h], T[h], th), vec3_sub(tg, th, d);
        c->spread[g * ng + h] = E[g] + E[ng + g] + E[h] + E[ng + h] + vec3_norm(d);
      }
      if (c->bound[g * ng + h] > -INFINITY) excess[r] = fmax(excess[r], c->bound[g * ng + h] - c->width[g * ng + h]);
    }
  return fmax(excess[REF_SELF], excess[REF_CROSS]);
}

/* The largest spread (list_bounds, COMMON) over the pairs of groups. */
static double largest_spread(const pbng_pd_contact *c)
{
  double m = 0;
  for (int64_t k = 0; k < (int64_t)c->ngroups * c->ngroups; ++k) m = fmax(m, c->spread[k]);
  return m;
}

/* The most the pair's primitives can close on common-time paths: max over its first primitive's vertices of
 * |D_v - D_0| plus the same over its second's, D = end - z_prev (the distance does not change under the common move D_0,
 * and is 1-Lipschitz in each primitive's largest vertex move). */
static double common_moves(const pbng_pd_contact *c, const pair *p) { return common_moves_to(c, p, c->end); }

/* common_moves with the paths z_prev -> end for a given end. */
static double common_moves_to(const pbng_pd_contact *c, const pair *p, const double *end)
{
  const int nq = p->kind == PAIR_VT ? 1 : 2;
  double D0[3], ma = 0, mb = 0;
  vec3_sub(&end[3 * (int64_t)p->v[0]], &c->z_prev[3 * (int64_t)p->v[0]], D0);
  for (int k = 1; k < 4; ++k) {
    double D[3], r[3];
    vec3_sub(&end[3 * (int64_t)p->v[k]], &c->z_prev[3 * (int64_t)p->v[k]], D);
    vec3_sub(D, D0, r);
    const double n = vec3_norm(r);
    if (k < nq) ma = n > ma ? n : ma;
    else mb = n > mb ? n : mb;
  }
  return ma + mb;
}

/* Whether the pair's primitives are of two groups (its pairs are kept from REF_CROSS). */
static int pair_across(const pbng_pd_contact *c, const pair *p) { return c->group[p->v[0]] != c->group[p->v[p->kind == PAIR_VT ? 1 : 2]]; }

/* Whether the primitive's vertices v[0..n), swept from z_prev to the stage's end, come within r of the box of a group other
 * than theirs (gbox): only then can it be in a pair of two groups within r. */
static int near_other_group(const pbng_pd_contact *c, const int32_t *v, int n, double r)
{
  double lo[3], hi[3];
  swept_box(v, n, c->z_prev, c->end, 0.0, lo, hi);
  for (int32_t h = 0; h < c->ngroups; ++h)
    if (h != c->group[v[0]] && boxes_within(lo, hi, &c->gbox[h][0], &c->gbox[h][3], r)) return 1;
  return 0;
}

/* The pairs of two groups within the list's widths (COLLECT_CROSS) from the active primitives near another group's box
 * (near_other_group: the rest are farther than r from every other group), into c->pairs, sorted. Collective: no. */
static PetscErrorCode collect_cross_pairs(pbng_pd_contact *c, double r)
{
  int32_t *vert, (*tri)[3], (*edge)[2];
  primitives near = {0};

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3(c->nactive + 1, &vert, c->nltri + 1, &tri, c->nledge + 1, &edge));
  for (int32_t k = 0; k < c->nactive; ++k)
    if (near_other_group(c, &c->active_list[k], 1, r)) vert[near.nvert++] = c->active_list[k];
  for (int32_t k = 0; k < c->nltri; ++k)
    if (near_other_group(c, c->ltri[k], 3, r)) memcpy(tri[near.ntri++], c->ltri[k], sizeof(tri[0]));
  for (int32_t k = 0; k < c->nledge; ++k)
    if (near_other_group(c, c->ledge[k], 2, r)) memcpy(edge[near.nedge++], c->ledge[k], sizeof(edge[0]));
  near.vert = vert, near.tri = (const int32_t(*)[3])tri, near.edge = (const int32_t(*)[2])edge;
  PetscCall(collect_pairs_of(c, &near, c->z_prev, c->end, r));
  PetscCall(PetscFree3(vert, tri, edge));
  PetscFunctionReturn(0);
}

/* The list's pairs of one group, kept, merged with the new pairs of two groups in c->pairs (both sorted: compare_pair)
 * into the list. */
static PetscErrorCode merge_cross_pairs(pbng_pd_contact *c)
{
  pair *m;
  int64_t n = 0, i = 0, j = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(c->nlist + c->npairs + 1, &m));
  for (;;) {
    while (i < c->nlist && pair_across(c, &c->list[i])) ++i; /* the old pairs of two groups: replaced */
    if (i == c->nlist && j == c->npairs) break;
    if (j == c->npairs || (i < c->nlist && compare_pair(&c->list[i], &c->pairs[j]) < 0)) m[n++] = c->list[i++];
    else m[n++] = c->pairs[j++];
  }
  PetscCall(PetscFree(c->list));
  c->list = m, c->listcap = c->nlist + c->npairs + 1, c->nlist = n, c->npairs = 0;
  PetscFunctionReturn(0);
}

/* The candidate list made at z_prev, of widths W_gh = B_gh + xi / 2 (B: this stage's bounds from z_prev on the given paths,
 * list_bounds), with the pairs within xi + dhat + W_gh (their rest exclusion decided here, once for the list's life):
 *   COLLECT_ALL: every pair, both references at z_prev; the halo and the active primitives of the reach xi + dhat + max W;
 *   COLLECT_CROSS: the pairs of two groups only (REF_CROSS at z_prev), merged with the list's pairs of one group, kept (their
 *   widths and REF_SELF too: only bodies closing on each other made it necessary); the halo's reach xi + dhat + the larger of
 *   the new widths and twice the kept ones (a kept pair is within xi + dhat + W_gg at its ref and has moved at most its
 *   bound, <= W_gg, since).
 * mid: with z (mid-projection). Then the bounds and spreads of this stage from the references. Collective. */
static PetscErrorCode make_list(pbng_pd_contact *c, int paths, int mid, int what)
{
  const int32_t ng = c->ngroups;
  double seg_max, excess[2], wmax = 0, wcross = 0;

  PetscFunctionBeginUser;
  forget_list_distances(c);
  PetscCall(group_motion(c, 1, &seg_max));
  list_bounds(c, paths, excess);
  for (int32_t g = 0; g < ng; ++g)
    for (int32_t h = 0; h < ng; ++h) {
      double *w = &c->width[g * ng + h];
      if (what == COLLECT_ALL || g != h) *w = c->bound[g * ng + h] + 0.5 * c->xi;
      wmax = fmax(wmax, what == COLLECT_CROSS && g == h ? 2 * *w : *w);
      if (g != h) wcross = fmax(wcross, *w);
    }
  c->collecting = what;
  PetscCall(share_reach(c, c->xi + c->opt.dhat + wmax, mid));
  for (int r = what == COLLECT_ALL ? REF_SELF : REF_CROSS; r <= REF_CROSS; ++r)
    for (int32_t k = 0; k < c->nactive; ++k) memcpy(&c->lref[r].ref[3 * (int64_t)c->active_list[k]], &c->z_prev[3 * (int64_t)c->active_list[k]], 3 * sizeof(double));
  if (what == COLLECT_ALL) {
    PetscCall(collect_pairs(c, c->z_prev, c->end, c->xi + c->opt.dhat + wmax));
    pair *t = c->list;
    const int64_t tc = c->listcap;
    c->list = c->pairs, c->pairs = t, c->listcap = c->cap, c->cap = tc;
    c->nlist = c->npairs, c->npairs = 0;
  } else {
    PetscCall(collect_cross_pairs(c, c->xi + c->opt.dhat + wcross));
    PetscCall(merge_cross_pairs(c));
  }
  c->collecting = COLLECT_NONE;
  c->list_valid = 1;
  PetscCall(group_motion(c, 0, &seg_max));
  list_bounds(c, paths, excess);
  PetscFunctionReturn(0);
}

/* Each active vertex's stray from its group's translation at z_prev, for each list reference (group_motion's T at z_prev):
 * a list pair's distance at z_prev is at least its distance at its ref less its two primitives' largest strays (and
 * |T_g - T_h| across groups). */
static void list_strays(pbng_pd_contact *c)
{
  for (int r = 0; r < 2; ++r) {
    list_ref *l = &c->lref[r];
    for (int32_t k = 0; k < c->nactive; ++k) {
      const int32_t v = c->active_list[k];
      double u[3];
      for (int a = 0; a < 3; ++a) u[a] = c->z_prev[3 * (int64_t)v + a] - l->ref[3 * (int64_t)v + a] - l->T[c->group[v]][a];
      l->stray[v] = vec3_norm(u);
    }
  }
}

/* The most a list pair has come closer at z_prev than at its ref (list_strays). */
static double pair_stray(const pbng_pd_contact *c, const pair *p)
{
  const int nq = p->kind == PAIR_VT ? 1 : 2;
  const int32_t g = c->group[p->v[0]], h = c->group[p->v[nq]];
  const list_ref *l = &c->lref[g != h];
  double sa = 0, sb = 0, d[3];
  for (int k = 0; k < 4; ++k) { /* (comparisons, not fmax: a call per use without -ffinite-math-only) */
    const double sk = l->stray[p->v[k]];
    if (k < nq) sa = sk > sa ? sk : sa;
    else sb = sk > sb ? sk : sb;
  }
  if (g == h) return sa + sb;
  vec3_sub(l->T[g], l->T[h], d);
  return sa + sb + vec3_norm(d);
}

/* The margin a stage's pairs are selected with beyond the barrier's reach, so that they can serve the stages after the
 * projection's gradient steps too (next_stage: a COMMON stage's pairs close by at most 4x the steps' moves): 4 iterations
 * times the last projection's largest step (the moves of one projection's steps are alike), at most eps xi (a step's
 * bound, Eq. 53); 0 without gradient steps. */
static double stage_margin(const pbng_pd_contact *c) { return fmin(4 * c->opt.iterations * c->step_move, c->opt.eps * c->xi); }

/* list_d0 ready for this projection's stages: NaN (not computed yet) for every list pair unless it holds already. */
static PetscErrorCode known_list_distances(pbng_pd_contact *c)
{
  PetscFunctionBeginUser;
  if (c->list_d0_known) PetscFunctionReturn(0);
  if (c->list_d0_cap < c->nlist) {
    PetscCall(PetscFree(c->list_d0));
    c->list_d0_cap = c->nlist;
    PetscCall(PetscMalloc1(c->list_d0_cap + 1, &c->list_d0));
  }
  for (int64_t k = 0; k < c->nlist; ++k) c->list_d0[k] = NAN;
  c->list_d0_known = 1;
  PetscFunctionReturn(0);
}

/* The stage's pairs from the candidate list, those that may act on the given paths with the stage's margin (their distance at
 * z_prev less their moves m below xi + dhat + margin, or m beyond ACCD's early stop less the margin; m: common_moves on
 * COMMON paths, side_moves on the SEGMENTS), the distance computed only where the list's less the strays (pair_stray:
 * d(z_prev) >= d(ref) - it) and the moves allows it; pair.d: the distance less m; then the obstacle pairs (after the list's
 * kinds: sorted as it is). Not collective. */
static PetscErrorCode select_from_list(pbng_pd_contact *c, int paths)
{
  const double reach = c->xi + c->opt.dhat + stage_margin(c), clause = early_stop_moves(c) - stage_margin(c);
  double seg_max = 0;

  PetscFunctionBeginUser;
  for (int32_t k = 0; k < c->nactive; ++k) seg_max = c->seg[c->active_list[k]] > seg_max ? c->seg[c->active_list[k]] : seg_max;
  PetscCall(known_list_distances(c));
  c->npairs = 0;
  for (int64_t k = 0; k < c->nlist; ++k) {
    const pair *p = &c->list[k];
    /* first with the most any pair of its groups can close (on common-time paths the spread within its first primitive's
     * group plus the spread across, list_bounds; on the segments 2 seg_max: at least its own moves), then with its own */
    const int32_t g = c->group[p->v[0]];
    const double stray = pair_stray(c, p), M = paths == PATHS_COMMON ? c->spread[g * c->ngroups + g] + c->spread[group_pair(c, p)] : 2 * seg_max;
    if (p->d - stray - M >= reach && M <= clause) continue;
    const double m = paths == PATHS_COMMON ? common_moves(c, p) : side_moves(c, p);
    double w[4], dir[3];
    if (m <= clause && (p->d - stray - m >= reach || boxes_beyond(c, p, c->z_prev, reach + m))) continue;
    if (isnan(c->list_d0[k])) c->list_d0[k] = pair_geometry(c, p, c->z_prev, w, dir);
    const double d0 = c->list_d0[k];
    if (d0 - m < reach || m > clause) PetscCall(add_pair(c, p->kind, p->v, d0));
  }
  PetscCall(collect_obstacle_pairs(c, c->z_prev, c->end, reach));
  PetscFunctionReturn(0);
}

/* A stage's pairs from the candidate list, on the given paths of the stage's segments z_prev -> end: the list is kept while
 * every pair of groups' bound is within its width (a pair outside the list stays farther apart than xi + dhat on the paths)
 * and no move can stop ACCD early on a pair out of reach, else made again at z_prev; then the pairs (select_from_list).
 * mid: a later stage (the halo's positions are current; z is not reset); else the projection's first (y and z_prev go to
 * the halo, z <- y). *listed 0 (nothing done): a move so large that ACCD might stop early on a pair out of reach (may_act):
 * the caller collects afresh. Collective. */
/* Whether the candidate list (if valid) holds every pair that can come within the barrier's reach on the given paths of the
 * stage's segments z_prev -> end: every pair of groups' bound within its width, and no move that can stop ACCD early on a
 * pair out of reach; *cross_only: it does not, but would with the pairs of two groups made again (make_list). Also sets
 * the stage's bounds and spreads. Collective. */
static PetscErrorCode list_covers(pbng_pd_contact *c, int paths, int *covers, int *cross_only)
{
  const double clause = early_stop_moves(c);
  double seg_max, excess[2];

  PetscFunctionBeginUser;
  *covers = *cross_only = 0;
  if (!c->list_valid) PetscFunctionReturn(0);
  PetscCall(group_motion(c, 0, &seg_max));
  list_bounds(c, paths, excess);
  const int moves_ok = paths == PATHS_COMMON ? 2 * largest_spread(c) <= clause : 2 * seg_max <= clause;
  *covers = moves_ok && excess[REF_SELF] <= 0 && excess[REF_CROSS] <= 0;
  *cross_only = moves_ok && excess[REF_SELF] <= 0 && excess[REF_CROSS] > 0; /* only bodies closing on each other */
  PetscFunctionReturn(0);
}

static PetscErrorCode stage_from_list(pbng_pd_contact *c, int paths, int mid, int *listed)
{
  const double clause = early_stop_moves(c);
  double seg_max;
  int valid, cross_only;

  PetscFunctionBeginUser;
  *listed = 0;
  PetscCall(list_covers(c, paths, &valid, &cross_only));
  if (valid) {
    if (!mid) PetscCall(pbng_halo_exchange(&c->halo, 0, c->y));
    if (!mid) PetscCall(pbng_halo_exchange(&c->halo, 0, c->z_prev));
    segment_lengths(c);
  } else if (cross_only) {
    PetscCall(make_list(c, paths, mid, COLLECT_CROSS));
  } else {
    double excess[2];
    PetscCall(group_motion(c, 1, &seg_max));
    list_bounds(c, paths, excess);
    if (!(paths == PATHS_COMMON ? 2 * largest_spread(c) <= clause : 2 * seg_max <= clause)) PetscFunctionReturn(0);
    PetscCall(make_list(c, paths, mid, COLLECT_ALL));
  }
  if (!mid) start_at_y(c);
  list_strays(c);
  PetscCall(select_from_list(c, paths));
  c->stage_paths = paths, c->drift = 0;
  *listed = 1;
  PetscFunctionReturn(0);
}

/* Whether no vertex would be clamped in the first clamp pass with the projection's pairs (every pair's time of impact from
 * z_prev to z = end is 1). Collective. */
static PetscErrorCode no_clamp(const pbng_pd_contact *c, int *clear)
{
  int mine = 1;

  PetscFunctionBeginUser;
  for (int64_t k = 0; k < c->npairs && mine; ++k)
    if (pair_moves(c, &c->pairs[k]) && !no_impact(c, &c->pairs[k]) && pair_toi(c, &c->pairs[k]) < 1) mine = 0;
  PetscCallMPI(MPI_Allreduce(&mine, clear, 1, MPI_INT, MPI_LAND, c->comm));
  PetscFunctionReturn(0);
}

/* A stage's pairs: every pair that can come within the barrier's reach xi + dhat while each vertex stays on its segment
 * z_prev -> end (z = end at the stage's start; its clamp pass and reverts move vertices back along the segments, and its
 * gradient step, if any, is evaluated there). From `paths` on: first on common-time paths (a thin list; *clear when no
 * vertex would be clamped, no_clamp: z stays at end), the segments' wider list only when a vertex would be; afresh when the
 * moves are too large for a list, or with -pd_contact_fresh_pairs. mid: after a gradient step (end = z). Collective. */
static PetscErrorCode stage_pairs(pbng_pd_contact *c, const double *x, int mid, int paths, int *clear)
{
  int listed = 0;

  PetscFunctionBeginUser;
  *clear = 0;
  if (!mid) PetscCall(load_positions(c, x));
  else c->end = c->z;
  if (paths == PATHS_COMMON && !c->opt.fresh_pairs) PetscCall(stage_from_list(c, PATHS_COMMON, mid, &listed));
  if (listed) PetscCall(no_clamp(c, clear));
  if (!*clear && !c->opt.fresh_pairs) PetscCall(stage_from_list(c, PATHS_SEGMENTS, mid, &listed));
  if (listed) PetscFunctionReturn(0);
  c->list_valid = 0; /* its halo plan is replaced */
  PetscCall(share_reach(c, c->xi + c->opt.dhat, mid));
  if (!mid) start_at_y(c);
  PetscCall(collect_pairs(c, c->z_prev, c->end, c->xi + c->opt.dhat));
  c->stage_paths = -1, c->drift = 0;
  PetscFunctionReturn(0);
}

/* The pairs of the stage after a gradient step that moved no vertex more than `move` (over the ranks), on the segments
 * z_prev -> z: the last stage's, kept, while they cover these segments — the list still does (list_covers), and they were
 * selected with the margin for the moves since (select_from_list, stage_margin): on the SEGMENTS a vertex's move along its
 * new segment exceeds its old one by at most the moves since (the gradient steps start from points of the old segments),
 * so a pair's side_moves by twice their sum; on COMMON paths, and only when the last clamp pass left z at the stage's end
 * (at_end: no vertex clamped or sent back, so the new segments are the old ones' ends moved), each vertex's move relative to
 * another's changes by at most twice it, a pair's common_moves by four times, and the new ends must clamp no vertex
 * (no_clamp) — else the segments' pairs. Otherwise selected again (stage_pairs). Collective. */
static PetscErrorCode next_stage(pbng_pd_contact *c, const double *x, double move, int at_end, int *clear)
{
  const int paths = c->stage_paths, k = paths == PATHS_COMMON ? 4 : 2;
  int keep = paths >= 0 && (paths == PATHS_SEGMENTS || at_end) && k * (c->drift + move) <= stage_margin(c), cross_only;

  PetscFunctionBeginUser;
  *clear = 0;
  c->end = c->z;
  if (keep) PetscCall(list_covers(c, paths, &keep, &cross_only));
  if (keep) segment_lengths(c); /* (the moves to the new ends: side_moves, an obstacle pair's stage_moves) */
  if (keep && paths == PATHS_COMMON) PetscCall(no_clamp(c, clear));
  if (keep && (paths == PATHS_SEGMENTS || *clear)) {
    c->drift += move;
    PetscFunctionReturn(0);
  }
  PetscCall(stage_pairs(c, x, 1, keep ? PATHS_SEGMENTS : PATHS_COMMON, clear)); /* (a kept COMMON stage that would clamp: so would a new one) */
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_pd_contact_project(pbng_pd_contact *c, double *x, pbng_pd_contact_stats *st)
{
  int64_t counts[2];
  const pair *worst;
  double dmin;
  int clear; /* no_clamp found every time of impact of the stage 1: its first clamp pass need not compute them again */

  PetscFunctionBeginUser;
  memset(st, 0, sizeof(*st));
  /* in each stage every vertex stays on its segment z_prev -> end (the clamps and reverts), so its pairs are those that can
   * come within xi + dhat there; a gradient step that moves z starts the next stage, with the segments z_prev -> z */
  PetscCall(stage_pairs(c, x, 0, PATHS_COMMON, &clear));
  double largest_step = 0;
  for (int m = 0;; ++m) {
    double move = 0;
    int at_end; /* the clamp pass left z = end (clear and nothing sent back) */
    PetscCall(clamp_pass(c, st, clear, &at_end));
    at_end = at_end && clear;
    clear = 0; /* (it holds where z = end only: reverts may have moved z) */
    if (m == c->opt.iterations) break;
    PetscCall(gradient_step(c, st, &move));
    largest_step = fmax(largest_step, move);
    if (move > 0) PetscCall(next_stage(c, x, move, at_end, &clear));
    if (move < 1e-3 * c->xi) {
      PetscCall(clamp_pass(c, st, clear, &at_end));
      break;
    }
  }
  c->step_move = largest_step;
  /* the figures at the result, before z_prev moves to it: their bounds (stays_beyond) are the last stage's, from its z_prev */
  min_distance(c, c->z, &dmin, &worst);
  PetscCallMPI(MPI_Allreduce(&dmin, &st->min_distance, 1, MPI_DOUBLE, MPI_MIN, c->comm));
  if (c->opt.kappa > 0) { /* no gradient step counted them: the pairs within the barrier's reach at the result */
    const int64_t n = pairs_within_reach(c, c->z);
    PetscCallMPI(MPI_Allreduce(&n, &st->pairs, 1, MPI_INT64_T, MPI_SUM, c->comm));
  }
  for (int32_t k = 0; k < c->nactive; ++k) { /* owned and ghost nodes (the ghosts' z came with the last share_z) */
    const int32_t v = c->active_list[k];
    if (c->local[v] >= 0 && c->free[v]) memcpy(&x[3 * (int64_t)c->local[v]], &c->z[3 * (int64_t)v], 3 * sizeof(double));
    memcpy(&c->z_prev[3 * (int64_t)v], &c->z[3 * (int64_t)v], 3 * sizeof(double));
  }
  st->surface = c->nv;
  PetscCallMPI(MPI_Allreduce(&(int64_t){c->nactive}, &st->active_max, 1, MPI_INT64_T, MPI_MAX, c->comm));
  counts[0] = st->clamped, counts[1] = st->reverted;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT64_T, MPI_SUM, c->comm));
  st->clamped = counts[0], st->reverted = counts[1];
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_pd_contact_restart(pbng_pd_contact *c, const double *x)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_pd_contact_reset(c, x));
  PetscCall(begin_projection(c, NULL, c->xi + c->opt.dhat));
  PetscCall(collect_pairs(c, c->z_prev, c->z_prev, c->xi + c->opt.dhat));
  PetscFunctionReturn(0);
}

/* ---- the barrier in the frame's energy (-pd_contact_kappa) ------------------------------------------------- */

/* One pair's barrier at the positions x: its energy kappa B(f(d) - xi) (Eq. 3 at the rescaled gap of Eq. 51), the
 * slope kappa B'(f(d) - xi) f'(d) of the energy along the distance, and the curvature kappa B'' f'^2 of its rank-one
 * Hessian part; w, dir: the distance's gradient w_s dir for slot s (pair_geometry). 0: the gap is beyond dhat. */
typedef struct {
  double energy, slope, curvature, w[4], dir[3];
} pair_barrier;

static int barrier_of_pair(const pbng_pd_contact *c, const pair *p, const double *x, pair_barrier *b)
{
  if (boxes_beyond(c, p, x, c->xi + c->opt.dhat)) return 0; /* f(d) >= d (Eq. 51): its gap is beyond dhat */
  const double d = pair_geometry(c, p, x, b->w, b->dir), gap = pbng_contact_distance_rescale(d, c->xi, c->opt.eps) - c->xi;
  if (!(gap < c->opt.dhat)) return 0;
  const double fp = pbng_contact_distance_rescale_derivative(d, c->xi, c->opt.eps), kappa = c->opt.kappa;
  b->energy = kappa * pbng_barrier(gap, c->opt.dhat);
  b->slope = kappa * pbng_barrier_derivative(gap, c->opt.dhat) * fp;
  b->curvature = kappa * pbng_barrier_second_derivative(gap, c->opt.dhat) * fp * fp;
  return 1;
}

/* The Gershgorin row sum of slot s, axis a of the pair's rank-one Hessian part curvature (w (x) dir)(w (x) dir)^T:
 * curvature |w_s dir_a| sum_t,b |w_t dir_b|. */
static double gershgorin_row(const pair_barrier *b, int nslots, int s, int a)
{
  double wsum = 0, dsum = fabs(b->dir[0]) + fabs(b->dir[1]) + fabs(b->dir[2]);
  for (int t = 0; t < nslots; ++t) wsum += fabs(b->w[t]);
  return b->curvature * fabs(b->w[s] * b->dir[a]) * wsum * dsum;
}

/* xb <- x on the owned surface vertices, and their owners' values on every other vertex the pairs hold (the ghost
 * plan and the last projection's halo plan). Collective. */
static PetscErrorCode load_barrier_positions(pbng_pd_contact *c, const double *x)
{
  PetscFunctionBeginUser;
  for (int32_t k = 0; k < c->nmine; ++k) memcpy(&c->xb[3 * (int64_t)c->mine[k]], &x[3 * (int64_t)c->local[c->mine[k]]], 3 * sizeof(double));
  PetscCall(pbng_halo_exchange(&c->ghosts, 0, c->xb));
  PetscCall(pbng_halo_exchange(&c->halo, 0, c->xb));
  PetscFunctionReturn(0);
}

typedef struct {
  const pbng_pd_contact *c;
  double *grad, *diag, *vertex_energy;
} barrier_sums;

/* A pair's barrier gradient, Gershgorin row and energy at an owned vertex (pbng_pd_contact_barrier's arrays, local order). */
static void add_barrier_contrib(void *ctx, const contrib *e)
{
  const barrier_sums *b = ctx;
  const int64_t i = b->c->local[e->v];
  for (int a = 0; a < 3; ++a) {
    if (b->grad) b->grad[3 * i + a] += e->val[a];
    if (b->diag) b->diag[3 * i + a] += e->val[3 + a];
  }
  if (b->vertex_energy) b->vertex_energy[i] += e->val[6];
}

PetscErrorCode pbng_pd_contact_barrier(pbng_pd_contact *c, const double *x, double *grad, double *diag, double *vertex_energy, pbng_exact_sum *energy)
{
  barrier_sums sums = {c, grad, diag, vertex_energy};
  contrib_list *l;

  PetscFunctionBeginUser;
  PetscCall(load_barrier_positions(c, x));
  PetscCall(contrib_lists_create(c, add_barrier_contrib, &sums, &l));
  for (int64_t k = 0; k < c->npairs; ++k) { /* sorted pairs: each node's sums in one global order (rank independent) */
    const pair *p = &c->pairs[k];
    const int n = pair_vertices(p);
    pair_barrier b;
    if (!barrier_of_pair(c, p, c->xb, &b)) continue;
    if (energy) pbng_exact_sum_add(energy, b.energy);
    for (int s = 0; s < n; ++s) {
      const int32_t v = p->v[s];
      double val[7];
      if (!c->free[v]) continue;
      for (int a = 0; a < 3; ++a) {
        val[a] = b.slope * b.w[s] * b.dir[a]; /* d/dx_s of kappa B(f(d) - xi): d's gradient is w_s dir */
        val[3 + a] = gershgorin_row(&b, n, s, a);
      }
      val[6] = b.energy;
      PetscCall(contrib_add(c, l, p, v, val, 7));
    }
  }
  PetscCall(contrib_sum(c, l));
  PetscCall(contrib_lists_destroy(c, &l));
  PetscFunctionReturn(0);
}
