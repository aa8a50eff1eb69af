/* The distributed surface (src/contact/surface.c) and contact detection (src/contact/contact_detect.c),
 * on any number of ranks (ctest runs 1; test_contact_detect_ranks.sh runs 3 and compares digests):
 *  - surface: on generated boxes of every generated kind, the triangle count 4 (ab + bc + ca) of a box
 *    of a x b x c cells, its surface vertex count, the enclosed volume (sum of the held triangles'
 *    signed volumes with the origin), a closed and consistently oriented surface (every directed edge
 *    has exactly one reverse); on the prism, pyramid, P2/P3 and mixed meshes of tests/data the same
 *    but the counts; everywhere the held triangles (keys, corners, order, sheet flags), the vertex flags
 *    of owned and ghost nodes, each vertex's triangles and element neighbours (the same list) and the
 *    body labels are those of a serial extraction from the global mesh written here;
 *  - sheets (docs/cloth.md#sheets-in-contact): a tri3 sheet, a folded one with bend4 stencils, a sheet
 *    beside a box, a flap welded to a box's edge (one body), two sheets joined by a lone bend4 row (one
 *    body; its node of no triangle no surface vertex): two sides per tri3 element (keys
 *    e * PBNG_MAX_FACES * 2 + side, corners (0 1 2) and (0 2 1), flagged sheet), none from bend4 (whose
 *    rows still join bodies and neighbours), the counts (2 per tri3; the sheets' vertices), volume 0 for a
 *    sheet alone (its sides cancel); not "exactly one reverse" (an interior sheet edge is run twice each
 *    way) but: the boundary faces alone closed as above, the sides in pairs of reversed corner order, and
 *    every directed edge of the whole surface run as often as its reverse;
 *  - bodies: one box, two stacked blocks (bound by weak constraints, which do not join bodies), three
 *    boxes, a long bar (labels travel across ranks);
 *  - detection against brute force (every surface vertex against every surface triangle of the
 *    global mesh, the rules written again here) on random configurations: two boxes (P1 and P2
 *    tetrahedra) rotated and overlapping or nearly touching, three crossing hexahedral bars, a coarse
 *    slab under a fine box (triangles larger than the hash's cells), the mixed-kind box twice, bars bent
 *    into a ring whose ends nearly touch (self-contact; none without -self), obstacles of each kind;
 *    with sheets (sheet_offset h > 0): a sheet draped over a tet4 and a hex8 box, turned, slightly into
 *    them (the sheet's vertices are points against the faces; the box's meet both sides), a sheet folded
 *    onto itself (self-contact of points; none without -self), two sheets crossing at right angles
 *    exactly (vertices in the other's plane: s = 0, side 0 only) and nearly parallel (both sides), a
 *    sheet lying exactly on a box's top (points on faces with s = 0), a sheet under a box among
 *    obstacles, a flap hinged to a box folded back over its top (its own body: the box's vertices only
 *    where they face it; none without -self): the same records, weights, points, normals, offsets and
 *    gaps bitwise; the owners named in the records; 1 and 3 threads giving the same records; the
 *    records on each side of the sheets, of points on faces and with s = 0 as each case expects, never
 *    a vertex on both sides of one sheet triangle. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mesh/generate.h"
#include "mesh/sheet.h"
#include "contact/contact_detect.h"
#include "test_check.h"
#include "test_common.h"

static int compare_int64(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* ---- meshes ---- */

/* Element e's kind in a mesh of one kind or of mixed kinds. */
static uint8_t kind_of(const pbng_mesh *m, int64_t e) { return m->kind ? m->kind[e] : (uint8_t)m->etype->kind; }

/* Appends b to a, b's nodes numbered after a's (a mesh mixing kinds when theirs differ); with `weld`,
 * b's nodes within 1e-9 of one of a's are that node (a sheet joined to a volume). b is destroyed. */
static PetscErrorCode append_mesh_welded(pbng_mesh *a, pbng_mesh *b, int weld)
{
  const int one_kind = a->etype && a->etype == b->etype, nen = a->nen > b->nen ? a->nen : b->nen;
  int64_t *to, n = a->nnodes;
  pbng_mesh c;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(b->nnodes + 1, &to));
  for (int64_t i = 0; i < b->nnodes; ++i) {
    to[i] = -1;
    for (int64_t j = 0; weld && j < a->nnodes && to[i] < 0; ++j)
      if (fabs(a->X[3 * j] - b->X[3 * i]) < 1e-9 && fabs(a->X[3 * j + 1] - b->X[3 * i + 1]) < 1e-9 && fabs(a->X[3 * j + 2] - b->X[3 * i + 2]) < 1e-9) to[i] = j;
    if (to[i] < 0) to[i] = n++;
  }
  PetscCall(pbng_mesh_alloc_layout(&c, one_kind ? (int64_t)a->etype->kind : -nen, n, a->nelems + b->nelems, "test mesh"));
  PetscCall(PetscArraycpy(c.X, a->X, 3 * a->nnodes));
  for (int64_t i = 0; i < b->nnodes; ++i)
    if (to[i] >= a->nnodes) PetscCall(PetscArraycpy(c.X + 3 * to[i], b->X + 3 * i, 3));
  for (int64_t e = 0; e < a->nelems + b->nelems; ++e) {
    const pbng_mesh *from = e < a->nelems ? a : b;
    const int64_t f = e < a->nelems ? e : e - a->nelems;
    for (int k = 0; k < nen; ++k) {
      const int32_t v = k < from->nen ? from->elems[from->nen * f + k] : -1;
      c.elems[nen * e + k] = v < 0 ? -1 : from == a ? v : (int32_t)to[v];
    }
    if (c.kind) c.kind[e] = kind_of(from, f);
  }
  snprintf(c.source, sizeof(c.source), "test mesh");
  PetscCall(PetscFree(to));
  PetscCall(pbng_mesh_destroy(a));
  PetscCall(pbng_mesh_destroy(b));
  *a = c;
  PetscFunctionReturn(0);
}

static PetscErrorCode append_mesh(pbng_mesh *a, pbng_mesh *b) { return append_mesh_welded(a, b, 0); }

static PetscErrorCode grid(pbng_element_kind kind, int64_t nx, int64_t ny, int64_t nz, double hx, double hy, double hz, pbng_mesh *m)
{
  const int64_t n[3] = {nx, ny, nz};
  const double lo[3] = {0, 0, 0}, hi[3] = {hx, hy, hz};
  const pbng_grid_elements el = {kind, PBNG_TET_SPLIT_FIVE};

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_grid(n, lo, hi, &el, m));
  PetscFunctionReturn(0);
}

static PetscErrorCode read_data(const char *file, pbng_mesh *m)
{
  char path[PETSC_MAX_PATH_LEN];
  const char *data = getenv("PBNG_TEST_DATA");

  PetscFunctionBeginUser;
  snprintf(path, sizeof(path), "%s/%s", data ? data : "tests/data", file);
  PetscCall(pbng_mesh_read(path, m));
  PetscFunctionReturn(0);
}

/* ---- the serial reference: surface, bodies, adjacency of the global mesh ---- */

typedef struct {
  int64_t ntri;
  int64_t *key;        /* [ntri], increasing */
  int32_t (*node)[3];  /* [ntri] global node indices, outward order */
  uint8_t *sheet;      /* [ntri]: 1 for a side of a sheet triangle (tri3) */
  uint8_t *is_vertex;  /* [nnodes] */
  int64_t *body;       /* [nnodes]: smallest node index of the component */
  int64_t *ne_start;   /* [nnodes + 1]: node -> elements */
  int64_t *ne;
  int64_t *nt_start;   /* [nnodes + 1]: node -> triangles, by key */
  int64_t *nt;
} reference;

typedef struct {
  int32_t corner[4]; /* sorted, INT32_MAX pads */
  int64_t elem;
  int face;
} ref_face;

static int compare_ref_faces(const void *a, const void *b)
{
  const ref_face *x = a, *y = b;
  for (int k = 0; k < 4; ++k)
    if (x->corner[k] != y->corner[k]) return x->corner[k] < y->corner[k] ? -1 : 1;
  return 0;
}

static int compare_int32(const void *a, const void *b)
{
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static int64_t root_of(int64_t *parent, int64_t i)
{
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

/* Boundary faces: sort every element's faces by corner set, keep those seen once; triangulate as the
 * surface's rule says (quadrilateral: diagonal through the smallest index); keys from element, face,
 * sub-triangle. Then each tri3 element's two sides: (row 0, 1, 2) with key e * PBNG_MAX_FACES * 2 and
 * (row 0, 2, 1) with that key + 1, marked sheet (tri3 and bend4 have no faces). List by key. */
static PetscErrorCode reference_triangles(const pbng_mesh *m, reference *r)
{
  ref_face *f;
  int64_t nf = 0, nsheet = 0;

  PetscFunctionBeginUser;
  for (int64_t e = 0; e < m->nelems; ++e) nsheet += kind_of(m, e) == PBNG_ELEMENT_TRI3;
  PetscCall(PetscMalloc1(m->nelems * PBNG_MAX_FACES + 1, &f));
  for (int64_t e = 0; e < m->nelems; ++e) {
    const pbng_element_type *t = pbng_mesh_element_type(m, e);
    for (int j = 0; j < t->nfaces; ++j, ++nf) {
      for (int k = 0; k < 4; ++k) f[nf].corner[k] = k < t->faces[j].corners ? m->elems[m->nen * e + t->faces[j].node[k]] : INT32_MAX;
      qsort(f[nf].corner, 4, sizeof(int32_t), compare_int32);
      f[nf].elem = e, f[nf].face = j;
    }
  }
  qsort(f, (size_t)nf, sizeof(ref_face), compare_ref_faces);
  PetscCall(PetscMalloc3(2 * (nf + nsheet) + 1, &r->key, 2 * (nf + nsheet) + 1, &r->node, 2 * (nf + nsheet) + 1, &r->sheet));
  r->ntri = 0;
  for (int64_t i = 0; i < nf; ++i) {
    if ((i > 0 && !compare_ref_faces(&f[i], &f[i - 1])) || (i + 1 < nf && !compare_ref_faces(&f[i], &f[i + 1]))) continue;
    const pbng_element_face *face = &pbng_mesh_element_type(m, f[i].elem)->faces[f[i].face];
    const int32_t *row = &m->elems[m->nen * f[i].elem];
    const int64_t key = (f[i].elem * PBNG_MAX_FACES + f[i].face) * 2;
    if (face->corners == 3) {
      r->key[r->ntri] = key, r->sheet[r->ntri] = 0;
      for (int k = 0; k < 3; ++k) r->node[r->ntri][k] = row[face->node[k]];
      ++r->ntri;
      continue;
    }
    int low = 0;
    for (int k = 1; k < 4; ++k)
      if (row[face->node[k]] < row[face->node[low]]) low = k;
    for (int s = 0; s < 2; ++s, ++r->ntri) {
      r->key[r->ntri] = key + s, r->sheet[r->ntri] = 0;
      r->node[r->ntri][0] = row[face->node[low]], r->node[r->ntri][1] = row[face->node[(low + 1 + s) % 4]], r->node[r->ntri][2] = row[face->node[(low + 2 + s) % 4]];
    }
  }
  PetscCall(PetscFree(f));
  for (int64_t e = 0; e < m->nelems; ++e) {
    if (kind_of(m, e) != PBNG_ELEMENT_TRI3) continue;
    const int32_t *row = &m->elems[m->nen * e];
    for (int side = 0; side < 2; ++side, ++r->ntri) {
      r->key[r->ntri] = e * PBNG_MAX_FACES * 2 + side, r->sheet[r->ntri] = 1;
      r->node[r->ntri][0] = row[0], r->node[r->ntri][1] = row[side == 0 ? 1 : 2], r->node[r->ntri][2] = row[side == 0 ? 2 : 1];
    }
  }
  /* faces were visited by corner set: order the triangles by key (keys are unique) */
  int64_t *order;
  int32_t(*node)[3];
  uint8_t *sheet;
  PetscCall(PetscMalloc3(2 * r->ntri + 1, &order, r->ntri + 1, &node, r->ntri + 1, &sheet));
  for (int64_t t = 0; t < r->ntri; ++t) order[2 * t] = r->key[t], order[2 * t + 1] = t;
  qsort(order, (size_t)r->ntri, 2 * sizeof(int64_t), compare_int64);
  for (int64_t t = 0; t < r->ntri; ++t) memcpy(node[t], r->node[order[2 * t + 1]], sizeof(node[t])), sheet[t] = r->sheet[order[2 * t + 1]];
  for (int64_t t = 0; t < r->ntri; ++t) r->key[t] = order[2 * t], memcpy(r->node[t], node[t], sizeof(node[t])), r->sheet[t] = sheet[t];
  PetscCall(PetscFree3(order, node, sheet));
  PetscFunctionReturn(0);
}

/* CSR of `items` lists: entry lists[k][0 .. per) of item k, -1 or beyond nnodes skipped */
static PetscErrorCode node_lists(int64_t nnodes, int64_t items, int per, int stride, const int32_t *nodes, int64_t **start, int64_t **list)
{
  int64_t *fill;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(nnodes + 1, start));
  for (int64_t k = 0; k < items; ++k)
    for (int a = 0; a < per; ++a)
      if (nodes[stride * k + a] >= 0) (*start)[nodes[stride * k + a] + 1]++;
  for (int64_t i = 0; i < nnodes; ++i) (*start)[i + 1] += (*start)[i];
  PetscCall(PetscMalloc1((*start)[nnodes] + 1, list));
  PetscCall(PetscMalloc1(nnodes + 1, &fill));
  memcpy(fill, *start, sizeof(int64_t) * (size_t)nnodes);
  for (int64_t k = 0; k < items; ++k)
    for (int a = 0; a < per; ++a)
      if (nodes[stride * k + a] >= 0) (*list)[fill[nodes[stride * k + a]]++] = k;
  PetscCall(PetscFree(fill));
  PetscFunctionReturn(0);
}

static PetscErrorCode reference_create(const pbng_mesh *m, reference *r)
{
  PetscFunctionBeginUser;
  memset(r, 0, sizeof(*r));
  PetscCall(reference_triangles(m, r));
  PetscCall(PetscCalloc2(m->nnodes, &r->is_vertex, m->nnodes, &r->body));
  for (int64_t t = 0; t < r->ntri; ++t)
    for (int k = 0; k < 3; ++k) r->is_vertex[r->node[t][k]] = 1;
  for (int64_t i = 0; i < m->nnodes; ++i) r->body[i] = i;
  for (int64_t e = 0; e < m->nelems; ++e)
    for (int a = 1, n = pbng_mesh_element_nodes(m, e); a < n; ++a) {
      const int64_t x = root_of(r->body, m->elems[m->nen * e]), y = root_of(r->body, m->elems[m->nen * e + a]);
      if (x != y) r->body[x > y ? x : y] = x < y ? x : y; /* the smaller index stays the root */
    }
  for (int64_t i = 0; i < m->nnodes; ++i) r->body[i] = root_of(r->body, i);
  PetscCall(node_lists(m->nnodes, m->nelems, m->nen, m->nen, m->elems, &r->ne_start, &r->ne));
  PetscCall(node_lists(m->nnodes, r->ntri, 3, 3, &r->node[0][0], &r->nt_start, &r->nt));
  PetscFunctionReturn(0);
}

static PetscErrorCode reference_destroy(reference *r)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree3(r->key, r->node, r->sheet));
  PetscCall(PetscFree2(r->is_vertex, r->body));
  PetscCall(PetscFree(r->ne_start));
  PetscCall(PetscFree(r->ne));
  PetscCall(PetscFree(r->nt_start));
  PetscCall(PetscFree(r->nt));
  PetscFunctionReturn(0);
}

/* Whether node j is a node of one of node i's elements. */
static int reference_shares_element(const pbng_mesh *m, const reference *r, int64_t i, int64_t j)
{
  for (int64_t k = r->ne_start[i]; k < r->ne_start[i + 1]; ++k)
    for (int a = 0, n = pbng_mesh_element_nodes(m, r->ne[k]); a < n; ++a)
      if (m->elems[m->nen * r->ne[k] + a] == j) return 1;
  return 0;
}

/* The nodes of node i's elements (every kind, bend4 too; i itself included), increasing, unique, into
 * list (room for its elements' nodes); returns how many. */
static int64_t reference_neighbours(const pbng_mesh *m, const reference *r, int64_t i, int64_t *list)
{
  int64_t n = 0, u = 0;
  for (int64_t k = r->ne_start[i]; k < r->ne_start[i + 1]; ++k)
    for (int a = 0, na = pbng_mesh_element_nodes(m, r->ne[k]); a < na; ++a) list[n++] = m->elems[m->nen * r->ne[k] + a];
  qsort(list, (size_t)n, sizeof(int64_t), compare_int64);
  for (int64_t k = 0; k < n; ++k)
    if (k == 0 || list[k] != list[u - 1]) list[u++] = list[k];
  return u;
}

/* Whether vertex v has no triangle of a boundary face, only sheet sides (a point: no normal). */
static int reference_is_point(const reference *r, int64_t v)
{
  for (int64_t k = r->nt_start[v]; k < r->nt_start[v + 1]; ++k)
    if (!r->sheet[r->nt[k]]) return 0;
  return 1;
}

/* The index of the triangle with this key, -1 if none. */
static int64_t reference_find(const reference *r, int64_t key)
{
  const int64_t *at = bsearch(&key, r->key, (size_t)r->ntri, sizeof(int64_t), compare_int64);
  return at ? at - r->key : -1;
}

/* ---- surface checks ---- */

typedef struct {
  const char *name;
  int64_t triangles, vertices, bodies; /* expected, -1: not known */
  double volume;                       /* enclosed volume, < 0: not known */
} surface_expect;

/* Every rank's held triangles (rows of HELD: key, global corners, sheet flag), gathered to every rank,
 * by key. */
#define HELD 5
static PetscErrorCode gather_held(const pbng_dmesh *dm, const pbng_surface *s, int64_t *n, int64_t **tri)
{
  int64_t *mine;
  int *count, *displ, my = HELD * s->nheld;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(HELD * (int64_t)s->nheld + 1, &mine));
  for (int32_t t = 0; t < s->nheld; ++t) {
    mine[HELD * t] = s->tri[t].key;
    for (int k = 0; k < 3; ++k) mine[HELD * t + 1 + k] = dm->global_node[s->tri[t].node[k]];
    mine[HELD * t + 4] = s->tri[t].sheet;
  }
  PetscCall(PetscMalloc2(dm->size, &count, dm->size + 1, &displ));
  PetscCallMPI(MPI_Allgather(&my, 1, MPI_INT, count, 1, MPI_INT, dm->comm));
  displ[0] = 0;
  for (int r = 0; r < dm->size; ++r) displ[r + 1] = displ[r] + count[r];
  PetscCall(PetscMalloc1(displ[dm->size] + 1, tri));
  PetscCallMPI(MPI_Allgatherv(mine, my, MPI_INT64_T, *tri, count, displ, MPI_INT64_T, dm->comm));
  *n = displ[dm->size] / HELD;
  qsort(*tri, (size_t)*n, HELD * sizeof(int64_t), compare_int64);
  PetscCall(PetscFree(mine));
  PetscCall(PetscFree2(count, displ));
  PetscFunctionReturn(0);
}

static int compare_pairs(const void *a, const void *b)
{
  const int64_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The surface's directed edges (rows of HELD).
 *  - The boundary faces' triangles (sheet 0) alone: every directed edge (a, b) has exactly one reverse
 *    (b, a) and no twin: a closed surface whose triangles are oriented alike.
 *  - The sheet sides: they come in pairs, keys 2k and 2k + 1 with corners (a, b, c) and (a, c, b), so every
 *    directed edge of one side has its reverse in the other side of the same triangle. The "exactly one
 *    reverse, no twin" form does not hold for a sheet (an edge inside a sheet is run twice each way, once
 *    by each side of its two triangles), its balanced form does:
 *  - all triangles together: every directed edge is run as often as its reverse (a union of closed
 *    surfaces and two-sided sheets, whether or not a sheet is joined to a volume). */
static PetscErrorCode check_closed(const char *name, int64_t n, const int64_t *tri)
{
  int64_t *edge, bad = 0, nface = 0, unpaired = 0, unbalanced = 0, nsheet = 0;
  char what[200];

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(6 * n + 1, &edge));
  for (int64_t t = 0; t < n; ++t) {
    if (tri[HELD * t + 4]) continue;
    for (int k = 0; k < 3; ++k) edge[2 * (3 * nface + k)] = tri[HELD * t + 1 + k], edge[2 * (3 * nface + k) + 1] = tri[HELD * t + 1 + (k + 1) % 3];
    ++nface;
  }
  qsort(edge, (size_t)(3 * nface), 2 * sizeof(int64_t), compare_pairs);
  for (int64_t i = 0; i < 3 * nface; ++i) {
    const int64_t rev[2] = {edge[2 * i + 1], edge[2 * i]};
    bad += i > 0 && !compare_pairs(&edge[2 * i], &edge[2 * i - 2]); /* a twin */
    bad += !bsearch(rev, edge, (size_t)(3 * nface), 2 * sizeof(int64_t), compare_pairs);
  }
  if (nface < n || nface == 0) { /* sheets: the sides' pairs, then the balance over all triangles */
    for (int64_t t = 0; t < n; ++t) {
      const int64_t *x = &tri[HELD * t];
      if (!x[4]) continue;
      ++nsheet;
      if (x[0] % 2) continue;
      const int64_t *y = x + HELD;
      unpaired += !(t + 1 < n && y[4] && y[0] == x[0] + 1 && y[1] == x[1] && y[2] == x[3] && y[3] == x[2]);
    }
    unpaired += nsheet % 2;
    for (int64_t t = 0; t < n; ++t)
      for (int k = 0; k < 3; ++k) edge[2 * (3 * t + k)] = tri[HELD * t + 1 + k], edge[2 * (3 * t + k) + 1] = tri[HELD * t + 1 + (k + 1) % 3];
    qsort(edge, (size_t)(3 * n), 2 * sizeof(int64_t), compare_pairs);
    for (int64_t i = 0, j; i < 3 * n; i = j) {
      for (j = i + 1; j < 3 * n && !compare_pairs(&edge[2 * j], &edge[2 * i]);) ++j;
      const int64_t rev[2] = {edge[2 * i + 1], edge[2 * i]};
      const int64_t *at = bsearch(rev, edge, (size_t)(3 * n), 2 * sizeof(int64_t), compare_pairs), *lo = at, *hi = at;
      if (!at) {
        ++unbalanced;
        continue;
      }
      while (lo > edge && !compare_pairs(lo - 2, rev)) lo -= 2;
      while (hi + 2 < edge + 6 * n && !compare_pairs(hi + 2, rev)) hi += 2;
      unbalanced += (hi - lo) / 2 + 1 != j - i;
    }
    snprintf(what, sizeof(what), "%s: sheet sides in pairs (keys 2k, 2k + 1; corners a b c, a c b) (unpaired)", name);
    check(unpaired == 0 && nsheet > 0, what, (double)unpaired, 0);
    snprintf(what, sizeof(what), "%s: every directed edge run as often as its reverse (edges not)", name);
    check(unbalanced == 0, what, (double)unbalanced, 0);
  }
  if (nface > 0) {
    snprintf(what, sizeof(what), "%s: boundary faces: closed, consistently oriented surface (directed edges without one reverse)", name);
    check(bad == 0, what, (double)bad, 0);
  }
  check(n > 0, "a surface", (double)n, 0);
  PetscCall(PetscFree(edge));
  PetscFunctionReturn(0);
}

/* The distributed surface of dm against the serial reference of the same mesh m. */
static PetscErrorCode check_surface(const surface_expect *ex, const pbng_mesh *m, const reference *r, const pbng_dmesh *dm, const pbng_surface *s)
{
  int64_t n, *tri, mismatch = 0, local[3] = {s->nheld, s->nvert, 0}, total[3];
  double vol = 0, volume;
  char what[200];

  PetscFunctionBeginUser;
  PetscCall(gather_held(dm, s, &n, &tri));
  for (int64_t t = 0; t < n && t < r->ntri; ++t) {
    const int64_t *x = &tri[HELD * t];
    mismatch += x[0] != r->key[t] || x[1] != r->node[t][0] || x[2] != r->node[t][1] || x[3] != r->node[t][2] || x[4] != r->sheet[t];
  }
  snprintf(what, sizeof(what), "%s: the held triangles are the serial extraction's (count, keys, corners, sheet flags)", ex->name);
  check(n == r->ntri && mismatch == 0, what, (double)n, (double)r->ntri);
  PetscCall(check_closed(ex->name, n, tri));
  PetscCall(PetscFree(tri));
  /* flags, bodies, incident triangles, neighbours (the same list) */
  int64_t *nbr, most = 1;
  for (int64_t i = 0; i < m->nnodes; ++i) most = PetscMax(most, (r->ne_start[i + 1] - r->ne_start[i]) * m->nen);
  PetscCall(PetscMalloc1(most, &nbr));
  for (int32_t i = 0; i < dm->nlocal; ++i) local[2] += s->is_vertex[i] != r->is_vertex[dm->global_node[i]] || s->body[i] != r->body[dm->global_node[i]];
  for (int32_t v = 0; v < s->nvert; ++v) {
    const int64_t g = dm->global_node[s->vert[v]];
    int ok = s->vtri_start[v + 1] - s->vtri_start[v] == r->nt_start[g + 1] - r->nt_start[g] && s->vtri_start[v + 1] > s->vtri_start[v];
    for (int32_t k = 0; ok && k < s->vtri_start[v + 1] - s->vtri_start[v]; ++k) ok = s->tri[s->vtri[s->vtri_start[v] + k]].key == r->key[r->nt[r->nt_start[g] + k]];
    const int64_t nn = reference_neighbours(m, r, g, nbr);
    ok = ok && s->nbr_start[v + 1] - s->nbr_start[v] == nn && !memcmp(&s->nbr[s->nbr_start[v]], nbr, sizeof(int64_t) * (size_t)nn);
    local[2] += !ok;
    local[2] += v > 0 && g <= dm->global_node[s->vert[v - 1]];
  }
  PetscCall(PetscFree(nbr));
  for (int32_t t = 0; t < s->nheld; ++t) {
    const double *a = &dm->X[3 * s->tri[t].node[0]], *b = &dm->X[3 * s->tri[t].node[1]], *c = &dm->X[3 * s->tri[t].node[2]];
    vol += pbng_tet_signed_volume((double[3]){0, 0, 0}, a, b, c);
  }
  PetscCallMPI(MPI_Allreduce(local, total, 3, MPI_INT64_T, MPI_SUM, dm->comm));
  PetscCallMPI(MPI_Allreduce(&vol, &volume, 1, MPI_DOUBLE, MPI_SUM, dm->comm));
  snprintf(what, sizeof(what), "%s: vertex flags, bodies, vertex triangles and neighbours as the serial ones", ex->name);
  check(total[2] == 0, what, (double)total[2], 0);
  int64_t nvert = 0;
  for (int64_t i = 0; i < m->nnodes; ++i) nvert += r->is_vertex[i];
  snprintf(what, sizeof(what), "%s: every surface vertex owned once", ex->name);
  check(total[1] == nvert, what, (double)total[1], (double)nvert);
  if (ex->triangles >= 0) {
    snprintf(what, sizeof(what), "%s: surface triangles", ex->name);
    check(total[0] == ex->triangles, what, (double)total[0], (double)ex->triangles);
  }
  if (ex->vertices >= 0) {
    snprintf(what, sizeof(what), "%s: surface vertices", ex->name);
    check(total[1] == ex->vertices, what, (double)total[1], (double)ex->vertices);
  }
  if (ex->volume >= 0) {
    snprintf(what, sizeof(what), "%s: enclosed volume (outward triangles)", ex->name);
    check(fabs(volume - ex->volume) <= 1e-12 * fmax(ex->volume, 1), what, volume, ex->volume); /* a sheet's sides cancel */
  }
  if (ex->bodies >= 0) {
    snprintf(what, sizeof(what), "%s: bodies", ex->name);
    check(s->nbodies == ex->bodies, what, (double)s->nbodies, (double)ex->bodies);
  }
  PetscCall(PetscPrintf(dm->comm, "surface %s: %" PRId64 " triangles, %" PRId64 " vertices, %" PRId64 " bodies (labels settled in %d rounds)\n", ex->name, total[0], total[1],
                        s->nbodies, s->body_rounds));
  PetscFunctionReturn(0);
}

typedef PetscErrorCode (*mesh_maker)(pbng_mesh *m, void *ctx);

/* Builds the mesh twice: the serial reference from one, the subdomain of this rank from the other. */
static PetscErrorCode setup(mesh_maker make, void *ctx, pbng_mesh *m, reference *r, pbng_dmesh *dm, pbng_halo *halo)
{
  pbng_mesh piece;
  pbng_bc_list none = {0};

  PetscFunctionBeginUser;
  PetscCall(make(m, ctx));
  PetscCall(make(&piece, ctx));
  PetscCall(reference_create(m, r));
  PetscCall(test_build_subdomain(PETSC_COMM_WORLD, &piece, &none, dm, halo));
  PetscFunctionReturn(0);
}

static PetscErrorCode teardown(pbng_mesh *m, reference *r, pbng_dmesh *dm, pbng_halo *halo)
{
  PetscFunctionBeginUser;
  PetscCall(reference_destroy(r));
  PetscCall(pbng_mesh_destroy(m));
  PetscCall(pbng_halo_destroy(halo));
  PetscCall(pbng_dmesh_destroy(dm));
  PetscFunctionReturn(0);
}

typedef struct {
  pbng_element_kind kind;
  pbng_tet_split split;
  int64_t n[3];
  const char *file;
  int copies;     /* boxes side by side (file: the file's mesh repeated) */
  double weak;    /* stacked blocks' binding stiffness (n[0]: resolution) when > 0 */
} mesh_spec;

static PetscErrorCode make_spec_mesh(pbng_mesh *m, void *ctx)
{
  const mesh_spec *sp = ctx;

  PetscFunctionBeginUser;
  if (sp->weak > 0) {
    PetscCall(pbng_generate_stacked_blocks((int)sp->n[0], 0.1, sp->weak, m));
    PetscFunctionReturn(0);
  }
  for (int c = 0; c < sp->copies; ++c) {
    pbng_mesh one;
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    const pbng_grid_elements el = {sp->kind, sp->split};
    if (sp->file) PetscCall(read_data(sp->file, &one));
    else PetscCall(pbng_generate_grid(sp->n, lo, hi, &el, &one));
    if (c == 0) *m = one;
    else PetscCall(append_mesh(m, &one));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode check_surfaces(void)
{
  static const struct {
    mesh_spec spec;
    surface_expect ex;
  } cases[] = {
    {{PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE, {4, 5, 6}, NULL, 1, 0}, {"tet4 box 3x4x5 cells", 4 * (12 + 20 + 15), 120 - 24, 1, 1}},
    {{PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_SIX, {4, 5, 6}, NULL, 1, 0}, {"tet4 box, six per cell", 4 * (12 + 20 + 15), 120 - 24, 1, 1}},
    {{PBNG_ELEMENT_TET10, PBNG_TET_SPLIT_FIVE, {4, 4, 4}, NULL, 1, 0}, {"tet10 box 3^3", 12 * 9, 64 - 8, 1, 1}},
    {{PBNG_ELEMENT_TET20, PBNG_TET_SPLIT_FIVE, {3, 3, 3}, NULL, 1, 0}, {"tet20 box 2^3", 12 * 4, 27 - 1, 1, 1}},
    {{PBNG_ELEMENT_HEX8, PBNG_TET_SPLIT_FIVE, {5, 5, 5}, NULL, 1, 0}, {"hex8 box 4^3", 12 * 16, 125 - 27, 1, 1}},
    {{PBNG_ELEMENT_HEX27, PBNG_TET_SPLIT_FIVE, {4, 3, 5}, NULL, 1, 0}, {"hex27 box 3x2x4", 4 * (6 + 8 + 12), 60 - 2 * 1 * 3, 1, 1}},
    {{PBNG_ELEMENT_HEX8, PBNG_TET_SPLIT_FIVE, {3, 3, 3}, NULL, 3, 0}, {"three hex8 boxes", 3 * 12 * 4, 3 * 26, 3, 3}},
    {{0, 0, {0, 0, 0}, "prism6_v41_ascii.msh", 1, 0}, {"prism6 box (gmsh)", -1, -1, 1, 0.125}},
    {{0, 0, {0, 0, 0}, "pyramid5_v41_ascii.msh", 1, 0}, {"pyramid5 box (gmsh)", 12, 8, 1, 0.125}},
    {{0, 0, {0, 0, 0}, "hex27_v41_ascii.msh", 1, 0}, {"hex27 box 4x2x2 (gmsh)", 4 * (8 + 4 + 8), 45 - 3, 1, 0.125}},
    {{0, 0, {0, 0, 0}, "tet10_v41_ascii.msh", 1, 0}, {"tet10 box (gmsh)", -1, -1, 1, 0.125}},
    {{0, 0, {0, 0, 0}, "tet20_v41_ascii.msh", 1, 0}, {"tet20 box (gmsh)", -1, -1, 1, 0.125}},
    {{0, 0, {0, 0, 0}, "mixed_box_v41_ascii.msh", 2, 0}, {"mixed hex/prism/pyramid box, twice", 2 * 12 * 16, 2 * (125 - 27), 2, 2}},
    {{0, 0, {0, 0, 0}, "mixed_hex_prism.msh", 1, 0}, {"mixed hex/prism box", -1, -1, 1, 0.125}},
    {{PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE, {5, 0, 0}, NULL, 1, 1e3}, {"stacked blocks bound by weak constraints", 2 * 12 * 16, 2 * 98, 2, 2}},
    {{PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE, {40, 2, 2}, NULL, 1, 0}, {"long bar 39x1x1", 4 * (39 + 1 + 39), 160, 1, 1}},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    pbng_mesh m;
    reference r;
    pbng_dmesh dm;
    pbng_halo halo;
    pbng_surface s;
    PetscCall(setup(make_spec_mesh, (void *)&cases[c].spec, &m, &r, &dm, &halo));
    PetscCall(pbng_surface_create(&dm, &s));
    PetscCall(check_surface(&cases[c].ex, &m, &r, &dm, &s));
    PetscCall(pbng_surface_destroy(&s));
    PetscCall(teardown(&m, &r, &dm, &halo));
  }
  PetscFunctionReturn(0);
}

/* ---- detection scenarios ---- */

#define MAX_BODIES 3
typedef struct {
  const char *name;
  int nbodies;
  int64_t first[MAX_BODIES + 1]; /* first node of each body (set by the mesh maker) */
  double R[MAX_BODIES][9], centre[MAX_BODIES][3], shift[MAX_BODIES][3];
  double noise;                  /* amplitude of a per-node perturbation */
  double ring_length, ring_gap;  /* > 0: body 0 is a bar [0, L] x [0, W] x [0, W] bent into a ring */
  double ring_width;
  pbng_contact_detect_options opt;
} scenario;

/* A value in [-1, 1] from a node and an axis (splitmix64). */
static double node_noise(int64_t gid, int k)
{
  uint64_t z = (uint64_t)gid * 3 + (uint64_t)k + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return 2.0 * (double)(z >> 11) / 9007199254740992.0 - 1.0;
}

/* Rotation by `angle` about the unit axis (Rodrigues). */
static void rotation(const double axis[3], double angle, double R[9])
{
  const double c = cos(angle), s = sin(angle), *u = axis;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) R[3 * i + j] = (i == j ? c : 0) + (1 - c) * u[i] * u[j];
  R[1] -= s * u[2], R[2] += s * u[1], R[3] += s * u[2], R[5] -= s * u[0], R[6] -= s * u[1], R[7] += s * u[0];
}

static void random_rotation(uint64_t *seed, double max_angle, double R[9])
{
  double axis[3], len = 0;
  for (int k = 0; k < 3; ++k) axis[k] = 2 * next_random(seed) - 1, len += axis[k] * axis[k];
  for (int k = 0; k < 3; ++k) axis[k] /= sqrt(len);
  rotation(axis, max_angle * (2 * next_random(seed) - 1), R);
}

/* The position of node gid (rest X) in the scenario. */
static void place(const scenario *sc, int64_t gid, const double X[3], double x[3])
{
  int b = 0;
  while (b + 1 < sc->nbodies && gid >= sc->first[b + 1]) ++b;
  if (b == 0 && sc->ring_length > 0) {
    const double R = (sc->ring_length + sc->ring_gap) / (2 * 3.14159265358979323846), theta = X[0] / R, r = R + X[1] - 0.5 * sc->ring_width;
    x[0] = r * cos(theta), x[1] = r * sin(theta), x[2] = X[2];
  } else {
    double d[3];
    for (int k = 0; k < 3; ++k) d[k] = X[k] - sc->centre[b][k];
    for (int k = 0; k < 3; ++k) x[k] = sc->R[b][3 * k] * d[0] + sc->R[b][3 * k + 1] * d[1] + sc->R[b][3 * k + 2] * d[2] + sc->centre[b][k] + sc->shift[b][k];
  }
  for (int k = 0; k < 3; ++k) x[k] += sc->noise * node_noise(gid, k);
}

/* ---- brute force ---- */

/* Every surface vertex against every surface triangle and obstacle of the global mesh, the rules of
 * docs/contact.md#detection written again: n_v from the vertex's boundary-face triangles alone (none: a
 * point); a sheet side pairs with the vertices on its side (s > 0; s = 0: side 0), of its own body only
 * with points or facing ones; a boundary face with facing vertices, another body's vertices behind it,
 * points in front of it or on it; a sheet's side 1 is computed as side 0 with its normal negated (s
 * exactly -s0); a sheet side's record has offset h and gap s - h, and the valley rule counts a vertex
 * within h of a sheet side as behind it. */
/* One accepted pair of the brute force. */
typedef struct {
  int64_t t, key;
  double d2, s, w[3], p[3], n[3];
} brute_pair;

static int compare_brute_pairs(const void *a, const void *b)
{
  const brute_pair *x = a, *y = b;
  if (x->d2 != y->d2) return x->d2 < y->d2 ? -1 : 1;
  return (x->key > y->key) - (x->key < y->key);
}

static int compare_brute_keys(const void *a, const void *b)
{
  const brute_pair *x = a, *y = b;
  return (x->key > y->key) - (x->key < y->key);
}

static void corners(const reference *r, const double *x, int64_t t, double c[3][3])
{
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 3; ++k) c[a][k] = x[3 * r->node[t][a] + k];
}

static PetscErrorCode brute_force(const scenario *sc, const pbng_mesh *m, const reference *r, const double *x, int64_t *n, pbng_contact_record **rec)
{
  const pbng_contact_detect_options *opt = &sc->opt;
  int64_t cap = 16, count = 0;
  brute_pair *acc;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(cap, rec));
  PetscCall(PetscMalloc1(r->ntri + 1, &acc));
  for (int64_t v = 0; v < m->nnodes; ++v) {
    if (!r->is_vertex[v]) continue;
    const double *xv = &x[3 * v];
    double nv[3] = {0, 0, 0};
    int faces = 0; /* the normal from the boundary faces' triangles alone; none: v is a point */
    for (int64_t k = r->nt_start[v]; k < r->nt_start[v + 1]; ++k) {
      if (r->sheet[r->nt[k]]) continue;
      const int32_t *c = r->node[r->nt[k]];
      const int j = c[0] == v ? 0 : c[1] == v ? 1 : 2;
      pbng_vertex_normal_add(&x[3 * c[j]], &x[3 * c[(j + 1) % 3]], &x[3 * c[(j + 2) % 3]], nv);
      ++faces;
    }
    const int point = faces == 0;
    int64_t nacc = 0;
    for (int64_t t = 0; t < r->ntri; ++t) {
      const int32_t *c = r->node[t];
      if (c[0] == v || c[1] == v || c[2] == v) continue;
      if (r->body[c[0]] == r->body[v]) {
        if (!opt->self) continue;
        if (reference_shares_element(m, r, v, c[0]) || reference_shares_element(m, r, v, c[1]) || reference_shares_element(m, r, v, c[2])) continue;
      }
      brute_pair *q = &acc[nacc];
      /* a sheet's side 1 as side 0 (corners c0 c2 c1), its normal negated and weights put back: s exactly -s0 */
      const int flip = r->sheet[t] && r->key[t] % 2 == 1, b = flip ? 2 : 1, e = flip ? 1 : 2;
      double w0[3];
      const double d2 = pbng_point_triangle_closest(xv, &x[3 * c[0]], &x[3 * c[b]], &x[3 * c[e]], w0, q->p);
      if (sqrt(d2) > opt->distance) continue;
      if (pbng_triangle_normal(&x[3 * c[0]], &x[3 * c[b]], &x[3 * c[e]], q->n) == 0) continue;
      q->w[0] = w0[0], q->w[b] = w0[1], q->w[e] = w0[2];
      if (flip) q->n[0] = -q->n[0], q->n[1] = -q->n[1], q->n[2] = -q->n[2];
      const double s = (xv[0] - q->p[0]) * q->n[0] + (xv[1] - q->p[1]) * q->n[1] + (xv[2] - q->p[2]) * q->n[2];
      const int facing = nv[0] * q->n[0] + nv[1] * q->n[1] + nv[2] * q->n[2] < 0, same_body = r->body[c[0]] == r->body[v];
      if (r->sheet[t]) {
        /* a sheet side: v on its side (in its plane: side 0 only); of its own body a vertex with a
         * normal must face it */
        const int on_side = s > 0 || (s == 0 && r->key[t] % 2 == 0);
        if (!on_side || !(point || !same_body || facing)) continue;
      } else {
        /* a boundary face: facing; behind it, another body's; a point in front of it (or on it) */
        if (!facing && !(s < 0 && !same_body) && !(point && s >= 0)) continue;
      }
      q->t = t, q->key = r->key[t], q->d2 = d2, q->s = s;
      ++nacc;
    }
    /* the PBNG_CONTACT_NEAREST closest (ties: lower key), then greedily those forming a valley with all kept */
    qsort(acc, (size_t)nacc, sizeof(*acc), compare_brute_pairs);
    if (nacc > PBNG_CONTACT_NEAREST) nacc = PBNG_CONTACT_NEAREST;
    brute_pair kept[PBNG_CONTACT_MAX_TRIANGLES];
    int nkept = 0;
    for (int64_t a = 0; a < nacc && nkept < PBNG_CONTACT_MAX_TRIANGLES; ++a) {
      double ta[3][3], tk[3][3];
      corners(r, x, acc[a].t, ta);
      int ok = a == 0 || acc[a].s - (r->sheet[acc[a].t] ? opt->sheet_offset : 0) < 0; /* others only with v behind them (a sheet: s < h) */
      for (int k = 0; k < nkept && ok; ++k) corners(r, x, kept[k].t, tk), ok = pbng_triangles_form_valley(ta, acc[a].n, tk, kept[k].n);
      if (ok) kept[nkept++] = acc[a];
    }
    qsort(kept, (size_t)nkept, sizeof(*kept), compare_brute_keys);
    if (count + nkept + opt->nobstacles > cap) {
      cap = 2 * (count + nkept + opt->nobstacles);
      PetscCall(PetscRealloc(sizeof(**rec) * (size_t)cap, rec));
    }
    for (int k = 0; k < nkept; ++k) {
      const brute_pair *b = &kept[k];
      pbng_contact_record *q = &(*rec)[count++];
      memset(q, 0, sizeof(*q));
      q->kind = PBNG_CONTACT_TRIANGLE, q->vertex = -1, q->vertex_gid = v, q->key = b->key;
      q->offset = r->sheet[b->t] ? opt->sheet_offset : 0, q->gap = b->s - q->offset; /* a sheet keeps v h in front of it */
      for (int a = 0; a < 3; ++a) {
        q->tri_gid[a] = r->node[b->t][a];
        for (int k2 = 0; k2 < 3; ++k2) q->tri_x[a][k2] = x[3 * r->node[b->t][a] + k2];
        q->w[a] = b->w[a], q->point[a] = b->p[a], q->normal[a] = b->n[a];
      }
    }
    for (int o = 0; o < opt->nobstacles; ++o) {
      double qo[3], no[3];
      const double phi = pbng_obstacle_closest(&opt->obstacle[o], xv, qo, no);
      if (phi >= opt->distance) continue;
      pbng_contact_record *q = &(*rec)[count++];
      memset(q, 0, sizeof(*q));
      q->kind = PBNG_CONTACT_OBSTACLE, q->vertex = -1, q->vertex_gid = v, q->key = o, q->gap = phi;
      for (int a = 0; a < 3; ++a) q->tri_gid[a] = -1, q->point[a] = qo[a], q->normal[a] = no[a];
    }
  }
  *n = count;
  PetscCall(PetscFree(acc));
  PetscFunctionReturn(0);
}

/* ---- comparing records ---- */

static int compare_records(const void *a, const void *b)
{
  const pbng_contact_record *x = a, *y = b;
  if (x->vertex_gid != y->vertex_gid) return x->vertex_gid < y->vertex_gid ? -1 : 1;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  return (x->key > y->key) - (x->key < y->key);
}

/* Equal in everything that does not depend on the partition (not the local index, not the owners). */
static int same_record(const pbng_contact_record *a, const pbng_contact_record *b)
{
  return a->kind == b->kind && a->vertex_gid == b->vertex_gid && a->key == b->key && !memcmp(a->tri_gid, b->tri_gid, sizeof(a->tri_gid)) &&
         !memcmp(a->tri_x, b->tri_x, sizeof(a->tri_x)) && !memcmp(a->w, b->w, sizeof(a->w)) && !memcmp(a->point, b->point, sizeof(a->point)) &&
         !memcmp(a->normal, b->normal, sizeof(a->normal)) && !memcmp(&a->offset, &b->offset, sizeof(a->offset)) && !memcmp(&a->gap, &b->gap, sizeof(a->gap));
}

/* FNV-1a over the partition-independent fields of the sorted records. */
static uint64_t digest(int64_t n, const pbng_contact_record *r)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (int64_t i = 0; i < n; ++i) {
    pbng_contact_record c = r[i];
    c.vertex = 0;
    memset(c.tri_owner, 0, sizeof(c.tri_owner));
    const unsigned char *p = (const unsigned char *)&c;
    for (size_t k = 0; k < sizeof(c); ++k) h = (h ^ p[k]) * 0x100000001b3ull;
  }
  return h;
}

/* All ranks' records, gathered to every rank, sorted. */
static PetscErrorCode gather_records(MPI_Comm comm, int32_t n, const pbng_contact_record *rec, int64_t *total, pbng_contact_record **all)
{
  int size, *count, *displ, bytes = (int)(n * sizeof(pbng_contact_record));

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMalloc2(size, &count, size + 1, &displ));
  PetscCallMPI(MPI_Allgather(&bytes, 1, MPI_INT, count, 1, MPI_INT, comm));
  displ[0] = 0;
  for (int r = 0; r < size; ++r) displ[r + 1] = displ[r] + count[r];
  PetscCall(PetscMalloc1(displ[size] / sizeof(pbng_contact_record) + 1, all));
  PetscCallMPI(MPI_Allgatherv(rec, bytes, MPI_BYTE, *all, count, displ, MPI_BYTE, comm));
  *total = displ[size] / (int64_t)sizeof(pbng_contact_record);
  qsort(*all, (size_t)*total, sizeof(pbng_contact_record), compare_records);
  PetscCall(PetscFree2(count, displ));
  PetscFunctionReturn(0);
}

/* Each record's owners are its triangle corners' owners (every rank's owned ids gathered). */
static PetscErrorCode check_owners(const scenario *sc, const pbng_dmesh *dm, int32_t n, const pbng_contact_record *rec)
{
  int *count, *displ, *owner, mine = dm->nowned;
  int64_t *gids, bad = 0, total;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(dm->size, &count, dm->size + 1, &displ));
  PetscCallMPI(MPI_Allgather(&mine, 1, MPI_INT, count, 1, MPI_INT, dm->comm));
  displ[0] = 0;
  for (int r = 0; r < dm->size; ++r) displ[r + 1] = displ[r] + count[r];
  PetscCall(PetscMalloc1(displ[dm->size] + 1, &gids));
  PetscCall(PetscMalloc1(dm->nglobal_nodes + 1, &owner));
  PetscCallMPI(MPI_Allgatherv(dm->global_node, mine, MPI_INT64_T, gids, count, displ, MPI_INT64_T, dm->comm));
  for (int r = 0; r < dm->size; ++r)
    for (int k = displ[r]; k < displ[r + 1]; ++k) owner[gids[k]] = r;
  for (int32_t i = 0; i < n; ++i) {
    bad += rec[i].vertex < 0 || rec[i].vertex >= dm->nowned || dm->global_node[rec[i].vertex] != rec[i].vertex_gid;
    for (int c = 0; c < 3 && rec[i].kind == PBNG_CONTACT_TRIANGLE; ++c) bad += rec[i].tri_owner[c] != owner[rec[i].tri_gid[c]];
  }
  PetscCallMPI(MPI_Allreduce(&bad, &total, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  char what[160];
  snprintf(what, sizeof(what), "%s: records name their owned vertex and the corners' owners", sc->name);
  check(total == 0, what, (double)total, 0);
  PetscCall(PetscFree(gids));
  PetscCall(PetscFree(owner));
  PetscCall(PetscFree2(count, displ));
  PetscFunctionReturn(0);
}

/* What a scenario must give (beyond the brute force's records). */
typedef struct {
  int64_t min_triangle, max_triangle, min_obstacle; /* record counts */
  int64_t min_multi;                                /* vertices with several triangle records at least */
  int64_t min_side[2];   /* records on sheet sides 0 and 1 */
  int64_t min_point;     /* records of points (vertices of sheets alone) on boundary faces' triangles */
  int64_t min_ties;      /* > 0: records on a sheet side with s = 0 (gap = -h) at least, all on side 0 */
  int64_t min_point_ties; /* records of points on boundary faces with s = 0 (gap 0) at least */
} detect_expect;

/* The sheet records of the gathered records: per side; of points on boundary faces (ties[2]: with s = 0);
 * with s = 0 (gap exactly -h; ties[0], on side 1 too: ties[1]); vertices with records on both sides of
 * one sheet triangle. */
static void sheet_tallies(const reference *r, int64_t n, const pbng_contact_record *all, int64_t side[2], int64_t *point, int64_t ties[3], int64_t *both)
{
  side[0] = side[1] = ties[0] = ties[1] = ties[2] = *point = *both = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (all[i].kind != PBNG_CONTACT_TRIANGLE) continue;
    const int64_t t = reference_find(r, all[i].key);
    if (t < 0) continue; /* counted as a mismatch by the brute force's comparison */
    if (!r->sheet[t]) {
      const int point_here = reference_is_point(r, all[i].vertex_gid);
      *point += point_here, ties[2] += point_here && all[i].gap == 0;
      continue;
    }
    side[all[i].key % 2]++;
    ties[all[i].key % 2] += all[i].gap == -all[i].offset;
    for (int64_t j = i + 1; j < n && all[j].vertex_gid == all[i].vertex_gid; ++j) *both += all[j].kind == PBNG_CONTACT_TRIANGLE && all[j].key == (all[i].key ^ 1);
  }
}

/* Detection on this partition with 1 and 3 threads (the same records), against brute force. */
static PetscErrorCode check_detection(const scenario *sc, const detect_expect *ex, const pbng_mesh *m, const reference *r, const pbng_dmesh *dm)
{
  const int64_t min_triangle = ex->min_triangle, max_triangle = ex->max_triangle, min_obstacle = ex->min_obstacle, min_multi = ex->min_multi;
  pbng_contact_detector *det;
  pbng_contact_record *rec[2], *all, *brute;
  int32_t n[2];
  int64_t total = 0, nbrute = 0, bad = 0, kinds[2] = {0, 0};
  double *x, *xg;
  char what[200];

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(3 * (int64_t)dm->nlocal, &x));
  PetscCall(PetscMalloc1(3 * m->nnodes, &xg));
  for (int32_t i = 0; i < dm->nlocal; ++i) place(sc, dm->global_node[i], &dm->X[3 * i], &x[3 * i]);
  for (int64_t i = 0; i < m->nnodes; ++i) place(sc, i, &m->X[3 * i], &xg[3 * i]);
  PetscCall(pbng_contact_detector_create(dm, &sc->opt, &det));
  const int threads = omp_get_max_threads();
  for (int t = 0; t < 2; ++t) {
    omp_set_num_threads(t == 0 ? 1 : 3);
    PetscCall(pbng_contact_detect(det, x, &n[t], &rec[t]));
  }
  omp_set_num_threads(threads);
  snprintf(what, sizeof(what), "%s: 1 and 3 threads give the same records", sc->name);
  check(n[0] == n[1] && !memcmp(rec[0], rec[1], sizeof(pbng_contact_record) * (size_t)n[0]), what, n[0], n[1]);
  for (int32_t i = 1; i < n[0]; ++i) bad += compare_records(&rec[0][i - 1], &rec[0][i]) >= 0;
  snprintf(what, sizeof(what), "%s: records sorted by (vertex, kind, key)", sc->name);
  check(bad == 0, what, (double)bad, 0);
  PetscCall(check_owners(sc, dm, n[0], rec[0]));
  PetscCall(gather_records(dm->comm, n[0], rec[0], &total, &all));
  PetscCall(brute_force(sc, m, r, xg, &nbrute, &brute));
  bad = 0;
  for (int64_t i = 0; i < total && i < nbrute; ++i) {
    const int same = same_record(&all[i], &brute[i]);
    if (!same && bad++ < 3)
      printf("  %s: record %" PRId64 ": vertex %" PRId64 " kind %d key %" PRId64 " gap %.17g, brute force: vertex %" PRId64 " kind %d key %" PRId64 " gap %.17g\n", sc->name, i,
             all[i].vertex_gid, all[i].kind, all[i].key, all[i].gap, brute[i].vertex_gid, brute[i].kind, brute[i].key, brute[i].gap);
  }
  int64_t multi = 0, most = 0; /* vertices with two or more triangle records; the most of one vertex */
  for (int64_t i = 0, run = 0; i < total; ++i) {
    kinds[all[i].kind]++;
    run = all[i].kind == PBNG_CONTACT_TRIANGLE ? (i > 0 && all[i - 1].vertex_gid == all[i].vertex_gid && all[i - 1].kind == PBNG_CONTACT_TRIANGLE ? run + 1 : 1) : 0;
    multi += run == 2, most = run > most ? run : most;
  }
  snprintf(what, sizeof(what), "%s: %" PRId64 " vertices with 2 or more triangle records (>= %" PRId64 "), at most %" PRId64 " (<= %d)", sc->name, multi, min_multi, most,
           PBNG_CONTACT_MAX_TRIANGLES);
  check(multi >= min_multi && most <= PBNG_CONTACT_MAX_TRIANGLES, what, (double)multi, (double)min_multi);
  snprintf(what, sizeof(what), "%s: the brute force's records, bitwise (%" PRId64 " triangle, %" PRId64 " obstacle records)", sc->name, kinds[0], kinds[1]);
  check(total == nbrute && bad == 0, what, (double)total, (double)nbrute);
  snprintf(what, sizeof(what), "%s: triangle records in [%" PRId64 ", %" PRId64 "], obstacle records >= %" PRId64, sc->name, min_triangle, max_triangle, min_obstacle);
  check(kinds[0] >= min_triangle && kinds[0] <= max_triangle && kinds[1] >= min_obstacle, what, (double)kinds[0], (double)kinds[1]);
  int64_t side[2], point, ties[3], both;
  sheet_tallies(r, total, all, side, &point, ties, &both);
  snprintf(what, sizeof(what), "%s: records on sheet sides 0/1 %" PRId64 "/%" PRId64 " (>= %" PRId64 "/%" PRId64 "), of points on faces %" PRId64 " (>= %" PRId64 ")", sc->name,
           side[0], side[1], ex->min_side[0], ex->min_side[1], point, ex->min_point);
  check(side[0] >= ex->min_side[0] && side[1] >= ex->min_side[1] && point >= ex->min_point, what, (double)side[0], (double)side[1]);
  snprintf(what, sizeof(what), "%s: records of points on a face's plane (s = 0): %" PRId64 " (>= %" PRId64 ")", sc->name, ties[2], ex->min_point_ties);
  check(ties[2] >= ex->min_point_ties, what, (double)ties[2], (double)ex->min_point_ties);
  snprintf(what, sizeof(what), "%s: no vertex with records on both sides of one sheet triangle", sc->name);
  check(both == 0, what, (double)both, 0);
  if (ex->min_ties > 0) {
    snprintf(what, sizeof(what), "%s: vertices in a sheet's plane (s = 0): %" PRId64 " records on side 0 (>= %" PRId64 "), none on side 1", sc->name, ties[0], ex->min_ties);
    check(ties[0] >= ex->min_ties && ties[1] == 0, what, (double)ties[0], (double)ties[1]);
  }
  if (side[0] + side[1] + point > 0)
    PetscCall(PetscPrintf(dm->comm, "sheets %s: records on sides 0/1 %" PRId64 "/%" PRId64 " (with s = 0 %" PRId64 "/%" PRId64 "), of points on faces %" PRId64 " (with s = 0 %" PRId64 ")\n",
                          sc->name, side[0], side[1], ties[0], ties[1], point, ties[2]));
  pbng_contact_detect_stats st, sum;
  pbng_contact_detect_get_stats(det, &st);
  PetscCallMPI(MPI_Allreduce(&st.candidates, &sum.candidates, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  PetscCallMPI(MPI_Allreduce(&st.halo_triangles, &sum.halo_triangles, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  int64_t nvert = 0;
  for (int64_t i = 0; i < m->nnodes; ++i) nvert += r->is_vertex[i];
  PetscCall(PetscPrintf(dm->comm, "digest %s %016" PRIx64 " records %" PRId64 " (%" PRId64 " vertices with several triangles; broad-phase candidates %" PRId64 " of %" PRId64 " vertex-triangle pairs, halo triangles %" PRId64 ")\n",
                        sc->name, digest(total, all), total, multi, sum.candidates, nvert * r->ntri, sum.halo_triangles));
  PetscCall(PetscFree(rec[0]));
  PetscCall(PetscFree(rec[1]));
  PetscCall(PetscFree(all));
  PetscCall(PetscFree(brute));
  PetscCall(pbng_contact_detector_destroy(&det));
  PetscCall(PetscFree(x));
  PetscCall(PetscFree(xg));
  PetscFunctionReturn(0);
}

/* ---- the scenarios ---- */

/* A sheet's shape: its grid (u, v) in [0, size[0]] x [0, size[1]] mapped to space (sheet_point). */
typedef enum {
  SHEET_NONE = 0, /* not a sheet */
  SHEET_FLAT,     /* origin + u e_u + v e_v (e_u, e_v unit; zero: x and y) */
  SHEET_FOLD,     /* flat along x for u < a, a half turn of radius b (up, back), flat again 2b above */
  SHEET_DRAPE,    /* over the unit box's top: (u, v) + origin at height 1 + a, falling at 45 degrees beyond its edges */
  SHEET_FLAP      /* hinged at the unit box's edge x = z = 1: a half turn of radius a (up, back over the top), then
                     flat back along -x, sinking by b per unit length */
} sheet_shape;

typedef struct {
  pbng_element_kind kind;
  int64_t n[3];
  double size[3];
  const char *file; /* or a mesh file */
  sheet_shape sheet; /* or a sheet of n[0] x n[1] vertices, size[0] x size[1] */
  int bending;       /* the sheet with its bend4 stencils */
  double a, b;       /* the shape's parameters */
  double origin[3], e_u[3], e_v[3];
  int weld;          /* the part's nodes on earlier parts' nodes are those (within 1e-9) */
} part_spec;

/* Where a sheet's grid point (u, v) goes. */
static void sheet_point(const part_spec *p, double u, double v, double x[3])
{
  const double pi = 3.14159265358979323846;
  switch (p->sheet) {
  case SHEET_FOLD: {
    const double a = p->a, r = p->b, th = (u - a) / r;
    if (u <= a) x[0] = u, x[2] = 0;
    else if (th <= pi) x[0] = a + r * sin(th), x[2] = r - r * cos(th);
    else x[0] = a - (u - a - pi * r), x[2] = 2 * r;
    x[1] = v;
    break;
  }
  case SHEET_DRAPE: {
    const double X = u + p->origin[0], Y = v + p->origin[1], ox = fmax(0, fmax(-X, X - 1)), oy = fmax(0, fmax(-Y, Y - 1));
    x[0] = X, x[1] = Y, x[2] = 1 + p->a - sqrt(ox * ox + oy * oy);
    return;
  }
  case SHEET_FLAP: {
    const double r = p->a, th = u / r;
    if (th <= pi) x[0] = 1 + r * sin(th), x[2] = 1 + r - r * cos(th);
    else x[0] = 1 - (u - pi * r), x[2] = 1 + 2 * r - p->b * (u - pi * r);
    x[1] = v;
    return;
  }
  default: x[0] = u, x[1] = v, x[2] = 0;
  }
  for (int k = 0; k < 3; ++k) x[k] += p->origin[k];
}

/* A sheet part: pbng_sheet_grid in the xy plane from the origin, each vertex moved by sheet_point (a
 * flat sheet keeps the grid's own arithmetic: origin + u e_u + v e_v exactly as pbng_sheet_grid has it). */
static PetscErrorCode sheet_part(const part_spec *p, pbng_mesh *m)
{
  pbng_sheet sh;
  const double o[3] = {0, 0, 0}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, z[3] = {0, 0, 0};

  PetscFunctionBeginUser;
  if (p->sheet == SHEET_FLAT) {
    PetscCall(pbng_sheet_grid(p->n[0], p->n[1], p->size[0], p->size[1], p->origin, memcmp(p->e_u, z, sizeof(z)) ? p->e_u : ex, memcmp(p->e_v, z, sizeof(z)) ? p->e_v : ey, &sh));
  } else {
    PetscCall(pbng_sheet_grid(p->n[0], p->n[1], p->size[0], p->size[1], o, ex, ey, &sh));
    for (int64_t i = 0; i < sh.nnodes; ++i) sheet_point(p, sh.X[3 * i], sh.X[3 * i + 1], &sh.X[3 * i]);
  }
  PetscCall(pbng_mesh_from_sheet(&sh, p->bending, m));
  PetscCall(pbng_sheet_destroy(&sh));
  PetscFunctionReturn(0);
}

typedef struct {
  scenario sc;
  part_spec part[MAX_BODIES];
  detect_expect ex;
} detect_case;

static PetscErrorCode make_case_mesh(pbng_mesh *m, void *ctx)
{
  detect_case *dc = ctx;

  PetscFunctionBeginUser;
  for (int b = 0; b < dc->sc.nbodies; ++b) {
    const part_spec *p = &dc->part[b];
    pbng_mesh one;
    if (p->file) PetscCall(read_data(p->file, &one));
    else if (p->sheet) PetscCall(sheet_part(p, &one));
    else PetscCall(grid(p->kind, p->n[0], p->n[1], p->n[2], p->size[0], p->size[1], p->size[2], &one));
    dc->sc.first[b] = b == 0 ? 0 : m->nnodes;
    if (b == 0) *m = one;
    else PetscCall(append_mesh_welded(m, &one, p->weld));
  }
  dc->sc.first[dc->sc.nbodies] = m->nnodes;
  PetscFunctionReturn(0);
}

static void mat_mul(const double A[9], const double B[9], double C[9])
{
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

static void set_body(scenario *sc, int b, const double R[9], double cx, double cy, double cz, double sx, double sy, double sz)
{
  memcpy(sc->R[b], R, sizeof(sc->R[b]));
  sc->centre[b][0] = cx, sc->centre[b][1] = cy, sc->centre[b][2] = cz;
  sc->shift[b][0] = sx, sc->shift[b][1] = sy, sc->shift[b][2] = sz;
}

static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* Box [0,1]^3 (5^3 cells) and box [0,1] x [0,1.4] x [0,1] above it, both turned by up to 0.3 rad;
 * the upper one's bottom near the lower one's top (touching: within +-0.05) or 0.4 into it. */
static detect_case two_boxes(const char *name, pbng_element_kind kind, uint64_t seed, int touching)
{
  detect_case dc;
  double R[9];
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = name, dc.sc.nbodies = 2, dc.sc.noise = 0.01;
  dc.sc.opt.distance = 0.08;
  dc.part[0] = (part_spec){.kind = kind, .n = {6, 6, 6}, .size = {1, 1, 1}};
  dc.part[1] = (part_spec){.kind = kind, .n = {5, 7, 5}, .size = {1, 1.4, 1}};
  random_rotation(&seed, 0.3, R);
  set_body(&dc.sc, 0, R, 0.5, 0.5, 0.5, 0, 0, 0);
  random_rotation(&seed, 0.3, R);
  const double lift = touching ? 1.0 + 0.1 * (next_random(&seed) - 0.5) : 0.6;
  set_body(&dc.sc, 1, R, 0.5, 0.7, 0.5, 0.2 * (next_random(&seed) - 0.5), lift, 0.2 * (next_random(&seed) - 0.5));
  dc.ex.min_triangle = 5, dc.ex.max_triangle = INT64_MAX;
  return dc;
}

/* Three hexahedral bars 2 x 0.4 x 0.4 stacked along z, each turned about z at random (crossing) and
 * tilted by up to 0.05 rad, 0.4 +- 0.03 apart. */
static detect_case three_bars(uint64_t seed)
{
  detect_case dc;
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = "three crossing hex8 bars", dc.sc.nbodies = 3, dc.sc.noise = 0.005;
  dc.sc.opt.distance = 0.06;
  for (int b = 0; b < 3; ++b) {
    double Rz[9], tilt[9], R[9];
    const double z[3] = {0, 0, 1};
    dc.part[b] = (part_spec){.kind = PBNG_ELEMENT_HEX8, .n = {11, 3, 3}, .size = {2, 0.4, 0.4}};
    rotation(z, 3.14159265358979 * next_random(&seed), Rz);
    random_rotation(&seed, 0.05, tilt);
    mat_mul(Rz, tilt, R);
    set_body(&dc.sc, b, R, 1, 0.2, 0.2, 0, 0, b * (0.4 + 0.06 * (next_random(&seed) - 0.5)));
  }
  dc.ex.min_triangle = 5, dc.ex.max_triangle = INT64_MAX;
  return dc;
}

/* Two bodies: the first moved by shift0, the second turned about its centre c1 by up to max_angle
 * and moved by shift1. */
static detect_case two_bodies(const char *name, double d, part_spec p0, part_spec p1, const double shift0[3], uint64_t seed, double max_angle, const double c1[3],
                              const double shift1[3])
{
  detect_case dc;
  double R[9];
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = name, dc.sc.nbodies = 2, dc.sc.noise = 0.005;
  dc.sc.opt.distance = d;
  dc.part[0] = p0, dc.part[1] = p1;
  set_body(&dc.sc, 0, identity, 0, 0, 0, shift0[0], shift0[1], shift0[2]);
  random_rotation(&seed, max_angle, R);
  set_body(&dc.sc, 1, R, c1[0], c1[1], c1[2], shift1[0], shift1[1], shift1[2]);
  dc.ex.min_triangle = 5, dc.ex.max_triangle = INT64_MAX;
  return dc;
}

/* One hexahedron 8 x 0.5 x 8 (its triangles far larger than the hash's cells: the large list) under
 * a fine tetrahedral unit box turned by up to 0.2 rad, its bottom near the slab's top. */
static detect_case slab_and_box(uint64_t seed)
{
  const part_spec slab = {.kind = PBNG_ELEMENT_HEX8, .n = {2, 2, 2}, .size = {8, 0.5, 8}}, box = {.kind = PBNG_ELEMENT_TET4, .n = {6, 6, 6}, .size = {1, 1, 1}};
  const double shift0[3] = {-3.5, -0.5, -3.5}, c1[3] = {0.5, 0.5, 0.5}, shift1[3] = {0, 0.02, 0};
  return two_bodies("coarse slab under a fine box", 0.08, slab, box, shift0, seed, 0.2, c1, shift1);
}

/* The mixed hexahedron/prism/pyramid unit box (tests/data) twice, the second turned and set on top. */
static detect_case mixed_boxes(uint64_t seed)
{
  const part_spec box = {.file = "mixed_box_v41_ascii.msh"};
  const double shift0[3] = {0, 0, 0}, c1[3] = {0.5, 0.5, 0.5}, shift1[3] = {0.1, 1.02, -0.1};
  return two_bodies("mixed-kind boxes", 0.1, box, box, shift0, seed, 0.25, c1, shift1);
}

/* A bar 4 x 0.5 x 0.5 (h = 0.25) bent into a ring whose end faces are 0.05 apart at the centre line:
 * self-contact between the ends; without `self` no triangle record at all. */
static detect_case ring(const char *name, pbng_element_kind kind, int self)
{
  detect_case dc;
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = name, dc.sc.nbodies = 1, dc.sc.noise = 0.003;
  dc.sc.ring_length = 4, dc.sc.ring_gap = 0.05, dc.sc.ring_width = 0.5;
  dc.sc.opt.distance = 0.1, dc.sc.opt.self = self;
  dc.part[0] = (part_spec){.kind = kind, .n = {17, 3, 3}, .size = {4, 0.5, 0.5}};
  dc.ex.min_triangle = self ? 9 : 0, dc.ex.max_triangle = self ? INT64_MAX : 0;
  return dc;
}

/* A box on its edge pressed into a V-groove: two unit tetrahedral boxes turned by -+30 degrees about z
 * side by side, their top faces meeting in a valley (0.01 apart at its bottom), and a third one turned
 * by 45 degrees whose lowest edge lies 0.01 below the slopes' lower ends (d = 0.08). The edge's vertices
 * are behind both slopes, their closest points on the slopes' lower edges: they keep a triangle record
 * on both (the two slopes form a valley): 3 vertices measured, at least 3 required. */
static detect_case box_in_groove(void)
{
  detect_case dc;
  const double z[3] = {0, 0, 1}, pi = 3.14159265358979323846;
  double R[9];
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = "box on its edge in a V-groove", dc.sc.nbodies = 3, dc.sc.noise = 0.002;
  dc.sc.opt.distance = 0.08;
  for (int b = 0; b < 3; ++b) dc.part[b] = (part_spec){.kind = PBNG_ELEMENT_TET4, .n = {5, 5, 5}, .size = {1, 1, 1}};
  /* turned by phi about z, a box's top face centre is at (-0.5 sin phi, 0.5 cos phi) from its centre and
   * runs along (cos phi, sin phi): its lower end (phi = -30 degrees: the right one) at (0.683, 0.183) */
  const double end_x = 0.25 + 0.5 * cos(pi / 6), end_y = 0.5 * cos(pi / 6) - 0.25, gap = 0.005, lift = -0.01;
  rotation(z, -pi / 6, R);
  set_body(&dc.sc, 0, R, 0.5, 0.5, 0.5, -end_x - gap - 0.5, -0.5, 0);
  rotation(z, pi / 6, R);
  set_body(&dc.sc, 1, R, 0.5, 0.5, 0.5, end_x + gap - 0.5, -0.5, 0);
  rotation(z, pi / 4, R);
  set_body(&dc.sc, 2, R, 0.5, 0.5, 0.5, -0.5, end_y + lift + sqrt(0.5) - 0.5, 0);
  dc.ex.min_triangle = 5, dc.ex.max_triangle = INT64_MAX, dc.ex.min_multi = 3;
  return dc;
}

/* Two touching boxes among obstacles of every kind: a floor they dip into, a ball at an edge, a solid
 * box beside them, a container whose walls some vertices cross. */
static detect_case with_obstacles(uint64_t seed)
{
  detect_case dc = two_boxes("two tet4 boxes among obstacles", PBNG_ELEMENT_TET4, seed, 1);
  const char *spec[4] = {"plane:0,0.03,0,0,1,0", "sphere:1.05,1.0,0.5,0.3", "box:-0.6,0.2,0.2,-0.02,0.8,0.8", "container:-0.1,-0.2,-0.2,1.1,2.8,1.1"};
  for (int o = 0; o < 4; ++o) {
    const char *msg = pbng_obstacle_parse(spec[o], &dc.sc.opt.obstacle[o]);
    check(msg == NULL, spec[o], 0, 0);
  }
  dc.sc.opt.nobstacles = 4;
  dc.ex.min_obstacle = 20;
  dc.ex.min_triangle = 0;
  return dc;
}

/* ---- sheets (tri3 sides, bend4 stencils) ---- */

/* A sheet (15 x 15 vertices over 1.4 x 1.4, with or without its stencils) draped over a unit box of
 * 6^3 vertices: 0.004 above its top, falling at 45 degrees beyond its edges, turned by up to 0.05 rad
 * about the top's centre (slightly into the box at some edges); h = 0.01, d = 0.06. The sheet's
 * vertices are points (against the box's faces, from either side); the box's vertices meet the sheet's
 * lower side (side 1) and, where they came through, its upper one (side 0). */
static detect_case sheet_over_box(const char *name, pbng_element_kind kind, int bending, uint64_t seed)
{
  detect_case dc;
  double R[9];
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = name, dc.sc.nbodies = 2, dc.sc.noise = 0.006;
  dc.sc.opt.distance = 0.06, dc.sc.opt.sheet_offset = 0.01;
  dc.part[0] = (part_spec){.kind = kind, .n = {6, 6, 6}, .size = {1, 1, 1}};
  dc.part[1] = (part_spec){.n = {15, 15}, .size = {1.4, 1.4}, .sheet = SHEET_DRAPE, .bending = bending, .a = 0.004, .origin = {-0.2, -0.2, 0}};
  set_body(&dc.sc, 0, identity, 0, 0, 0, 0, 0, 0);
  random_rotation(&seed, 0.05, R);
  set_body(&dc.sc, 1, R, 0.5, 0.5, 1, 0, 0, 0);
  dc.ex.min_triangle = 100, dc.ex.max_triangle = INT64_MAX, dc.ex.min_side[0] = 5, dc.ex.min_side[1] = 10, dc.ex.min_point = 60;
  return dc;
}

/* A sheet 2.2 x 0.5 (23 x 6 vertices, stencils) folded onto itself: flat for 1, a half turn of radius
 * 0.01, flat again 0.02 above (noise 0.01), turned at random; h = 0.005, d = 0.06 (below the element
 * size 0.1). Self-contact between the layers (points against the other layer's facing side); none
 * without `self` (one body). */
static detect_case folded_sheet(const char *name, int self, uint64_t seed)
{
  detect_case dc;
  double R[9];
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = name, dc.sc.nbodies = 1, dc.sc.noise = 0.01;
  dc.sc.opt.distance = 0.06, dc.sc.opt.sheet_offset = 0.005, dc.sc.opt.self = self;
  dc.part[0] = (part_spec){.n = {23, 6}, .size = {2.2, 0.5}, .sheet = SHEET_FOLD, .bending = 1, .a = 1, .b = 0.01};
  random_rotation(&seed, 3, R);
  set_body(&dc.sc, 0, R, 0.5, 0.25, 0.01, 0.1, -0.2, 0.3);
  dc.ex.min_triangle = self ? 60 : 0, dc.ex.max_triangle = self ? INT64_MAX : 0, dc.ex.min_side[0] = self ? 60 : 0;
  return dc;
}

/* Two unit sheets of 11 x 11 vertices crossing at right angles, exactly: the first in z = 0, the second
 * in x = 0.5 from z = -0.5 to 0.5, no noise, no motion. The vertices on the crossing line lie in the
 * other sheet's plane (s = 0 exactly: the two sheets' vertices coincide there): they pair with side 0
 * only; their neighbours 0.1 away pair with the side they are on (d = 0.12, h = 0.01). */
static detect_case crossing_sheets_exact(void)
{
  detect_case dc;
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = "two sheets crossing at right angles (vertices in the other's plane)", dc.sc.nbodies = 2, dc.sc.noise = 0;
  dc.sc.opt.distance = 0.12, dc.sc.opt.sheet_offset = 0.01;
  dc.part[0] = (part_spec){.n = {11, 11}, .size = {1, 1}, .sheet = SHEET_FLAT, .bending = 1};
  dc.part[1] = (part_spec){.n = {11, 11}, .size = {1, 1}, .sheet = SHEET_FLAT, .origin = {0.5, 0, -0.5}, .e_u = {0, 1, 0}, .e_v = {0, 0, 1}};
  set_body(&dc.sc, 0, identity, 0, 0, 0, 0, 0, 0);
  set_body(&dc.sc, 1, identity, 0, 0, 0, 0, 0, 0);
  dc.ex.min_triangle = 60, dc.ex.max_triangle = INT64_MAX, dc.ex.min_side[0] = 40, dc.ex.min_side[1] = 20, dc.ex.min_ties = 22;
  return dc;
}

/* A unit sheet of 11 x 11 vertices lying exactly on the top face of a unit tetrahedral box of 6^3
 * vertices (every other sheet vertex on a box node), no noise, no motion (d = 0.05, h = 0.01): the sheet's
 * vertices are points on the top's triangles (s = 0: accepted), the box's top vertices lie in the sheet
 * (s = 0: side 0 only). */
static detect_case sheet_on_box_exact(void)
{
  detect_case dc;
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = "a sheet lying on a box's top face (vertices in each other's planes)", dc.sc.nbodies = 2, dc.sc.noise = 0;
  dc.sc.opt.distance = 0.05, dc.sc.opt.sheet_offset = 0.01;
  dc.part[0] = (part_spec){.kind = PBNG_ELEMENT_TET4, .n = {6, 6, 6}, .size = {1, 1, 1}};
  dc.part[1] = (part_spec){.n = {11, 11}, .size = {1, 1}, .sheet = SHEET_FLAT, .bending = 1, .origin = {0, 0, 1}};
  set_body(&dc.sc, 0, identity, 0, 0, 0, 0, 0, 0);
  set_body(&dc.sc, 1, identity, 0, 0, 0, 0, 0, 0);
  dc.ex.min_triangle = 157, dc.ex.max_triangle = INT64_MAX, dc.ex.min_side[0] = 36, dc.ex.min_point = 121, dc.ex.min_ties = 36, dc.ex.min_point_ties = 121;
  return dc;
}

/* Two sheets 1.2 x 1.2 (13 x 13 vertices, stencils), the second 0.015 above the first, turned about z
 * by 0.3 to 1.3 rad and tilted by up to 0.04 rad: crossing each other along a line (h = 0.01, d = 0.05). */
static detect_case crossing_sheets(uint64_t seed)
{
  detect_case dc;
  const double z[3] = {0, 0, 1};
  double Rz[9], tilt[9], R[9];
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = "two sheets crossing, nearly parallel", dc.sc.nbodies = 2, dc.sc.noise = 0.005;
  dc.sc.opt.distance = 0.05, dc.sc.opt.sheet_offset = 0.01;
  for (int b = 0; b < 2; ++b) dc.part[b] = (part_spec){.n = {13, 13}, .size = {1.2, 1.2}, .sheet = SHEET_FLAT, .bending = 1, .origin = {-0.6, -0.6, 0}};
  set_body(&dc.sc, 0, identity, 0, 0, 0, 0, 0, 0);
  rotation(z, 0.3 + next_random(&seed), Rz);
  random_rotation(&seed, 0.04, tilt);
  mat_mul(tilt, Rz, R);
  set_body(&dc.sc, 1, R, 0, 0, 0, 0, 0, 0.015);
  dc.ex.min_triangle = 200, dc.ex.max_triangle = INT64_MAX, dc.ex.min_side[0] = 80, dc.ex.min_side[1] = 80;
  return dc;
}

/* A sheet 1.4 x 1.4 (15 x 15, stencils) 0.02 above a floor, under a unit tetrahedral box 0.025 above it,
 * among obstacles: the floor, a ball through the sheet at a corner, a solid box at an edge, a
 * container whose walls are 0.05 from the sheet's edges (h = 0.01, d = 0.06). */
static detect_case sheet_among_obstacles(void)
{
  detect_case dc;
  const char *spec[4] = {"plane:0,0,0,0,0,1", "sphere:1.1,1.1,-0.2,0.25", "box:-0.5,0.4,-0.1,-0.1,0.6,0.1", "container:-0.25,-0.25,-0.5,1.25,1.3,2"};
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = "a sheet under a box among obstacles", dc.sc.nbodies = 2, dc.sc.noise = 0.004;
  dc.sc.opt.distance = 0.06, dc.sc.opt.sheet_offset = 0.01;
  dc.part[0] = (part_spec){.n = {15, 15}, .size = {1.4, 1.4}, .sheet = SHEET_FLAT, .bending = 1, .origin = {-0.2, -0.2, 0.02}};
  dc.part[1] = (part_spec){.kind = PBNG_ELEMENT_TET4, .n = {6, 6, 6}, .size = {1, 1, 1}};
  set_body(&dc.sc, 0, identity, 0, 0, 0, 0, 0, 0);
  set_body(&dc.sc, 1, identity, 0, 0, 0, 0, 0, 0.045);
  for (int o = 0; o < 4; ++o) {
    const char *msg = pbng_obstacle_parse(spec[o], &dc.sc.opt.obstacle[o]);
    check(msg == NULL, spec[o], 0, 0);
  }
  dc.sc.opt.nobstacles = 4;
  dc.ex.min_obstacle = 150, dc.ex.min_triangle = 100, dc.ex.max_triangle = INT64_MAX, dc.ex.min_side[0] = 20, dc.ex.min_point = 60;
  return dc;
}

/* A flap (10 x 6 vertices over 0.9 x 1, stencils) hinged to a unit tetrahedral box (6^3 vertices) along
 * its edge x = z = 1 (its first row welded to the box's nodes there: one body), turned back over the
 * top 0.03 above it and sinking by 0.06 per unit length (into the box beyond x ~ 0.45); h = 0.005,
 * d = 0.06. With `self`: the box's top vertices (with normals) meet the flap's lower side where they
 * face it, the flap's vertices (points) the top's faces where they are above them; the penetrated ones
 * get nothing (own body: behind, or not facing). Without `self`, nothing. */
static detect_case flap_on_box(const char *name, int self)
{
  detect_case dc;
  memset(&dc, 0, sizeof(dc));
  dc.sc.name = name, dc.sc.nbodies = 2, dc.sc.noise = 0.004;
  dc.sc.opt.distance = 0.06, dc.sc.opt.sheet_offset = 0.005, dc.sc.opt.self = self;
  dc.part[0] = (part_spec){.kind = PBNG_ELEMENT_TET4, .n = {6, 6, 6}, .size = {1, 1, 1}};
  dc.part[1] = (part_spec){.n = {10, 6}, .size = {0.9, 1}, .sheet = SHEET_FLAP, .bending = 1, .a = 0.015, .b = 0.06, .weld = 1};
  set_body(&dc.sc, 0, identity, 0, 0, 0, 0, 0, 0);
  set_body(&dc.sc, 1, identity, 0, 0, 0, 0, 0, 0);
  dc.ex.min_triangle = self ? 30 : 0, dc.ex.max_triangle = self ? INT64_MAX : 0, dc.ex.min_side[0] = self ? 6 : 0, dc.ex.min_point = self ? 14 : 0;
  return dc;
}

/* Two sheets of 3 x 3 vertices 2 apart, joined by one bend4 row alone (two nodes of the first, one of the
 * second and a node of no triangle): one body, whose stencil-only node is no surface vertex. */
static PetscErrorCode make_bridge_mesh(pbng_mesh *m, void *ctx)
{
  detect_case *dc = ctx;
  pbng_mesh two;

  PetscFunctionBeginUser;
  PetscCall(make_case_mesh(&two, dc));
  PetscCall(pbng_mesh_alloc_mixed(m, 4, two.nnodes + 1, two.nelems + 1));
  PetscCall(PetscArraycpy(m->X, two.X, 3 * two.nnodes));
  m->X[3 * two.nnodes] = 2, m->X[3 * two.nnodes + 1] = 2, m->X[3 * two.nnodes + 2] = 1;
  for (int64_t e = 0; e < two.nelems; ++e) {
    for (int k = 0; k < 4; ++k) m->elems[4 * e + k] = k < 3 ? two.elems[two.nen * e + k] : -1;
    m->kind[e] = PBNG_ELEMENT_TRI3;
  }
  const int32_t bridge[4] = {8, 4, (int32_t)dc->sc.first[1], (int32_t)two.nnodes};
  memcpy(&m->elems[4 * two.nelems], bridge, sizeof(bridge));
  m->kind[two.nelems] = PBNG_ELEMENT_BEND4;
  snprintf(m->source, sizeof(m->source), "test mesh");
  PetscCall(pbng_mesh_destroy(&two));
  PetscFunctionReturn(0);
}

/* The surface of meshes with sheets: two sides per tri3 element, none from bend4 (whose rows still join
 * bodies and neighbours); the sides' volumes cancel (0 for a sheet alone, the box's beside it). */
static PetscErrorCode check_sheet_surfaces(void)
{
  struct {
    detect_case dc;
    mesh_maker make;
    surface_expect ex;
  } cases[] = {
    {{.sc.nbodies = 1, .part = {{.n = {6, 5}, .size = {1, 1}, .sheet = SHEET_FLAT}}}, make_case_mesh, {"tri3 sheet 6 x 5", 2 * 2 * 5 * 4, 30, 1, 0}},
    {{.sc.nbodies = 1, .part = {{.n = {7, 4}, .size = {1.2, 0.5}, .sheet = SHEET_FOLD, .bending = 1, .a = 0.5, .b = 0.05}}}, make_case_mesh,
     {"folded sheet 7 x 4 with stencils", 2 * 2 * 6 * 3, 28, 1, 0}},
    {{.sc.nbodies = 2, .part = {{.kind = PBNG_ELEMENT_TET4, .n = {4, 4, 4}, .size = {1, 1, 1}}, {.n = {5, 5}, .size = {1, 1}, .sheet = SHEET_FLAT, .bending = 1, .origin = {0, 0, 2}}}},
     make_case_mesh, {"tet4 box 3^3 and a sheet 5 x 5 with stencils", 108 + 2 * 2 * 16, 56 + 25, 2, 1}},
    {{.sc.nbodies = 2, .part = {{.kind = PBNG_ELEMENT_TET4, .n = {6, 6, 6}, .size = {1, 1, 1}}, {.n = {10, 6}, .size = {0.9, 1}, .sheet = SHEET_FLAP, .bending = 1, .a = 0.015, .b = 0.06, .weld = 1}}},
     make_case_mesh, {"tet4 box 5^3 with a flap hinged to an edge", 300 + 2 * 2 * 9 * 5, 152 + 54, 1, 1}},
    {{.sc.nbodies = 2, .part = {{.n = {3, 3}, .size = {1, 1}, .sheet = SHEET_FLAT}, {.n = {3, 3}, .size = {1, 1}, .sheet = SHEET_FLAT, .origin = {3, 0, 0}}}}, make_bridge_mesh,
     {"two sheets joined by a bend4 row alone", 2 * 2 * 8, 18, 1, 0}},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    pbng_mesh m;
    reference r;
    pbng_dmesh dm;
    pbng_halo halo;
    pbng_surface s;
    PetscCall(setup(cases[c].make, &cases[c].dc, &m, &r, &dm, &halo));
    PetscCall(pbng_surface_create(&dm, &s));
    PetscCall(check_surface(&cases[c].ex, &m, &r, &dm, &s));
    PetscCall(pbng_surface_destroy(&s));
    PetscCall(teardown(&m, &r, &dm, &halo));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode check_detections(void)
{
  detect_case cases[] = {
    two_boxes("two tet4 boxes touching (seed 1)", PBNG_ELEMENT_TET4, 1, 1),
    two_boxes("two tet4 boxes touching (seed 2)", PBNG_ELEMENT_TET4, 2, 1),
    two_boxes("two tet4 boxes overlapping", PBNG_ELEMENT_TET4, 3, 0),
    two_boxes("two tet10 boxes touching", PBNG_ELEMENT_TET10, 4, 1),
    two_boxes("two hex8 boxes overlapping", PBNG_ELEMENT_HEX8, 5, 0),
    three_bars(6),
    slab_and_box(7),
    mixed_boxes(8),
    ring("hex8 ring, self-contact", PBNG_ELEMENT_HEX8, 1),
    ring("tet4 ring, self-contact", PBNG_ELEMENT_TET4, 1),
    ring("tet4 ring without self-contact", PBNG_ELEMENT_TET4, 0),
    ring("hex8 ring, self-contact, d above the element size", PBNG_ELEMENT_HEX8, 1),
    with_obstacles(9),
    box_in_groove(),
    sheet_over_box("sheet with stencils draped over a tet4 box", PBNG_ELEMENT_TET4, 1, 10),
    sheet_over_box("tri3 sheet draped over a hex8 box", PBNG_ELEMENT_HEX8, 0, 11),
    folded_sheet("sheet folded onto itself, self-contact", 1, 12),
    folded_sheet("sheet folded onto itself without self-contact", 0, 12),
    crossing_sheets_exact(),
    sheet_on_box_exact(),
    crossing_sheets(13),
    sheet_among_obstacles(),
    flap_on_box("flap hinged to a box, folded back over it, self-contact", 1),
    flap_on_box("flap hinged to a box without self-contact", 0),
  };
  cases[4].sc.opt.self = 1; /* two bodies and self-contact at once */
  cases[11].sc.opt.distance = 0.3; /* h = 0.25: only the exclusion of the vertex's element neighbours keeps them out */
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    pbng_mesh m;
    reference r;
    pbng_dmesh dm;
    pbng_halo halo;
    PetscCall(setup(make_case_mesh, &cases[c], &m, &r, &dm, &halo));
    PetscCall(check_detection(&cases[c].sc, &cases[c].ex, &m, &r, &dm));
    PetscCall(teardown(&m, &r, &dm, &halo));
  }
  PetscFunctionReturn(0);
}

/* Errors, on every rank alike: a non-finite surface position (set on one rank only, the smallest
 * surface vertex's id named), a distance that is not positive, too many obstacles. */
static PetscErrorCode check_errors(void)
{
  detect_case dc = two_boxes("errors", PBNG_ELEMENT_TET4, 1, 1);
  pbng_mesh m;
  reference r;
  pbng_dmesh dm;
  pbng_halo halo;
  pbng_contact_detector *det = NULL;
  pbng_contact_record *rec = NULL;
  int32_t n = -1;
  double *x;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(setup(make_case_mesh, &dc, &m, &r, &dm, &halo));
  PetscCall(PetscMalloc1(3 * (int64_t)dm.nlocal, &x));
  for (int32_t i = 0; i < dm.nlocal; ++i) place(&dc.sc, dm.global_node[i], &dm.X[3 * i], &x[3 * i]);
  int64_t first = 0; /* the smallest surface vertex: corrupt it on its owner only */
  while (!r.is_vertex[first]) ++first;
  for (int32_t i = 0; i < dm.nowned; ++i)
    if (dm.global_node[i] == first) x[3 * i + 1] = NAN;
  PetscCall(pbng_contact_detector_create(&dm, &dc.sc.opt, &det));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = pbng_contact_detect(det, x, &n, &rec);
  PetscCall(PetscPopErrorHandler());
  check(ierr == PETSC_ERR_FP && rec == NULL && n == -1, "a non-finite surface position is an error on every rank", ierr, PETSC_ERR_FP);
  PetscCall(pbng_contact_detector_destroy(&det));
  pbng_contact_detect_options bad = dc.sc.opt;
  for (int k = 0; k < 2; ++k) {
    bad = dc.sc.opt;
    if (k == 0) bad.distance = 0;
    else bad.nobstacles = PBNG_MAX_OBSTACLES + 1;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = pbng_contact_detector_create(&dm, &bad, &det);
    PetscCall(PetscPopErrorHandler());
    check(ierr == PETSC_ERR_ARG_OUTOFRANGE && det == NULL, k == 0 ? "distance 0 refused" : "too many obstacles refused", ierr, PETSC_ERR_ARG_OUTOFRANGE);
  }
  PetscCall(PetscFree(x));
  PetscCall(teardown(&m, &r, &dm, &halo));
  PetscFunctionReturn(0);
}

/* ---- the swept rules (pbng_contact_detect_swept, docs/contact.md#crossings) ---- */

/* Positions of the two unturned boxes of swept_case with box 1's bottom at height `lift`. */
static void place_boxes(scenario *sc, double lift, const pbng_dmesh *dm, double *x)
{
  sc->shift[1][1] = lift;
  for (int32_t i = 0; i < dm->nlocal; ++i) place(sc, dm->global_node[i], &dm->X[3 * i], &x[3 * i]);
}

/* This rank's deep records as the pairs the next detection keeps. */
static PetscErrorCode deep_pairs_of(int32_t n, const pbng_contact_record *rec, int32_t *nk, pbng_contact_deep_pair **keep)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(n + 1, keep));
  *nk = 0;
  for (int32_t k = 0; k < n; ++k)
    if (rec[k].deep) (*keep)[(*nk)++] = (pbng_contact_deep_pair){rec[k].vertex_gid, rec[k].key};
  PetscFunctionReturn(0);
}

/* Records with deep set and those deeper than `depth` (gap < -depth), over the ranks; the largest |gap + want| of
 * the deep ones. */
static PetscErrorCode count_deep(MPI_Comm comm, int32_t n, const pbng_contact_record *rec, double depth, double want, int64_t c[2], double *err)
{
  int64_t mine[2] = {0, 0};
  double e = 0;

  PetscFunctionBeginUser;
  for (int32_t k = 0; k < n; ++k) {
    mine[0] += rec[k].deep, mine[1] += rec[k].gap < -depth;
    if (rec[k].deep) e = fmax(e, fabs(rec[k].gap + want));
  }
  PetscCallMPI(MPI_Allreduce(mine, c, 2, MPI_INT64_T, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(&e, err, 1, MPI_DOUBLE, MPI_MAX, comm));
  PetscFunctionReturn(0);
}

/* Box 1 ([0.13, 1.13] x [lift, lift + 1.4] x [0.07, 1.07], tet4) moves from 0.1 above box 0 ([0, 1]^3) to 0.21 into
 * it between two detections (d = 0.08): the distance rule sees none of the vertices carried deeper than d; the
 * crossing rule gives each of them a record with the face it passed through (gap -0.21): the vertices of box 1's
 * bottom and of box 0's top now inside the other box farther than d from each of its faces (12 and 16, counted here
 * from the rest positions; those nearer a side face have the distance rule's record with it); a detection at the same positions from the kept pairs alone (a restart) gives the same records,
 * bitwise; back above box 0, no deep record is left; 1 and 3 threads agree; the records' digest is printed for the
 * ranks test. */
static PetscErrorCode check_swept_rules(void)
{
  detect_case dc = two_boxes("swept: box 1 carried 0.21 into box 0", PBNG_ELEMENT_TET4, 1, 1);
  pbng_mesh m;
  reference r;
  pbng_dmesh dm;
  pbng_halo halo;
  pbng_contact_detector *det;
  pbng_contact_record *rec[4], *all;
  pbng_contact_deep_pair *keep = NULL;
  int32_t n[4], nk = 0;
  int64_t c[2], total, expect = 0;
  double *xa, *xb, err;
  char what[200];

  PetscFunctionBeginUser;
  dc.sc.noise = 0;
  set_body(&dc.sc, 0, identity, 0.5, 0.5, 0.5, 0, 0, 0);
  set_body(&dc.sc, 1, identity, 0.5, 0.7, 0.5, 0.13, 0, 0.07);
  PetscCall(setup(make_case_mesh, &dc, &m, &r, &dm, &halo));
  for (int64_t i = 0; i < m.nnodes; ++i) { /* the vertices the crossing rule must pair, from the rest positions: those
                                              carried inside the other box farther than d from each of its faces */
    const double *X = &m.X[3 * i], d = dc.sc.opt.distance;
    if (i >= dc.sc.first[1] && fabs(X[1]) < 1e-12) { /* box 1's bottom, at y = 0.79 */
      const double x = X[0] + 0.13, z = X[2] + 0.07;
      expect += fmin(fmin(0.21, fmin(x, 1 - x)), fmin(z, 1 - z)) > d;
    } else if (i < dc.sc.first[1] && fabs(X[1] - 1) < 1e-12) /* box 0's top, 0.21 above box 1's bottom */
      expect += fmin(fmin(0.21, fmin(X[0] - 0.13, 1.13 - X[0])), fmin(X[2] - 0.07, 1.07 - X[2])) > d;
  }
  PetscCall(PetscMalloc2(3 * (int64_t)dm.nlocal + 1, &xa, 3 * (int64_t)dm.nlocal + 1, &xb));
  place_boxes(&dc.sc, 1.1, &dm, xa);
  place_boxes(&dc.sc, 0.79, &dm, xb);
  PetscCall(pbng_contact_detector_create(&dm, &dc.sc.opt, &det));
  PetscCall(pbng_contact_detect(det, xb, &n[0], &rec[0]));
  PetscCall(count_deep(dm.comm, n[0], rec[0], dc.sc.opt.distance, 0.21, c, &err));
  snprintf(what, sizeof(what), "%s: the distance rule alone pairs no vertex deeper than d (%" PRId64 " records)", dc.sc.name, c[1]);
  check(c[1] == 0 && c[0] == 0, what, (double)c[1], 0);
  const int threads = omp_get_max_threads();
  for (int t = 1; t < 3; ++t) {
    omp_set_num_threads(t == 1 ? 1 : 3);
    PetscCall(pbng_contact_detect_swept(det, xb, xa, 0, NULL, &n[t], &rec[t]));
  }
  omp_set_num_threads(threads);
  snprintf(what, sizeof(what), "%s: 1 and 3 threads give the same records", dc.sc.name);
  check(n[1] == n[2] && !memcmp(rec[1], rec[2], sizeof(pbng_contact_record) * (size_t)n[1]), what, n[1], n[2]);
  PetscCall(count_deep(dm.comm, n[1], rec[1], dc.sc.opt.distance, 0.21, c, &err));
  snprintf(what, sizeof(what), "%s: crossings pair the %" PRId64 " vertices carried through a face (%" PRId64 " deep records)", dc.sc.name, expect, c[0]);
  check(c[0] == expect && c[1] == expect && expect == 28, what, (double)c[0], (double)expect);
  snprintf(what, sizeof(what), "%s: each with the face it passed: gap -0.21", dc.sc.name);
  check(err < 1e-12, what, err, 1e-12);
  PetscCall(deep_pairs_of(n[1], rec[1], &nk, &keep));
  PetscCall(pbng_contact_detect_swept(det, xb, NULL, nk, keep, &n[3], &rec[3]));
  snprintf(what, sizeof(what), "%s: the kept pairs alone (a restart's detection) give the same records, bitwise", dc.sc.name);
  int same = n[3] == n[1] && !memcmp(rec[3], rec[1], sizeof(pbng_contact_record) * (size_t)n[1]), all_same;
  PetscCallMPI(MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, dm.comm));
  check(all_same, what, n[3], n[1]);
  PetscCall(gather_records(dm.comm, n[1], rec[1], &total, &all));
  PetscCall(PetscPrintf(dm.comm, "digest %s %016" PRIx64 " records %" PRId64 "\n", dc.sc.name, digest(total, all), total));
  PetscCall(PetscFree(all));
  PetscCall(PetscFree(rec[0]));
  PetscCall(pbng_contact_detect_swept(det, xa, xb, nk, keep, &n[0], &rec[0]));
  PetscCall(count_deep(dm.comm, n[0], rec[0], dc.sc.opt.distance, 0.21, c, &err));
  snprintf(what, sizeof(what), "%s: back above box 0, no deep record is kept", dc.sc.name);
  check(c[0] == 0, what, (double)c[0], 0);
  for (int t = 0; t < 4; ++t) PetscCall(PetscFree(rec[t]));
  PetscCall(PetscFree(keep));
  PetscCall(pbng_contact_detector_destroy(&det));
  PetscCall(PetscFree2(xa, xb));
  PetscCall(teardown(&m, &r, &dm, &halo));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(check_surfaces());
  PetscCall(check_sheet_surfaces());
  PetscCall(check_detections());
  PetscCall(check_swept_rules());
  PetscCall(check_errors());
  int all;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_contact_detect: %d checks, %d failures\n", checks, all));
  PetscCall(PetscFinalize());
  return all ? 1 : 0;
}
