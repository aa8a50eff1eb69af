#include "parallel/locate.h"
#include "core/csr.h"
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "core/locate.h"
#include "parallel/halo.h"

/* What a rank's owned elements span: the box of their rest positions, their longest edge, the most
 * weights one location gives and the highest order of their shape functions. */
typedef struct {
  double box[6]; /* lo, hi */
  double hmax;
  int width;
  int order; /* the highest polynomial order of a located element: 1 when each lies in its nodes' box */
} rank_extent;

/* A uniform grid of cells over the owned elements' box: cell -> the elements whose bounding box, grown by
 * `pad` (1e-12 of the longest edge), overlaps it (CSR; an element is listed in every cell it overlaps). An
 * element whose padded box contains q is then listed in q's cell, and one whose box lies within a distance
 * g of q along every axis in a cell at most floor(g / h) + 1 cells from q's along each axis. */
typedef struct {
  double lo[3], h; /* origin and cell edge */
  double pad;
  int n[3];
  int32_t *start;  /* [ncells + 1] */
  int32_t *elem;   /* [entries] local element indices, by cell */
} bucket_grid;

/* The elements searched: a rank's owned elements (distributed mesh) or a whole serial mesh. */
typedef struct {
  MPI_Comm comm;
  int size;
  int32_t nelems;
  int nen;                         /* nodes per element row (core/element.h: padded when kinds mix) */
  const pbng_element_type *etype;  /* the mesh's kind, or NULL when kinds mix (then kind[]) */
  const uint8_t *kind;
  const int32_t *elems;            /* [nelems][nen] */
  const double *X;                 /* rest positions by node */
  const int64_t *global_elem;      /* [nelems], or NULL: the element's index */
  const int64_t *node_value;       /* by node, or NULL: the node's index */
  pbng_locate_weights weights;     /* the element's own nodes, or its corners only */
} element_view;

struct pbng_locator {
  element_view mesh;
  double radius;
  rank_extent mine, *all; /* this rank's, every rank's [size] */
  int width;              /* the most weights over every rank */
  bucket_grid grid;
  double *box;            /* [nelems][6]: each element's bounding box (lo, hi), read by every candidate test */
};

static int64_t global_elem(const element_view *m, int32_t e) { return m->global_elem ? m->global_elem[e] : e; }
static int64_t node_value(const element_view *m, int32_t e, int a)
{
  const int32_t v = m->elems[m->nen * (int64_t)e + a];
  return m->node_value ? m->node_value[v] : v;
}

/* The element as located: its kind (its corners' linear kind with PBNG_LOCATE_CORNERS) and the rest
 * positions of those nodes, X[t->nodes] (the corners are a row's first nodes). */
static const pbng_element_type *located_element(const element_view *m, int32_t e, double X[PBNG_MAX_ELEMENT_NODES][3])
{
  const pbng_element_type *t = pbng_row_type(m->etype, m->kind, e);
  if (m->weights == PBNG_LOCATE_CORNERS) t = pbng_element_corner_type(t);
  for (int a = 0; a < t->nodes; ++a)
    for (int k = 0; k < 3; ++k) X[a][k] = m->X[3 * (int64_t)m->elems[m->nen * (int64_t)e + a] + k];
  return t;
}

/* Whether element e takes part in location: not a bending stencil (bend4 has no interpolation; its
 * triangles are the mesh's tri3 rows, docs/sheets_multilevel.md). */
static int locatable(const element_view *m, int32_t e) { return pbng_row_type(m->etype, m->kind, e)->shape != PBNG_SHAPE_STENCIL; }

static void element_box(const pbng_element_type *t, const double (*X)[3], double lo[3], double hi[3])
{
  for (int k = 0; k < 3; ++k) lo[k] = hi[k] = X[0][k];
  for (int a = 1; a < t->nodes; ++a)
    for (int k = 0; k < 3; ++k) lo[k] = X[a][k] < lo[k] ? X[a][k] : lo[k], hi[k] = X[a][k] > hi[k] ? X[a][k] : hi[k]; /* rest positions: finite */
}

/* Every locatable element's bounding box, box[6 e .. 6 e + 5] = lo, hi (the others' are left unset). */
static void element_boxes(const element_view *m, double *box)
{
#pragma omp parallel for schedule(static)
  for (int32_t e = 0; e < m->nelems; ++e) {
    double X[PBNG_MAX_ELEMENT_NODES][3];
    if (!locatable(m, e)) continue;
    element_box(located_element(m, e, X), (const double(*)[3])X, &box[6 * (int64_t)e], &box[6 * (int64_t)e + 3]);
  }
}

static rank_extent owned_extent(const element_view *m)
{
  rank_extent r = {{INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY}, 0.0, 0, 0};
  for (int32_t e = 0; e < m->nelems; ++e) {
    double X[PBNG_MAX_ELEMENT_NODES][3], lo[3], hi[3];
    if (!locatable(m, e)) continue;
    const pbng_element_type *t = located_element(m, e, X);
    element_box(t, X, lo, hi);
    for (int k = 0; k < 3; ++k)
      r.box[k] = fmin(r.box[k], lo[k]), r.box[3 + k] = fmax(r.box[3 + k], hi[k]);
    r.hmax = fmax(r.hmax, pbng_element_longest_edge(t, X));
    r.width = t->nodes > r.width ? t->nodes : r.width;
    r.order = t->order > r.order ? t->order : r.order;
  }
  return r;
}

static int cell_index(const bucket_grid *g, double x, int k)
{
  const double c = floor((x - g->lo[k]) / g->h);
  return c < 0 ? 0 : (c >= g->n[k] ? g->n[k] - 1 : (int)c);
}

static int64_t cell_of(const bucket_grid *g, int i, int j, int k) { return i + (int64_t)g->n[0] * (j + (int64_t)g->n[1] * k); }

/* The cells element e's padded box overlaps: [r0..r1] x [r2..r3] x [r4..r5] (box[]: the element boxes). */
static void element_cells(const bucket_grid *g, const double *box, int32_t e, int r[6])
{
  const double *lo = &box[6 * (int64_t)e], *hi = lo + 3;
  for (int k = 0; k < 3; ++k) r[2 * k] = cell_index(g, lo[k] - g->pad, k), r[2 * k + 1] = cell_index(g, hi[k] + g->pad, k);
}

/* About two elements per cell on average; each locatable element listed in every cell its padded box overlaps
 * (box[]: the element boxes). The cell edge comes from the box's measure over its axes of non-negligible extent
 * (a flat sheet's area), at least a 1000th of the box's longest side, so that the cells cover the box. */
static PetscErrorCode bucket_grid_build(const element_view *m, const rank_extent *ext, const double *box, bucket_grid *g)
{
  int32_t ne = 0;
  int64_t entries = 0;

  PetscFunctionBeginUser;
  memset(g, 0, sizeof(*g));
  for (int32_t e = 0; e < m->nelems; ++e) ne += locatable(m, e);
  double L[3], vol = 1.0;
  int dims = 0;
  for (int k = 0; k < 3; ++k) L[k] = ne > 0 ? fmax(ext->box[3 + k] - ext->box[k], 1e-300) : 1.0;
  const double Lmax = fmax(L[0], fmax(L[1], L[2]));
  for (int k = 0; k < 3; ++k)
    if (L[k] > 1e-6 * Lmax) vol *= L[k], ++dims;
  g->h = fmax(pow(2.0 * vol / (ne > 0 ? ne : 1), 1.0 / dims), 1e-3 * Lmax);
  g->pad = 1e-12 * ext->hmax;
  for (int k = 0; k < 3; ++k) {
    g->lo[k] = ne > 0 ? ext->box[k] : 0.0;
    g->n[k] = (int)fmax(fmin(ceil(L[k] / g->h), 1024.0), 1.0);
  }
  const int64_t ncells = (int64_t)g->n[0] * g->n[1] * g->n[2]; /* at most 1024^3 */
  for (int32_t e = 0; e < m->nelems; ++e) {
    int r[6];
    if (!locatable(m, e)) continue;
    element_cells(g, box, e, r);
    entries += (int64_t)(r[1] - r[0] + 1) * (r[3] - r[2] + 1) * (r[5] - r[4] + 1);
  }
  PetscCheck(entries < INT32_MAX && ncells < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "point location: %" PRId64 " element-cell entries (at most 2^31 - 1)",
             entries);
  int32_t *cell, *owner, *pair;
  PetscCall(PetscMalloc2((size_t)entries + 1, &cell, (size_t)entries + 1, &owner));
  int64_t k = 0;
  for (int32_t e = 0; e < m->nelems; ++e) {
    int r[6];
    if (!locatable(m, e)) continue;
    element_cells(g, box, e, r);
    for (int kk = r[4]; kk <= r[5]; ++kk)
      for (int jj = r[2]; jj <= r[3]; ++jj)
        for (int ii = r[0]; ii <= r[1]; ++ii) cell[k] = (int32_t)cell_of(g, ii, jj, kk), owner[k++] = e;
  }
  PetscErrorCode ierr = pbng_csr_by_key32(entries, cell, 1, (int32_t)ncells, &g->start, &pair); /* the entries by cell, each cell's by element */
  if (!ierr)
    for (int64_t j = 0; j < entries; ++j) pair[j] = owner[pair[j]];
  g->elem = pair;
  PetscCall(PetscFree2(cell, owner));
  PetscCall(ierr);
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

/* Element e's answer for q, if e lies within `radius` times its longest edge of q: 1, else 0. */
static int element_answer(const pbng_locator *L, int32_t e, const double q[3], pbng_point_location *cand)
{
  const element_view *m = &L->mesh;
  double X[PBNG_MAX_ELEMENT_NODES][3];
  const pbng_element_type *t = located_element(m, e, X);
  cand->elem = global_elem(m, e);
  cand->nodes = t->nodes;
  cand->size = pbng_element_longest_edge(t, X);
  cand->distance = pbng_element_point_weights(t, (const double(*)[3])X, q, cand->w);
  if (cand->distance < 0 || cand->distance > L->radius * cand->size) return 0;
  for (int a = 0; a < t->nodes; ++a) cand->value[a] = node_value(m, e, a);
  return 1;
}

/* Distance from q to element e's bounding box along its farthest axis (a lower bound of its distance). */
static double box_gap(const pbng_locator *L, int32_t e, const double q[3])
{
  const double *lo = &L->box[6 * (int64_t)e], *hi = lo + 3;
  double gap = 0;
  for (int k = 0; k < 3; ++k) gap = fmax(gap, fmax(lo[k] - q[k], q[k] - hi[k]));
  return gap;
}

/* Whether q lies in the closed element e (pbng_element_contains_point), looked at only when q lies
 * within tol of its bounding box. */
static int element_contains(const pbng_locator *L, int32_t e, const double q[3], double tol)
{
  const double *lo = &L->box[6 * (int64_t)e], *hi = lo + 3;
  for (int k = 0; k < 3; ++k)
    if (lo[k] - q[k] > tol || q[k] - hi[k] > tol) return 0;
  double X[PBNG_MAX_ELEMENT_NODES][3];
  const pbng_element_type *t = located_element(&L->mesh, e, X);
  return pbng_element_contains_point(t, (const double(*)[3])X, q);
}

/* A bound past which a computed distance cannot reach: the distances of pbng_element_point_weights may fall an ulp or
 * so below the exact one (and below a box gap; a point on a face can be at distance 0 outside the box by an ulp), so
 * that the searches prune only beyond this margin (relative, and 1e-10 of the longest edge) and keep every answer the
 * exhaustive search gives, bit for bit. */
static double beyond_rounding(const pbng_locator *L, double distance) { return distance * (1 + 1e-10) + 1e-10 * L->mine.hmax; }

/* The better answer than *best among the elements listed in cell (i, j, k). Cheap tests first: an element whose
 * box lies farther from q than `far` cannot answer; at order 1 (each element in its nodes' box, so that its distance
 * is at least its box's) neither can one whose box lies farther than the best distance found or than the radius
 * times the box's diagonal (>= its longest edge). */
static void scan_cell(const pbng_locator *L, int i, int j, int k, const double q[3], double far, pbng_point_location *best)
{
  const bucket_grid *g = &L->grid;
  const int64_t c = cell_of(g, i, j, k);
  for (int32_t p = g->start[c]; p < g->start[c + 1]; ++p) {
    const int32_t e = g->elem[p];
    const double gap = box_gap(L, e, q), *lo = &L->box[6 * (int64_t)e], *hi = lo + 3;
    if (gap > far) continue;
    if (L->mine.order <= 1 && ((best->elem >= 0 && gap > beyond_rounding(L, best->distance)) ||
                               gap > beyond_rounding(L, L->radius * sqrt(PetscSqr(hi[0] - lo[0]) + PetscSqr(hi[1] - lo[1]) + PetscSqr(hi[2] - lo[2])))))
      continue;
    pbng_point_location cand;
    if (element_answer(L, e, q, &cand) && better(&cand, best)) *best = cand;
  }
}

/* The nearest element within the radius (ties by the lower global id) when none contains q: the cells
 * ring by ring around q's (Chebyshev rings of cells), up to `far` = radius x the longest edge. An element
 * first met in ring r lies farther than (r - 1) h from q along some axis, so the search ends at the ring
 * beyond the best distance found when every element lies in its nodes' box (order 1: shape functions
 * >= 0; higher orders may bulge out of it and search the whole window). */
static void nearest_element(const pbng_locator *L, const double q[3], pbng_point_location *best)
{
  const bucket_grid *g = &L->grid;
  const double far = L->radius * L->mine.hmax;
  int c[3], r[6];

  for (int k = 0; k < 3; ++k) c[k] = cell_index(g, q[k], k), r[2 * k] = cell_index(g, q[k] - far, k), r[2 * k + 1] = cell_index(g, q[k] + far, k);
  int rings = 0;
  for (int k = 0; k < 3; ++k) rings = PetscMax(rings, PetscMax(c[k] - r[2 * k], r[2 * k + 1] - c[k]));
  for (int ring = 0; ring <= rings; ++ring) {
    if (L->mine.order <= 1 && best->elem >= 0 && (ring - 1) * g->h > beyond_rounding(L, best->distance)) break;
    for (int kk = PetscMax(r[4], c[2] - ring); kk <= PetscMin(r[5], c[2] + ring); ++kk)
      for (int jj = PetscMax(r[2], c[1] - ring); jj <= PetscMin(r[3], c[1] + ring); ++jj) {
        if (abs(kk - c[2]) == ring || abs(jj - c[1]) == ring) { /* the whole row lies on the ring */
          for (int ii = PetscMax(r[0], c[0] - ring); ii <= PetscMin(r[1], c[0] + ring); ++ii) scan_cell(L, ii, jj, kk, q, far, best);
          continue;
        }
        if (c[0] - ring >= r[0]) scan_cell(L, c[0] - ring, jj, kk, q, far, best); /* else its two ends (ring >= 1 here) */
        if (c[0] + ring <= r[1]) scan_cell(L, c[0] + ring, jj, kk, q, far, best);
      }
  }
}

/* Whether e is a linear tetrahedron that q lies clearly outside of: a barycentric coordinate below -1e-6, a distance
 * of a millionth of a height from a face, which no rounding of the exact distance's computation brings to 0 (the
 * candidates of a point's cell are mostly such: their closest points on four triangles cost most of the search). */
static int clearly_outside_tet(const pbng_locator *L, int32_t e, const double q[3])
{
  const element_view *m = &L->mesh;
  if (pbng_row_type(m->etype, m->kind, e)->kind != PBNG_ELEMENT_TET4) return 0;
  const double *X[4];
  double w[4];
  for (int a = 0; a < 4; ++a) X[a] = &m->X[3 * (int64_t)m->elems[m->nen * (int64_t)e + a]];
  if (pbng_tet_barycentric(X, q, w) != 0) return 0;
  return w[0] < -1e-6 || w[1] < -1e-6 || w[2] < -1e-6 || w[3] < -1e-6;
}

/* The rank's element at distance 0 from q with the lowest global id (elem -1: none). An element containing q
 * (pbng_element_contains_point) is at distance 0, as is one whose weights put q on its boundary (a computed distance
 * of 0 with the predicate saying outside by round-off): both are listed in q's cell. All are looked at, the lowest
 * global id wins: before, a containing element ended the search, so that a rank with one element containing q and
 * another at distance 0 could answer with a higher id than a rank holding only the latter, and the multilevel
 * injection took a different element on 1 and 2 ranks where bodies touch. */
static void containing_element(const pbng_locator *L, const double q[3], pbng_point_location *best)
{
  const bucket_grid *g = &L->grid;

  memset(best, 0, sizeof(*best));
  best->elem = -1;
  const int64_t c = cell_of(g, cell_index(g, q[0], 0), cell_index(g, q[1], 1), cell_index(g, q[2], 2));
  for (int32_t k = g->start[c]; k < g->start[c + 1]; ++k) {
    const int32_t e = g->elem[k];
    pbng_point_location cand;
    if (box_gap(L, e, q) > g->pad || clearly_outside_tet(L, e, q) || !element_answer(L, e, q, &cand)) continue;
    if (cand.distance > 0 && element_contains(L, e, q, g->pad)) cand.distance = 0;
    if (cand.distance == 0 && better(&cand, best)) *best = cand;
  }
}

/* The rank's nearest element within the radius (ties by the lower global id; elem -1: none), asked for a point that
 * no element of any rank contains. */
static void nearest_answer(const pbng_locator *L, const double q[3], pbng_point_location *best)
{
  memset(best, 0, sizeof(*best));
  best->elem = -1;
  nearest_element(L, q, best);
}

static PetscErrorCode locator_create(const element_view *view, double radius, pbng_locator **locator)
{
  pbng_locator *L;

  PetscFunctionBeginUser;
  PetscCall(PetscNew(&L));
  L->mesh = *view, L->radius = radius;
  L->mine = owned_extent(&L->mesh);
  PetscCall(PetscMalloc1(view->size, &L->all));
  PetscCallMPI(MPI_Allgather(&L->mine, (int)sizeof(rank_extent), MPI_BYTE, L->all, (int)sizeof(rank_extent), MPI_BYTE, view->comm));
  for (int r = 0; r < view->size; ++r) L->width = L->all[r].width > L->width ? L->all[r].width : L->width;
  PetscCall(PetscMalloc1(6 * (size_t)view->nelems + 1, &L->box));
  element_boxes(&L->mesh, L->box);
  PetscCall(bucket_grid_build(&L->mesh, &L->mine, L->box, &L->grid));
  *locator = L;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_locator_create(const pbng_dmesh *mesh, const int64_t *node_value, double radius, pbng_locate_weights weights,
                                   pbng_locator **locator)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_locator_create_rows(mesh->comm, mesh->nowned_elems, mesh->nen, mesh->etype, mesh->kind, mesh->elems, mesh->X, mesh->global_elem,
                                     node_value, radius, weights, locator));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_locator_create_rows(MPI_Comm comm, int32_t nelems, int nen, const pbng_element_type *etype, const uint8_t *kind, const int32_t *elems,
                                        const double *X, const int64_t *global_elem, const int64_t *node_value, double radius,
                                        pbng_locate_weights weights, pbng_locator **locator)
{
  int size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  const element_view view = {comm, size, nelems, nen, etype, kind, elems, X, global_elem, node_value, weights};
  PetscCall(locator_create(&view, radius, locator));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_locator_create_serial(const pbng_mesh *mesh, double radius, pbng_locate_weights weights, pbng_locator **locator)
{
  const element_view view = {PETSC_COMM_SELF, 1, (int32_t)mesh->nelems, mesh->nen, mesh->etype, mesh->kind, mesh->elems, mesh->X, NULL, NULL, weights};

  PetscFunctionBeginUser;
  PetscCheck(mesh->nelems < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "point location: %s has %" PRId64 " elements (at most 2^31 - 1)", mesh->source,
             mesh->nelems);
  PetscCall(locator_create(&view, radius, locator));
  PetscFunctionReturn(0);
}

int pbng_locator_width(const pbng_locator *locator) { return locator->width; }

PetscErrorCode pbng_locator_destroy(pbng_locator **locator)
{
  pbng_locator *L = *locator;

  PetscFunctionBeginUser;
  if (!L) PetscFunctionReturn(0);
  PetscCall(PetscFree(L->grid.start));
  PetscCall(PetscFree(L->grid.elem));
  PetscCall(PetscFree(L->box));
  PetscCall(PetscFree(L->all));
  PetscCall(PetscFree(*locator));
  PetscFunctionReturn(0);
}

typedef struct {
  double q[3];
  int64_t index; /* the query's index on its sender */
} query;

/* Whether q lies in rank r's box grown by `grow` times the rank's longest edge (a rank without elements: never). */
static int in_grown_box(const pbng_locator *L, int r, const double q[3], double grow)
{
  const rank_extent *x = &L->all[r];
  int in = x->hmax > 0;
  for (int k = 0; k < 3 && in; ++k) in = q[k] >= x->box[k] - grow * x->hmax && q[k] <= x->box[3 + k] + grow * x->hmax;
  return in;
}

/* Whether rank r's elements may hold q within the search radius. */
static int may_answer(const pbng_locator *L, int r, const double q[3]) { return in_grown_box(L, r, q, L->radius); }

/* Whether rank r's elements may hold q at distance 0: its box grown beyond the grid's padding and rounding. */
static int may_contain(const pbng_locator *L, int r, const double q[3]) { return in_grown_box(L, r, q, 1e-10); }

typedef int (*rank_filter)(const pbng_locator *L, int r, const double q[3]);
typedef void (*rank_answer)(const pbng_locator *L, const double q[3], pbng_point_location *best);

/* One collective round of queries: each of n points (point which[i] of points[][3], or point i when which is NULL)
 * goes to every rank that `asked` selects, is answered there by `answer`, and loc[] of the point keeps the best
 * answer (better) of its own and theirs. */
static PetscErrorCode query_round(pbng_locator *L, int64_t n, const int64_t *which, const double *points, rank_filter asked, rank_answer answer,
                                  pbng_point_location *loc)
{
  MPI_Comm comm = L->mesh.comm;
  const int size = L->mesh.size;
  int *scount, *rcount, *sdispl, *rdispl;
  query *sbuf = NULL, *rbuf;
  pbng_point_location *abuf, *rabuf;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc4(size, &scount, size, &rcount, size + 1, &sdispl, size + 1, &rdispl));
  for (int pass = 0; pass < 2; ++pass) { /* count, then fill */
    if (pass == 1) {
      for (int r = 0; r < size; ++r) sdispl[r + 1] = sdispl[r] + scount[r], scount[r] = 0;
      PetscCall(PetscMalloc1(sdispl[size] + 1, &sbuf));
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = which ? which[i] : i;
      for (int r = 0; r < size; ++r) {
        if (!asked(L, r, &points[3 * p])) continue;
        if (pass == 1) {
          query *s = &sbuf[sdispl[r] + scount[r]];
          memcpy(s->q, &points[3 * p], sizeof(s->q));
          s->index = p;
        }
        scount[r]++;
      }
    }
  }
  PetscCallMPI(MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm));
  for (int r = 0; r < size; ++r) rdispl[r + 1] = rdispl[r] + rcount[r];
  PetscCall(PetscMalloc1(rdispl[size] + 1, &rbuf));
  PetscCall(pbng_alltoallv_items(sbuf, scount, sdispl, rbuf, rcount, rdispl, sizeof(query), comm));
  PetscCall(PetscMalloc1(rdispl[size] + 1, &abuf));
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t k = 0; k < rdispl[size]; ++k) answer(L, rbuf[k].q, &abuf[k]);
  PetscCall(PetscMalloc1(sdispl[size] + 1, &rabuf));
  PetscCall(pbng_alltoallv_items(abuf, rcount, rdispl, rabuf, scount, sdispl, sizeof(pbng_point_location), comm));
  for (int64_t k = 0; k < sdispl[size]; ++k) { /* the best answer per point */
    pbng_point_location *l = &loc[sbuf[k].index];
    if (better(&rabuf[k], l)) *l = rabuf[k];
  }
  PetscCall(PetscFree4(scount, rcount, sdispl, rdispl));
  PetscCall(PetscFree(sbuf));
  PetscCall(PetscFree(rbuf));
  PetscCall(PetscFree(abuf));
  PetscCall(PetscFree(rabuf));
  PetscFunctionReturn(0);
}

/* Two rounds: the elements at distance 0 first, from the ranks whose box holds the point (only they can have one);
 * then, for the points none of them holds, the nearest elements within the radius, from every rank within it. The
 * best over the ranks is the same as one round asking every rank within the radius for its own best (an element
 * at distance 0 beats any other), but the ranks whose box only the radius reaches no longer search their rings of
 * cells for points that another rank's element contains (Res-64 on 2 ranks: the finest transfer's location took as
 * long as on one). */
PetscErrorCode pbng_locator_find(pbng_locator *L, int64_t n, const double *points, pbng_point_location *loc)
{
  int64_t *outside, nout = 0;

  PetscFunctionBeginUser;
  for (int64_t i = 0; i < n; ++i) loc[i].elem = -1;
  PetscCall(query_round(L, n, NULL, points, may_contain, containing_element, loc));
  PetscCall(PetscMalloc1(n + 1, &outside));
  for (int64_t i = 0; i < n; ++i)
    if (loc[i].elem < 0) outside[nout++] = i;
  PetscCall(query_round(L, nout, outside, points, may_answer, nearest_answer, loc));
  PetscCall(PetscFree(outside));
  PetscFunctionReturn(0);
}
