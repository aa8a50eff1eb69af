#include "contact/contact_detect.h"
#include "contact/box_hash.h"
#include <math.h>
#include <string.h>
#include "parallel/halo.h"
#include "core/vec3.h"
#include "core/ccd.h"
#include "core/sorted_ids.h"

/* A surface triangle at the detection's positions, held here or received from its holder. */
typedef struct {
  double x[3][3];        /* corners, outward order */
  double xp[3][3];       /* the corners at the previous detection (x when there is none) */
  double lo[3], hi[3];   /* bounding box grown by the reach (triangle_reach) */
  double slo[3], shi[3]; /* the swept box: the boxes of x and xp, grown by the reach */
  int64_t key, gid[3], body;
  int32_t owner[3];
  int32_t sheet; /* 1: one side of a sheet triangle (two-sided) */
} placed_triangle;

/* Which cells of a FILTER_CELLS^3 grid over a rank's box hold its owned surface vertices. */
#define FILTER_CELLS 16
typedef struct {
  double lo[3], hi[3];
  int64_t nvert;
  uint8_t bits[FILTER_CELLS * FILTER_CELLS * FILTER_CELLS / 8];
} occupancy;

/* The broad phase (contact/box_hash.h) over the triangles' grown boxes, cells of the median box's longest side;
 * triangles covering more than HASH_MAX_CELLS cells are candidates of every vertex. */
#define HASH_MAX_CELLS 512

struct pbng_contact_detector {
  const pbng_dmesh *dm;
  pbng_contact_detect_options opt;
  pbng_surface surf;
  int64_t *bound; /* [PBNG_CONTACT_BOUND_BODIES nlocal]: the bodies a local node is bound to by a weak constraint (-1: none) */
  pbng_contact_detect_stats stats;
};

/* One accepted vertex-triangle pair. */
typedef struct {
  int32_t tri; /* index into the placed triangles */
  int deep;    /* from the swept rules (pbng_contact_detect_swept): 1 crossing, 2 kept */
  double dist2, gap, w[3], p[3], n[3];
} accepted_pair;

/* A vertex's PBNG_CONTACT_NEAREST closest accepted triangles (by distance, ties by the lower key). */
typedef struct {
  int n;
  accepted_pair pair[PBNG_CONTACT_NEAREST];
} nearest_pairs;

/* Per owned surface vertex: the triangles it keeps (valley_records: 0 to PBNG_CONTACT_MAX_TRIANGLES, by
 * increasing key) and how many obstacles are closer than d. */
typedef struct {
  int nkept, nobstacles;
  accepted_pair kept[PBNG_CONTACT_MAX_TRIANGLES];
} vertex_answer;

/* ---- the triangles at the current positions ---- */

/* How far a triangle's box is grown: d plus a margin of 1e-12 (d + the largest corner coordinate's
 * magnitude) that covers the rounding of the closest point and of |x - p| <= d, so that every pair
 * with a computed distance <= d passes the box test. */
static double triangle_reach(double d, const double x[3][3])
{
  double m = 0;
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 3; ++k) m = fmax(m, fabs(x[a][k]));
  return d + 1e-12 * (d + m);
}

/* The grown box of the corners x, and the swept box of x and xp. */
static void grow_box(placed_triangle *t, double d)
{
  const double g = fmax(triangle_reach(d, t->x), triangle_reach(d, t->xp));
  for (int k = 0; k < 3; ++k) {
    t->lo[k] = fmin(t->x[0][k], fmin(t->x[1][k], t->x[2][k])) - g;
    t->hi[k] = fmax(t->x[0][k], fmax(t->x[1][k], t->x[2][k])) + g;
    t->slo[k] = fmin(t->lo[k], fmin(t->xp[0][k], fmin(t->xp[1][k], t->xp[2][k])) - g);
    t->shi[k] = fmax(t->hi[k], fmax(t->xp[0][k], fmax(t->xp[1][k], t->xp[2][k])) + g);
  }
}

static int in_box(const placed_triangle *t, const double x[3])
{
  return x[0] >= t->lo[0] && x[0] <= t->hi[0] && x[1] >= t->lo[1] && x[1] <= t->hi[1] && x[2] >= t->lo[2] && x[2] <= t->hi[2];
}

/* Collective. Every corner of the local triangles (every owned surface vertex among them) must be
 * finite; otherwise every rank fails naming the same node (the smallest such global id). */
static PetscErrorCode check_positions(const pbng_contact_detector *det, const double *x)
{
  const pbng_dmesh *dm = det->dm;
  const pbng_surface *s = &det->surf;
  int64_t mine = INT64_MAX, first;

  PetscFunctionBeginUser;
  for (int32_t t = 0; t < s->ntri; ++t)
    for (int a = 0; a < 3; ++a) {
      const double *p = &x[3 * (int64_t)s->tri[t].node[a]];
      if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])) && dm->global_node[s->tri[t].node[a]] < mine) mine = dm->global_node[s->tri[t].node[a]];
    }
  PetscCallMPI(MPI_Allreduce(&mine, &first, 1, MPI_INT64_T, MPI_MIN, dm->comm));
  PetscCheck(first == INT64_MAX, dm->comm, PETSC_ERR_FP, "contact detection: node %" PRId64 " (a surface vertex) has a non-finite position", first);
  PetscFunctionReturn(0);
}

/* The held triangles at positions x (and xp, the previous detection's, or NULL), into t[0 .. nheld). */
static void place_held_triangles(const pbng_contact_detector *det, const double *x, const double *xp, placed_triangle *t)
{
  const pbng_dmesh *dm = det->dm;
  const pbng_surface *s = &det->surf;
  for (int32_t k = 0; k < s->nheld; ++k) {
    placed_triangle *p = &t[k];
    memset(p, 0, sizeof(*p));
    p->key = s->tri[k].key, p->sheet = s->tri[k].sheet;
    p->body = s->body[s->tri[k].node[0]];
    for (int a = 0; a < 3; ++a) {
      const int32_t i = s->tri[k].node[a];
      p->gid[a] = dm->global_node[i];
      p->owner[a] = pbng_dmesh_node_owner(dm, i);
      for (int c = 0; c < 3; ++c) p->x[a][c] = x[3 * (int64_t)i + c], p->xp[a][c] = (xp ? xp : x)[3 * (int64_t)i + c];
    }
    grow_box(p, det->opt.distance);
  }
}

/* ---- the surface halo ---- */

static int filter_cell(const occupancy *o, double x, int k)
{
  const double w = o->hi[k] - o->lo[k];
  if (!(w > 0)) return 0;
  const double c = floor((x - o->lo[k]) / w * FILTER_CELLS);
  return c < 0 ? 0 : c >= FILTER_CELLS ? FILTER_CELLS - 1 : (int)c;
}

static int filter_bit(int i, int j, int k) { return i + FILTER_CELLS * (j + FILTER_CELLS * k); }

/* The cells of o occupied by the segment from a to b (its box). */
static void occupy_segment(occupancy *o, const double a[3], const double b[3])
{
  int r[6];
  for (int k = 0; k < 3; ++k) r[2 * k] = filter_cell(o, fmin(a[k], b[k]), k), r[2 * k + 1] = filter_cell(o, fmax(a[k], b[k]), k);
  for (int k = r[4]; k <= r[5]; ++k)
    for (int j = r[2]; j <= r[3]; ++j)
      for (int i = r[0]; i <= r[1]; ++i) {
        const int bit = filter_bit(i, j, k);
        o->bits[bit / 8] |= (uint8_t)(1u << (bit % 8));
      }
}

/* This rank's owned surface vertices at x (with xp: their paths from xp to x): their box and occupied cells. */
static void own_occupancy(const pbng_contact_detector *det, const double *x, const double *xp, occupancy *o)
{
  const pbng_surface *s = &det->surf;
  const double *y = xp ? xp : x;
  memset(o, 0, sizeof(*o));
  o->nvert = s->nvert;
  for (int k = 0; k < 3; ++k) o->lo[k] = INFINITY, o->hi[k] = -INFINITY;
  for (int32_t v = 0; v < s->nvert; ++v)
    for (int k = 0; k < 3; ++k) {
      const int64_t i = 3 * (int64_t)s->vert[v] + k;
      o->lo[k] = fmin(o->lo[k], fmin(x[i], y[i])), o->hi[k] = fmax(o->hi[k], fmax(x[i], y[i]));
    }
  for (int32_t v = 0; v < s->nvert; ++v) occupy_segment(o, &x[3 * (int64_t)s->vert[v]], &y[3 * (int64_t)s->vert[v]]);
}

/* Whether a triangle's swept box (its grown box without a previous detection) meets an occupied cell of o: it does
 * whenever it contains one of o's vertices or meets one's path (the cell index is monotone in x), so no triangle
 * within reach of a vertex is missed. */
static int filter_hits(const occupancy *o, const placed_triangle *t)
{
  int r[6];
  if (!o->nvert) return 0;
  for (int k = 0; k < 3; ++k) {
    if (t->shi[k] < o->lo[k] || t->slo[k] > o->hi[k]) return 0;
    r[2 * k] = filter_cell(o, t->slo[k], k), r[2 * k + 1] = filter_cell(o, t->shi[k], k);
  }
  for (int k = r[4]; k <= r[5]; ++k)
    for (int j = r[2]; j <= r[3]; ++j)
      for (int i = r[0]; i <= r[1]; ++i) {
        const int b = filter_bit(i, j, k);
        if (o->bits[b / 8] & (1u << (b % 8))) return 1;
      }
  return 0;
}

/* Collective. Each (rank, held index) of to[nto] sends that held triangle (*tri)[index] to that rank, in the order
 * listed; the received ones are appended to *tri after its n triangles (*nrecv of them, by sending rank). */
static PetscErrorCode send_held_triangles(const pbng_contact_detector *det, int64_t nto, const int32_t (*to)[2], placed_triangle **tri, int32_t n,
                                          int32_t *nrecv)
{
  const pbng_dmesh *dm = det->dm;
  const int size = dm->size;
  int *scount, *sdispl, *rcount, *rdispl;
  placed_triangle *sbuf;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc4(size, &scount, size + 1, &sdispl, size, &rcount, size + 1, &rdispl));
  for (int64_t k = 0; k < nto; ++k) scount[to[k][0]]++;
  for (int r = 0; r < size; ++r) sdispl[r + 1] = sdispl[r] + scount[r], scount[r] = 0;
  PetscCall(PetscMalloc1(sdispl[size] + 1, &sbuf));
  for (int64_t k = 0; k < nto; ++k) sbuf[sdispl[to[k][0]] + scount[to[k][0]]++] = (*tri)[to[k][1]];
  PetscCallMPI(MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, dm->comm));
  for (int r = 0; r < size; ++r) rdispl[r + 1] = rdispl[r] + rcount[r];
  PetscCheck((int64_t)n + rdispl[size] < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "contact detection: too many triangles on one rank");
  PetscCall(PetscRealloc(sizeof(placed_triangle) * ((size_t)n + (size_t)rdispl[size] + 1), tri));
  PetscCall(pbng_alltoallv_items(sbuf, scount, sdispl, &(*tri)[n], rcount, rdispl, sizeof(placed_triangle), dm->comm));
  *nrecv = rdispl[size];
  PetscCall(PetscFree(sbuf));
  PetscCall(PetscFree4(scount, sdispl, rcount, rdispl));
  PetscFunctionReturn(0);
}

/* Appends (rank, index) to the growing list *to[*n] (capacity *cap). */
static PetscErrorCode list_send(int32_t (**to)[2], int64_t *n, int64_t *cap, int rank, int32_t index)
{
  PetscFunctionBeginUser;
  if (*n == *cap) {
    *cap = 2 * *cap + 64;
    PetscCall(PetscRealloc(sizeof(**to) * (size_t)*cap, to));
  }
  (*to)[*n][0] = rank, (*to)[(*n)++][1] = index;
  PetscFunctionReturn(0);
}

/* Every rank's occupancy is gathered; each held triangle goes to every other rank whose occupied
 * cells its swept box meets. The received ones are appended to *tri after the nheld held ones. */
static PetscErrorCode exchange_surface_halo(const pbng_contact_detector *det, const double *x, const double *xp, placed_triangle **tri, int32_t *nhalo)
{
  const pbng_dmesh *dm = det->dm;
  occupancy mine, *all;
  int32_t(*to)[2] = NULL;
  int64_t nto = 0, cap = 0;

  PetscFunctionBeginUser;
  own_occupancy(det, x, xp, &mine);
  PetscCall(PetscMalloc1(dm->size, &all));
  PetscCallMPI(MPI_Allgather(&mine, (int)sizeof(occupancy), MPI_BYTE, all, (int)sizeof(occupancy), MPI_BYTE, dm->comm));
  for (int32_t t = 0; t < det->surf.nheld; ++t)
    for (int r = 0; r < dm->size; ++r)
      if (r != dm->rank && filter_hits(&all[r], &(*tri)[t])) PetscCall(list_send(&to, &nto, &cap, r, t));
  PetscCall(send_held_triangles(det, nto, (const int32_t(*)[2])to, tri, det->surf.nheld, nhalo));
  PetscCall(PetscFree(to));
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* ---- broad phase: the spatial hash ---- */

/* The hash of the triangles' grown boxes (swept: their swept boxes). */
static PetscErrorCode spatial_hash_build(const placed_triangle *t, int32_t n, int swept, pbng_box_hash *g)
{
  double(*box)[6], h;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(n + 1, &box));
  for (int32_t k = 0; k < n; ++k)
    for (int a = 0; a < 3; ++a) box[k][a] = swept ? t[k].slo[a] : t[k].lo[a], box[k][3 + a] = swept ? t[k].shi[a] : t[k].hi[a];
  PetscCall(pbng_box_hash_median_edge(n, (const double(*)[6])box, &h));
  PetscErrorCode ierr = pbng_box_hash_create(n, (const double(*)[6])box, h, HASH_MAX_CELLS, g);
  PetscCall(PetscFree(box));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* ---- narrow phase, per vertex ---- */

/* The angle-weighted normal of owned surface vertex v (its boundary-face triangles in key order, each
 * from v; sheet sides are left out: a sheet has no outside). Returns how many triangles it summed: 0 for
 * a vertex of sheets alone, a point without a facing direction. */
static int vertex_normal(const pbng_surface *s, const double *x, int32_t v, double nv[3])
{
  const int32_t i = s->vert[v];
  int n = 0;
  nv[0] = nv[1] = nv[2] = 0;
  for (int32_t k = s->vtri_start[v]; k < s->vtri_start[v + 1]; ++k) {
    if (s->tri[s->vtri[k]].sheet) continue;
    ++n;
    const int32_t *c = s->tri[s->vtri[k]].node;
    const int j = c[0] == i ? 0 : c[1] == i ? 1 : 2;
    pbng_vertex_normal_add(&x[3 * (int64_t)c[j]], &x[3 * (int64_t)c[(j + 1) % 3]], &x[3 * (int64_t)c[(j + 2) % 3]], nv);
  }
  return n;
}

/* Whether one of the triangle's corners shares an element with the vertex (sorted ids nbr[0 .. n)). */
static int shares_element(const int64_t *nbr, int32_t n, const int64_t gid[3])
{
  for (int a = 0; a < 3; ++a) {
    int32_t lo = 0, hi = n - 1;
    while (lo <= hi) {
      const int32_t mid = lo + (hi - lo) / 2;
      if (nbr[mid] == gid[a]) return 1;
      if (nbr[mid] < gid[a]) lo = mid + 1;
      else hi = mid - 1;
    }
  }
  return 0;
}

/* Whether local node i is bound to `body` (bound_to_bodies). */
static int bound_to(const pbng_contact_detector *det, int32_t i, int64_t body)
{
  for (int k = 0; k < PBNG_CONTACT_BOUND_BODIES; ++k)
    if (det->bound[PBNG_CONTACT_BOUND_BODIES * i + k] == body) return 1;
  return 0;
}

/* Whether triangle t may pair with vertex v at all: not one of its corners; not of a body v is bound to (the
 * binding holds v on that surface: connective tissue, docs/contact.md#the-rules); of another body, or with
 * self-contact of the same body but no corner sharing an element with v. */
static int pair_allowed(const pbng_contact_detector *det, int32_t v, const placed_triangle *t)
{
  const pbng_surface *s = &det->surf;
  const int32_t i = s->vert[v];
  const int64_t gid = det->dm->global_node[i];
  if (t->gid[0] == gid || t->gid[1] == gid || t->gid[2] == gid) return 0;
  if (t->body != s->body[i]) return !bound_to(det, i, t->body);
  return det->opt.self && !shares_element(&s->nbr[s->nbr_start[v]], s->nbr_start[v + 1] - s->nbr_start[v], t->gid);
}

/* Whether pair a comes before pair b: closer, ties by the lower key. */
static int pair_before(const placed_triangle *tris, const accepted_pair *a, const accepted_pair *b)
{
  return a->dist2 < b->dist2 || (a->dist2 == b->dist2 && tris[a->tri].key < tris[b->tri].key);
}

/* Whether a pair with gap s (the vertex's side of the triangle's plane) is accepted. A boundary face:
 * when the vertex is behind it (s < 0, another body's: a vertex behind a nearby triangle of its own
 * surface is a concave fold, not a penetration) or the surfaces face each other (nv.n < 0), or when the
 * vertex is a point (sheets only: no facing direction) in front of it. A sheet side: when the vertex is
 * on that side (s > 0; s = 0 takes side 0, the element's own order), so exactly one of the two sides
 * pairs with a vertex, the one it is on; a vertex with a facing direction of its own body must also face it. */
static int pair_rule(double s, double facing, int point, int same_body, const placed_triangle *T)
{
  if (T->sheet) return (s > 0 || (s == 0 && !(T->key & 1))) && (point || !same_body || facing < 0);
  return (s < 0 && !same_body) || facing < 0 || (point && s >= 0);
}

/* The closest point p of triangle T to xv (weights w), T's unit outward normal n and |xv - p|^2, or -1 when
 * p is farther than d or T is degenerate (its normal is computed only within reach). A sheet's side 1 is
 * computed as side 0 (its corners in side 0's order) with n negated and the weights put back in side 1's
 * order, so that the two sides' s = (xv - p).n are exact negatives: a vertex is on exactly one side, or in
 * the plane (s = 0 on both: side 0 takes it). */
static double closest_on_triangle(const placed_triangle *T, const double xv[3], double d, double w[3], double p[3], double n[3])
{
  const int flip = T->sheet && (T->key & 1), b = flip ? 2 : 1, c = flip ? 1 : 2;
  double w0[3];
  const double d2 = pbng_point_triangle_closest(xv, T->x[0], T->x[b], T->x[c], w0, p);
  if (!(sqrt(d2) <= d) || !(pbng_triangle_normal(T->x[0], T->x[b], T->x[c], n) > 0)) return -1;
  w[0] = w0[0], w[b] = w0[1], w[c] = w0[2];
  if (flip) n[0] = -n[0], n[1] = -n[1], n[2] = -n[2];
  return d2;
}

/* The rule for one pair: p the closest point, n the triangle's outward normal (a degenerate triangle
 * gives nothing), delta = |x - p|, s = (x - p).n. Accepted when delta <= d and pair_rule holds;
 * inserted into the vertex's list of its PBNG_CONTACT_NEAREST closest (ties by the lower key). */
static void consider_triangle(const double xv[3], const double nv[3], int point, double d, int same_body, const placed_triangle *tris, int32_t t,
                              nearest_pairs *near)
{
  const placed_triangle *T = &tris[t];
  accepted_pair q = {.tri = t};
  double r[3];
  q.dist2 = closest_on_triangle(T, xv, d, q.w, q.p, q.n);
  if (!(q.dist2 >= 0)) return;
  for (int k = 0; k < 3; ++k) r[k] = xv[k] - q.p[k];
  q.gap = vec3_dot(r, q.n);
  if (!pair_rule(q.gap, vec3_dot(nv, q.n), point, same_body, T)) return;
  int at = near->n;
  while (at > 0 && pair_before(tris, &q, &near->pair[at - 1])) --at;
  if (at >= PBNG_CONTACT_NEAREST) return;
  const int last = near->n < PBNG_CONTACT_NEAREST ? near->n : PBNG_CONTACT_NEAREST - 1;
  memmove(&near->pair[at + 1], &near->pair[at], sizeof(accepted_pair) * (size_t)(last - at));
  near->pair[at] = q;
  if (near->n < PBNG_CONTACT_NEAREST) ++near->n;
}

/* The triangles a vertex keeps among its accepted ones (closest first): the closest, then each next one
 * that the vertex is behind (gap < 0) and that forms a valley (pbng_triangles_form_valley) with every
 * triangle kept so far, up to PBNG_CONTACT_MAX_TRIANGLES. A vertex that went behind a concave crease
 * so gets a plane on each side: with the closest one alone it slides along that plane into the
 * neighbouring face, and the next detection, finding that face closer, lets it slide back the other
 * way (objects_dropping -scale 2: 0.056 deep, docs/contact.md). Only behind: a spring pulls its vertex
 * onto the plane from either side, so a record of a surface the vertex is in front of (across a gap)
 * would draw it there. At a ridge one plane suffices (no valley). Behind a sheet's side means within
 * its thickness h (s < h: the record's gap s - h < 0), so a vertex pressed into a creased sheet keeps a
 * plane on each facet too. The kept ones are then listed by increasing key. */
static void valley_records(const placed_triangle *tris, const nearest_pairs *near, double h, vertex_answer *ans)
{
  ans->nkept = 0;
  for (int a = 0; a < near->n && ans->nkept < PBNG_CONTACT_MAX_TRIANGLES; ++a) {
    const accepted_pair *A = &near->pair[a];
    int keep = a == 0 || A->gap - (tris[A->tri].sheet ? h : 0.0) < 0;
    for (int k = 0; k < ans->nkept && keep; ++k) keep = pbng_triangles_form_valley(tris[A->tri].x, A->n, tris[ans->kept[k].tri].x, ans->kept[k].n);
    if (keep) ans->kept[ans->nkept++] = *A;
  }
  for (int i = 1; i < ans->nkept; ++i) /* insertion sort by key */
    for (int j = i; j > 0 && tris[ans->kept[j].tri].key < tris[ans->kept[j - 1].tri].key; --j) {
      const accepted_pair tmp = ans->kept[j];
      ans->kept[j] = ans->kept[j - 1], ans->kept[j - 1] = tmp;
    }
}

/* One triangle from the broad phase: the box test, then the pair rules. Returns 1 when it passed the
 * box test (a candidate). */
static int candidate(const pbng_contact_detector *det, int32_t v, const double xv[3], const double nv[3], int point, const placed_triangle *tris,
                     int32_t t, nearest_pairs *near)
{
  if (!in_box(&tris[t], xv)) return 0;
  if (pair_allowed(det, v, &tris[t]))
    consider_triangle(xv, nv, point, det->opt.distance, tris[t].body == det->surf.body[det->surf.vert[v]], tris, t, near);
  return 1;
}

/* Vertex v's answer: the triangles listed in its cell's bucket and the large ones, and the number of
 * obstacles with phi < d. Adds the candidates tested to *candidates. Returns 1 for a vertex of sheets alone (a point,
 * vertex_normal), else 0. */
static int answer_vertex(const pbng_contact_detector *det, const double *x, const placed_triangle *tris, const pbng_box_hash *g, int32_t v,
                          vertex_answer *ans, int64_t *candidates)
{
  const double *xv = &x[3 * (int64_t)det->surf.vert[v]];
  double nv[3];
  int64_t n = 0;
  const int point = vertex_normal(&det->surf, x, v, nv) == 0;
  nearest_pairs near = {.n = 0};
  ans->nobstacles = 0;
  const uint64_t b = pbng_box_hash_bucket(g, pbng_box_hash_cell(g, xv[0]), pbng_box_hash_cell(g, xv[1]), pbng_box_hash_cell(g, xv[2]));
  for (int64_t k = g->start[b]; k < g->start[b + 1]; ++k) n += candidate(det, v, xv, nv, point, tris, g->item[k], &near);
  for (int32_t k = 0; k < g->nlarge; ++k) n += candidate(det, v, xv, nv, point, tris, g->large[k], &near);
  valley_records(tris, &near, det->opt.sheet_offset, ans);
  for (int o = 0; o < det->opt.nobstacles; ++o) {
    double q[3], nq[3];
    ans->nobstacles += pbng_obstacle_closest(&det->opt.obstacle[o], xv, q, nq) < det->opt.distance;
  }
  *candidates += n;
  return point;
}

/* ---- the swept rules: kept pairs and crossings (pbng_contact_detect_swept) ---- */

/* The index of the held triangle with this key, or -1 (held triangles are sorted by key). */
static int32_t held_index(const pbng_surface *s, int64_t key)
{
  int32_t lo = 0, hi = s->nheld - 1;
  while (lo <= hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (s->tri[mid].key == key) return mid;
    if (s->tri[mid].key < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static int compare_placed(const void *a, const void *b)
{
  const int64_t x = ((const placed_triangle *)a)->key, y = ((const placed_triangle *)b)->key;
  return (x > y) - (x < y);
}

/* The placed triangle with this key: held here, or among the fetched ones tri[f0 .. f0 + nf) (sorted by key); -1. */
static int32_t find_kept_triangle(const pbng_contact_detector *det, const placed_triangle *tri, int32_t f0, int32_t nf, int64_t key)
{
  const int32_t h = held_index(&det->surf, key);
  if (h >= 0) return h;
  int32_t lo = f0, hi = f0 + nf - 1;
  while (lo <= hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (tri[mid].key == key) return mid;
    if (tri[mid].key < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* Collective. The triangles of this rank's kept pairs that other ranks hold: every rank's wanted keys are gathered,
 * each holder sends those it holds. Appended to *tri after its n triangles (*nfetched of them), sorted by key. */
static PetscErrorCode fetch_kept_triangles(const pbng_contact_detector *det, int32_t nkeep, const pbng_contact_deep_pair *keep, placed_triangle **tri,
                                           int32_t n, int32_t *nfetched)
{
  const pbng_dmesh *dm = det->dm;
  const int size = dm->size;
  int64_t *want, *all = NULL;
  int nwant = 0, *wcount, *wdispl;

  PetscFunctionBeginUser;
  *nfetched = 0;
  PetscCall(PetscMalloc1(nkeep + 1, &want));
  for (int32_t k = 0; k < nkeep; ++k)
    if (held_index(&det->surf, keep[k].key) < 0) want[nwant++] = keep[k].key;
  qsort(want, (size_t)nwant, sizeof(int64_t), pbng_compare_int64);
  int u = 0;
  for (int k = 0; k < nwant; ++k)
    if (u == 0 || want[k] != want[u - 1]) want[u++] = want[k];
  nwant = u;
  PetscCall(PetscCalloc2(size, &wcount, size + 1, &wdispl));
  PetscCallMPI(MPI_Allgather(&nwant, 1, MPI_INT, wcount, 1, MPI_INT, dm->comm));
  for (int r = 0; r < size; ++r) wdispl[r + 1] = wdispl[r] + wcount[r];
  if (wdispl[size] > 0) {
    int32_t(*to)[2] = NULL;
    int64_t nto = 0, cap = 0;
    PetscCall(PetscMalloc1(wdispl[size], &all));
    PetscCallMPI(MPI_Allgatherv(want, nwant, MPI_INT64_T, all, wcount, wdispl, MPI_INT64_T, dm->comm));
    for (int r = 0; r < size; ++r)
      for (int k = wdispl[r]; k < wdispl[r + 1] && r != dm->rank; ++k) {
        const int32_t h = held_index(&det->surf, all[k]);
        if (h >= 0) PetscCall(list_send(&to, &nto, &cap, r, h));
      }
    PetscCall(send_held_triangles(det, nto, (const int32_t(*)[2])to, tri, n, nfetched));
    qsort(&(*tri)[n], (size_t)*nfetched, sizeof(placed_triangle), compare_placed);
    PetscCall(PetscFree(to));
    PetscCall(PetscFree(all));
  }
  PetscCall(PetscFree2(wcount, wdispl));
  PetscCall(PetscFree(want));
  PetscFunctionReturn(0);
}

/* Whether a deep pair is taken: the vertex behind the triangle (gap s < 0 at its closest point, squared distance
 * dist2) and not more beside it than behind it or d (contact_detect.h). Measured: allowing a triangle's longest edge
 * beside it as well took the paper-size arm's deepest vertex at 90 degrees from 4.7 to 1.1 mm, but at -scale 1 it
 * paired 90 vertices at once in frame 7 (50 cycles instead of 3) and frame 9 diverged (docs/muscles.md). */
static int deep_condition(double s, double dist2, double d) { return s < 0 && dist2 - s * s <= fmax(s * s, d * d); }

/* Whether the answer has a pair with a triangle of `body`. */
static int answer_has_body(const placed_triangle *tris, const vertex_answer *ans, int64_t body)
{
  for (int k = 0; k < ans->nkept; ++k)
    if (tris[ans->kept[k].tri].body == body) return 1;
  return 0;
}

/* Whether triangle T may give vertex v a deep pair: a boundary face (not a sheet's side) of another body, allowed for
 * v (pair_allowed), of a body v has no pair with yet, with room for one more. */
static int deep_allowed(const pbng_contact_detector *det, int32_t v, const placed_triangle *tris, const placed_triangle *T, const vertex_answer *ans)
{
  return ans->nkept < PBNG_CONTACT_MAX_TRIANGLES && !T->sheet && T->body != det->surf.body[det->surf.vert[v]] && pair_allowed(det, v, T) &&
         !answer_has_body(tris, ans, T->body);
}

/* Triangle t as a deep pair (kind 1 crossing, 2 kept) of the vertex at xv, when deep_condition holds; returns 1 if
 * added to ans. */
static int add_deep_pair(const placed_triangle *tris, int32_t t, const double xv[3], double d, int kind, vertex_answer *ans)
{
  accepted_pair q = {.tri = t, .deep = kind};
  double r[3];
  q.dist2 = closest_on_triangle(&tris[t], xv, INFINITY, q.w, q.p, q.n);
  if (!(q.dist2 >= 0)) return 0;
  for (int k = 0; k < 3; ++k) r[k] = xv[k] - q.p[k];
  q.gap = vec3_dot(r, q.n);
  if (!deep_condition(q.gap, q.dist2, d)) return 0;
  ans->kept[ans->nkept++] = q;
  return 1;
}

/* Whether the boxes (lo, hi) and T's swept box meet. */
static int meets_swept_box(const placed_triangle *T, const double lo[3], const double hi[3])
{
  for (int k = 0; k < 3; ++k)
    if (T->shi[k] < lo[k] || T->slo[k] > hi[k]) return 0;
  return 1;
}

/* The crossing test of vertex v (from xpv to xv) against triangle t: keeps the first crossing (*best, its time
 * *tbest; ties by the lower key). Returns 1 when the pair was a candidate (the swept boxes meet). */
static int crossing_candidate(const pbng_contact_detector *det, int32_t v, const double xv[3], const double xpv[3], const double lo[3], const double hi[3],
                              const placed_triangle *tris, int32_t t, const vertex_answer *ans, int32_t *best, double *tbest)
{
  const placed_triangle *T = &tris[t];
  if (!meets_swept_box(T, lo, hi) || !deep_allowed(det, v, tris, T, ans)) return 0;
  double y[4][3], dy[4][3], tau;
  for (int k = 0; k < 3; ++k) {
    y[0][k] = xpv[k], dy[0][k] = xv[k] - xpv[k];
    for (int a = 0; a < 3; ++a) y[1 + a][k] = T->xp[a][k], dy[1 + a][k] = T->x[a][k] - T->xp[a][k];
  }
  if (pbng_point_triangle_crossing(y, dy, &tau) && (*best < 0 || tau < *tbest || (tau == *tbest && T->key < tris[*best].key))) *best = t, *tbest = tau;
  return 1;
}

/* The triangle vertex v passed through first between its previous position xpv and xv, among the swept hash's
 * candidates (its path's cells; every triangle when the path covers more than HASH_MAX_CELLS cells); -1 for none. Adds
 * the candidates to *candidates. */
static int32_t first_crossing(const pbng_contact_detector *det, int32_t v, const double xv[3], const double xpv[3], const placed_triangle *tris, int32_t ntri,
                              const pbng_box_hash *gs, const vertex_answer *ans, int64_t *candidates)
{
  double box[6], tbest = 2;
  int64_t c[6], n = 0;
  int32_t best = -1;
  for (int k = 0; k < 3; ++k) box[k] = fmin(xv[k], xpv[k]), box[3 + k] = fmax(xv[k], xpv[k]);
  if (pbng_box_hash_cells(gs, box, c) > HASH_MAX_CELLS) {
    for (int32_t t = 0; t < ntri; ++t) n += crossing_candidate(det, v, xv, xpv, box, box + 3, tris, t, ans, &best, &tbest);
  } else {
    for (int64_t k = c[4]; k <= c[5]; ++k)
      for (int64_t j = c[2]; j <= c[3]; ++j)
        for (int64_t i = c[0]; i <= c[1]; ++i) {
          const uint64_t b = pbng_box_hash_bucket(gs, i, j, k);
          for (int64_t e = gs->start[b]; e < gs->start[b + 1]; ++e) n += crossing_candidate(det, v, xv, xpv, box, box + 3, tris, gs->item[e], ans, &best, &tbest);
        }
    for (int32_t e = 0; e < gs->nlarge; ++e) n += crossing_candidate(det, v, xv, xpv, box, box + 3, tris, gs->large[e], ans, &best, &tbest);
  }
  *candidates += n;
  return best;
}

/* The swept context of one detection. */
typedef struct {
  const double *x_prev;                /* NULL: no crossings */
  const pbng_box_hash *gs;             /* the swept hash (with x_prev) */
  int32_t ntri;                        /* triangles held, halo (the crossing candidates) */
  int32_t fetched0, nfetched;          /* the kept pairs' fetched triangles, tri[fetched0 .. + nfetched) */
  int32_t nkeep;
  const pbng_contact_deep_pair *keep;
} swept_context;

static int compare_deep_pairs(const pbng_contact_deep_pair *a, int64_t gid)
{
  return (a->vertex_gid > gid) - (a->vertex_gid < gid);
}

/* Vertex v's deep pairs (contact_detect.h): its kept pairs first, then its first crossing; the answer re-sorted by
 * key. Adds the swept candidates, crossings and kept pairs to the counters. */
static void swept_answer(const pbng_contact_detector *det, const double *x, const placed_triangle *tris, const swept_context *sw, int32_t v,
                         vertex_answer *ans, int64_t count[3])
{
  const int32_t i = det->surf.vert[v];
  const int64_t gid = det->dm->global_node[i];
  const double *xv = &x[3 * (int64_t)i];
  int32_t lo = 0, hi = sw->nkeep;
  while (lo < hi) { /* the first kept pair of v */
    const int32_t mid = lo + (hi - lo) / 2;
    if (compare_deep_pairs(&sw->keep[mid], gid) < 0) lo = mid + 1;
    else hi = mid;
  }
  for (int32_t k = lo; k < sw->nkeep && sw->keep[k].vertex_gid == gid; ++k) {
    const int32_t t = find_kept_triangle(det, tris, sw->fetched0, sw->nfetched, sw->keep[k].key);
    if (t >= 0 && deep_allowed(det, v, tris, &tris[t], ans)) count[2] += add_deep_pair(tris, t, xv, det->opt.distance, 2, ans);
  }
  if (sw->x_prev && ans->nkept < PBNG_CONTACT_MAX_TRIANGLES) {
    const int32_t t = first_crossing(det, v, xv, &sw->x_prev[3 * (int64_t)i], tris, sw->ntri, sw->gs, ans, &count[0]);
    if (t >= 0) count[1] += add_deep_pair(tris, t, xv, det->opt.distance, 1, ans);
  }
  for (int a = 1; a < ans->nkept; ++a) /* insertion sort by key */
    for (int b = a; b > 0 && tris[ans->kept[b].tri].key < tris[ans->kept[b - 1].tri].key; --b) {
      const accepted_pair tmp = ans->kept[b];
      ans->kept[b] = ans->kept[b - 1], ans->kept[b - 1] = tmp;
    }
}

/* ---- records ---- */

static void triangle_record(const pbng_contact_detector *det, int32_t i, const placed_triangle *T, const accepted_pair *a, pbng_contact_record *r)
{
  memset(r, 0, sizeof(*r));
  r->kind = PBNG_CONTACT_TRIANGLE;
  r->vertex = i, r->vertex_gid = det->dm->global_node[i], r->key = T->key;
  for (int c = 0; c < 3; ++c) {
    r->tri_gid[c] = T->gid[c], r->tri_owner[c] = T->owner[c];
    for (int k = 0; k < 3; ++k) r->tri_x[c][k] = T->x[c][k];
    r->w[c] = a->w[c], r->point[c] = a->p[c], r->normal[c] = a->n[c];
  }
  r->offset = T->sheet ? det->opt.sheet_offset : 0;
  r->gap = a->gap - r->offset;
  r->deep = a->deep != 0;
}

/* The records of obstacles with phi < d at x_v, by obstacle index; returns how many. */
static int obstacle_records(const pbng_contact_detector *det, int32_t i, const double xv[3], pbng_contact_record *r)
{
  int n = 0;
  for (int o = 0; o < det->opt.nobstacles; ++o) {
    double q[3], nq[3];
    const double phi = pbng_obstacle_closest(&det->opt.obstacle[o], xv, q, nq);
    if (!(phi < det->opt.distance)) continue;
    memset(&r[n], 0, sizeof(r[n]));
    r[n].kind = PBNG_CONTACT_OBSTACLE;
    r[n].vertex = i, r[n].vertex_gid = det->dm->global_node[i], r[n].key = o;
    for (int c = 0; c < 3; ++c) r[n].tri_gid[c] = -1, r[n].tri_owner[c] = -1, r[n].point[c] = q[c], r[n].normal[c] = nq[c];
    r[n++].gap = phi;
  }
  return n;
}

PetscErrorCode pbng_contact_detect(pbng_contact_detector *det, const double *x, int32_t *n, pbng_contact_record **rec)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_contact_detect_swept(det, x, NULL, 0, NULL, n, rec));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_detect_swept(pbng_contact_detector *det, const double *x, const double *x_prev, int32_t nkeep,
                                         const pbng_contact_deep_pair *keep, int32_t *n, pbng_contact_record **rec)
{
  const pbng_surface *s = &det->surf;
  const double t0 = MPI_Wtime();
  placed_triangle *tris;
  int32_t nhalo = 0, nfetched = 0;
  pbng_box_hash g, gs;
  vertex_answer *ans;
  int32_t *first;
  int64_t candidates = 0, c0 = 0, c1 = 0, c2 = 0;

  PetscFunctionBeginUser;
  PetscCall(check_positions(det, x));
  if (x_prev) PetscCall(check_positions(det, x_prev));
  PetscCall(PetscMalloc1(s->nheld + 1, &tris));
  place_held_triangles(det, x, x_prev, tris);
  PetscCall(exchange_surface_halo(det, x, x_prev, &tris, &nhalo));
  const int32_t ntri = s->nheld + nhalo;
  PetscCall(fetch_kept_triangles(det, nkeep, keep, &tris, ntri, &nfetched));
  PetscCall(spatial_hash_build(tris, ntri, 0, &g));
  if (x_prev) PetscCall(spatial_hash_build(tris, ntri, 1, &gs));
  const swept_context sw = {.x_prev = x_prev, .gs = x_prev ? &gs : NULL, .ntri = ntri, .fetched0 = ntri, .nfetched = nfetched, .nkeep = nkeep, .keep = keep};
  const int swept = x_prev || nkeep > 0;
  PetscCall(PetscMalloc2(s->nvert + 1, &ans, s->nvert + 1, &first));
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : candidates, c0, c1, c2)
  for (int32_t v = 0; v < s->nvert; ++v) {
    int64_t count[3] = {0, 0, 0};
    const int point = answer_vertex(det, x, tris, &g, v, &ans[v], &candidates);
    if (swept && !point) swept_answer(det, x, tris, &sw, v, &ans[v], count);
    c0 += count[0], c1 += count[1], c2 += count[2];
  }
  first[0] = 0;
  for (int32_t v = 0; v < s->nvert; ++v) first[v + 1] = first[v] + ans[v].nkept + ans[v].nobstacles;
  PetscCall(PetscMalloc1(first[s->nvert] + 1, rec));
#pragma omp parallel for schedule(static)
  for (int32_t v = 0; v < s->nvert; ++v) {
    pbng_contact_record *r = &(*rec)[first[v]];
    const int32_t i = s->vert[v];
    for (int k = 0; k < ans[v].nkept; ++k) {
      const accepted_pair *a = &ans[v].kept[k];
      triangle_record(det, i, &tris[a->tri], a, r++);
    }
    obstacle_records(det, i, &x[3 * (int64_t)i], r);
  }
  *n = first[s->nvert];
  det->stats.surface_vertices = s->nvert, det->stats.surface_triangles = s->nheld, det->stats.halo_triangles = nhalo;
  det->stats.candidates = candidates;
  det->stats.swept_candidates = c0, det->stats.crossings = c1, det->stats.kept = c2;
  PetscCall(PetscFree2(ans, first));
  PetscCall(pbng_box_hash_destroy(&g));
  if (x_prev) PetscCall(pbng_box_hash_destroy(&gs));
  PetscCall(PetscFree(tris));
  det->stats.seconds = MPI_Wtime() - t0;
  PetscFunctionReturn(0);
}

/* ---- set-up ---- */

static PetscErrorCode check_options(MPI_Comm comm, const pbng_contact_detect_options *opt)
{
  PetscFunctionBeginUser;
  PetscCheck(opt->distance > 0 && isfinite(opt->distance), comm, PETSC_ERR_ARG_OUTOFRANGE, "contact detection: the distance must be positive (got %g)",
             opt->distance);
  PetscCheck(opt->nobstacles >= 0 && opt->nobstacles <= PBNG_MAX_OBSTACLES, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "contact detection: %d obstacles (at most %d)", opt->nobstacles, PBNG_MAX_OBSTACLES);
  for (int o = 0; o < opt->nobstacles; ++o)
    PetscCheck(opt->obstacle[o].kind >= 0 && opt->obstacle[o].kind < PBNG_OBSTACLE_KIND_COUNT, comm, PETSC_ERR_ARG_OUTOFRANGE,
               "contact detection: obstacle %d has an unknown kind", o);
  PetscFunctionReturn(0);
}

/* Marks local node i as bound to `body` (up to PBNG_CONTACT_BOUND_BODIES bodies; further ones are not kept). */
static void add_bound_body(int64_t *bound, int32_t i, int64_t body)
{
  int64_t *slot = &bound[PBNG_CONTACT_BOUND_BODIES * i];
  for (int k = 0; k < PBNG_CONTACT_BOUND_BODIES; ++k) {
    if (slot[k] == body) return;
    if (slot[k] < 0) {
      slot[k] = body;
      return;
    }
  }
}

/* The bodies each local node is bound to: a weak constraint joins the nodes of its two sides (the signs of its
 * weights, Eq. 18-19), and a node on one side is bound to the bodies of the other side's nodes when they are of another
 * body. Every constraint with an owned node is held here, so an owned vertex's list is complete. */
static PetscErrorCode bound_to_bodies(const pbng_dmesh *dm, const pbng_surface *s, int64_t **bound)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(PBNG_CONTACT_BOUND_BODIES * (size_t)dm->nlocal + 1, bound));
  for (int64_t k = 0; k < PBNG_CONTACT_BOUND_BODIES * (int64_t)dm->nlocal; ++k) (*bound)[k] = -1;
  for (int32_t c = 0; c < dm->nweak; ++c) {
    const pbng_weak_constraint *w = &dm->weak[c];
    for (int a = 0; a < w->nnodes; ++a)
      for (int b = 0; b < w->nnodes; ++b) {
        const int32_t i = (int32_t)w->node[a], j = (int32_t)w->node[b];
        if ((w->a[a] > 0) != (w->a[b] > 0) && s->body[i] != s->body[j]) add_bound_body(*bound, i, s->body[j]);
      }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_detector_create(const pbng_dmesh *dm, const pbng_contact_detect_options *opt, pbng_contact_detector **det)
{
  pbng_contact_detector *D;

  PetscFunctionBeginUser;
  PetscCall(check_options(dm->comm, opt));
  PetscCall(PetscNew(&D));
  D->dm = dm, D->opt = *opt;
  PetscCall(pbng_surface_create(dm, &D->surf));
  PetscCall(bound_to_bodies(dm, &D->surf, &D->bound));
  D->stats.surface_vertices = D->surf.nvert, D->stats.surface_triangles = D->surf.nheld;
  *det = D;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_detector_destroy(pbng_contact_detector **det)
{
  PetscFunctionBeginUser;
  if (!*det) PetscFunctionReturn(0);
  PetscCall(pbng_surface_destroy(&(*det)->surf));
  PetscCall(PetscFree((*det)->bound));
  PetscCall(PetscFree(*det));
  PetscFunctionReturn(0);
}

const uint8_t *pbng_contact_surface_nodes(const pbng_contact_detector *det) { return det->surf.is_vertex; }

const pbng_surface *pbng_contact_detector_surface(const pbng_contact_detector *det) { return &det->surf; }

void pbng_contact_detect_get_stats(const pbng_contact_detector *det, pbng_contact_detect_stats *st) { *st = det->stats; }
