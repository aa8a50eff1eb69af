#include "mesh/coarsen.h"
#include "core/csr.h"
#include "core/grow.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/element.h"
#include "core/vec3.h"

enum { NODE_INTERIOR = 0, NODE_SURFACE = 1, NODE_RIDGE = 2, NODE_CORNER = 3 };

pbng_coarsen_options pbng_coarsen_defaults(void) { return (pbng_coarsen_options){.target_ratio = 8.0, .quality_min = 0.1, .feature_angle = 30.0}; }

/* A growable list of int32. */
typedef struct {
  int32_t *item;
  int32_t n;
  int64_t cap;
} int_list;

static PetscErrorCode list_push(int_list *l, int32_t v)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_grow(&l->item, sizeof(*l->item), l->n + 1, &l->cap));
  l->item[l->n++] = v;
  PetscFunctionReturn(0);
}

static void list_remove(int_list *l, int32_t v)
{
  for (int32_t k = 0; k < l->n; ++k)
    if (l->item[k] == v) {
      l->item[k] = l->item[--l->n];
      return;
    }
}

/* The mesh while it is being coarsened: tetrahedra (dead ones marked), the tetrahedra around each
 * node, the nodes' class, boundary condition and node-set membership. */
typedef struct {
  int64_t nv, nt;
  double *X;          /* [nv][3] rest positions (kept nodes may be moved by smoothing) */
  int32_t (*tet)[4];  /* [nt] */
  uint8_t *alive;     /* [nt] */
  int_list *around;   /* [nv] tetrahedra around each node */
  uint8_t *removed;   /* [nv] collapsed, or in no element */
  uint8_t *kind;      /* [nv] NODE_* */
  uint8_t *locked;    /* [nv] never removed (weak constraints, too many node sets) */
  uint64_t *sets;     /* [nv] bit s: in node set s */
  int8_t *bc;         /* [nv] */
  int32_t *mark;      /* [nv] scratch marks */
  int32_t clock;
  double cos_feature, quality_min;
} work_mesh;

static const double *pos(const work_mesh *w, int32_t v) { return &w->X[3 * (int64_t)v]; }

/* 6 sqrt(2) V / l_max^3: 1 for the regular tetrahedron, negative when inverted. */
static double tet_quality(const double *p0, const double *p1, const double *p2, const double *p3)
{
  const double *X[4] = {p0, p1, p2, p3};
  double lmax = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {
      double d[3];
      vec3_sub(X[a], X[b], d);
      lmax = fmax(lmax, vec3_dot(d, d));
    }
  lmax = sqrt(lmax);
  return lmax > 0 ? 6.0 * sqrt(2.0) * pbng_tet_signed_volume(p0, p1, p2, p3) / (lmax * lmax * lmax) : -1.0;
}

/* Normal (b - a) x (c - a) of the face (a, b, c). */
static void face_normal(const double *a, const double *b, const double *c, double n[3])
{
  double u[3], v[3];
  vec3_sub(b, a, u), vec3_sub(c, a, v);
  vec3_cross(u, v, n);
}

static int cos_angle_at_least(const double *n1, const double *n2, double c)
{
  const double l = sqrt(vec3_dot(n1, n1) * vec3_dot(n2, n2));
  return l > 0 && vec3_dot(n1, n2) >= c * l;
}

/* The face of tet t opposite local vertex k, ordered so that its normal points out of t. */
static void outward_face(const work_mesh *w, int32_t t, int k, int32_t f[3])
{
  static const int face[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}}; /* for a positive tetrahedron */
  for (int j = 0; j < 3; ++j) f[j] = w->tet[t][face[k][j]];
}

static int tet_has(const work_mesh *w, int32_t t, int32_t v)
{
  return w->tet[t][0] == v || w->tet[t][1] == v || w->tet[t][2] == v || w->tet[t][3] == v;
}

/* Whether the face (a, b, c) (any order) belongs to exactly one live tetrahedron around a: a boundary face. */
static int is_boundary_face(const work_mesh *w, int32_t a, int32_t b, int32_t c)
{
  int count = 0;
  const int_list *l = &w->around[a];
  for (int32_t k = 0; k < l->n; ++k) count += tet_has(w, l->item[k], b) && tet_has(w, l->item[k], c);
  return count == 1;
}

/* The outward normals of the boundary faces containing both a and b (at most 4 kept); their count. */
static int boundary_faces_at_edge(const work_mesh *w, int32_t a, int32_t b, double n[4][3])
{
  int count = 0;
  const int_list *l = &w->around[a];
  for (int32_t k = 0; k < l->n; ++k) {
    const int32_t t = l->item[k];
    if (!tet_has(w, t, b)) continue;
    for (int j = 0; j < 4; ++j) {
      int32_t f[3];
      outward_face(w, t, j, f);
      const int with_a = f[0] == a || f[1] == a || f[2] == a, with_b = f[0] == b || f[1] == b || f[2] == b;
      if (!with_a || !with_b) continue;
      const int32_t c = (f[0] != a && f[0] != b) ? f[0] : ((f[1] != a && f[1] != b) ? f[1] : f[2]);
      if (!is_boundary_face(w, a, b, c)) continue;
      if (count < 4) face_normal(pos(w, f[0]), pos(w, f[1]), pos(w, f[2]), n[count]);
      ++count;
    }
  }
  return count;
}

/* The edge types a collapse may follow: any edge from an interior node, a boundary edge from a surface
 * node, a ridge (two boundary faces meeting at more than the feature angle) from a ridge node. */
static int edge_allowed(const work_mesh *w, int32_t a, int32_t b)
{
  double n[4][3];
  if (w->kind[a] == NODE_INTERIOR) return 1;
  const int nb = boundary_faces_at_edge(w, a, b, n);
  if (w->kind[a] == NODE_SURFACE) return nb >= 1;
  return nb == 2 && !cos_angle_at_least(n[0], n[1], w->cos_feature);
}

/* Whether a may be collapsed into b by class, boundary condition and node sets (not yet geometry). */
static int compatible(const work_mesh *w, int32_t a, int32_t b)
{
  if (w->locked[a] || w->kind[a] == NODE_CORNER || w->kind[b] < w->kind[a]) return 0;
  if (w->bc[a] >= 0 && w->bc[a] != w->bc[b]) return 0; /* a prescribed region must not shrink */
  return (w->sets[a] & ~w->sets[b]) == 0;
}

static int32_t next_clock(work_mesh *w) { return ++w->clock; }

/* The link condition on nodes: every node adjacent to both a and b lies in a tetrahedron with edge ab. */
static int link_condition(work_mesh *w, int32_t a, int32_t b)
{
  const int32_t ring = next_clock(w);
  const int_list *la = &w->around[a], *lb = &w->around[b];
  for (int32_t k = 0; k < la->n; ++k)
    if (tet_has(w, la->item[k], b))
      for (int j = 0; j < 4; ++j) w->mark[w->tet[la->item[k]][j]] = ring;
  const int32_t nbr_a = next_clock(w);
  for (int32_t k = 0; k < la->n; ++k)
    for (int j = 0; j < 4; ++j)
      if (w->mark[w->tet[la->item[k]][j]] != ring) w->mark[w->tet[la->item[k]][j]] = nbr_a;
  for (int32_t k = 0; k < lb->n; ++k)
    for (int j = 0; j < 4; ++j) {
      const int32_t v = w->tet[lb->item[k]][j];
      if (v != a && v != b && w->mark[v] == nbr_a) return 0;
    }
  return 1;
}

/* Geometry of a -> b: the smallest quality of the tetrahedra around a without b once a is replaced by b,
 * or -1 when one falls below quality_min or a boundary face around a without b would turn by more than
 * the feature angle. */
static double collapse_quality(const work_mesh *w, int32_t a, int32_t b)
{
  const int_list *l = &w->around[a];
  double qmin = 1.0;
  for (int32_t k = 0; k < l->n; ++k) {
    const int32_t t = l->item[k];
    if (tet_has(w, t, b)) continue;
    const double *p[4];
    for (int j = 0; j < 4; ++j) p[j] = pos(w, w->tet[t][j] == a ? b : w->tet[t][j]);
    const double q = tet_quality(p[0], p[1], p[2], p[3]);
    if (q < w->quality_min) return -1;
    qmin = fmin(qmin, q);
    if (w->kind[a] == NODE_INTERIOR) continue;
    for (int j = 0; j < 4; ++j) {
      int32_t f[3];
      if (w->tet[t][j] == a) continue; /* the face opposite a does not contain it */
      outward_face(w, t, j, f);
      const int32_t o1 = f[0] == a ? f[1] : f[0], o2 = f[2] == a ? f[1] : f[2];
      if (!is_boundary_face(w, a, o1, o2)) continue;
      double before[3], after[3];
      face_normal(pos(w, f[0]), pos(w, f[1]), pos(w, f[2]), before);
      face_normal(pos(w, f[0] == a ? b : f[0]), pos(w, f[1] == a ? b : f[1]), pos(w, f[2] == a ? b : f[2]), after);
      if (!cos_angle_at_least(before, after, w->cos_feature)) return -1;
    }
  }
  return qmin;
}

/* a -> b: tetrahedra with both die, the others take b for a. */
static PetscErrorCode collapse(work_mesh *w, int32_t a, int32_t b)
{
  int_list *l = &w->around[a];

  PetscFunctionBeginUser;
  for (int32_t k = 0; k < l->n; ++k) {
    const int32_t t = l->item[k];
    if (tet_has(w, t, b)) {
      w->alive[t] = 0;
      for (int j = 0; j < 4; ++j)
        if (w->tet[t][j] != a) list_remove(&w->around[w->tet[t][j]], t);
    } else {
      for (int j = 0; j < 4; ++j)
        if (w->tet[t][j] == a) w->tet[t][j] = b;
      PetscCall(list_push(&w->around[b], t));
    }
  }
  l->n = 0;
  w->removed[a] = 1;
  PetscFunctionReturn(0);
}

/* The distinct neighbours of v (through live tetrahedra) into *nbr (cleared first). */
static PetscErrorCode neighbours(work_mesh *w, int32_t v, int_list *nbr)
{
  const int32_t seen = next_clock(w);

  PetscFunctionBeginUser;
  nbr->n = 0;
  w->mark[v] = seen;
  for (int32_t k = 0; k < w->around[v].n; ++k)
    for (int j = 0; j < 4; ++j) {
      const int32_t u = w->tet[w->around[v].item[k]][j];
      if (w->mark[u] == seen) continue;
      w->mark[u] = seen;
      PetscCall(list_push(nbr, u));
    }
  PetscFunctionReturn(0);
}

/* Node classes from the boundary faces' normals: a boundary node's faces are grouped greedily by
 * normal direction (within the feature angle of a group's first face); one group: surface, two:
 * ridge, more: corner. */
static PetscErrorCode classify(work_mesh *w)
{
  int32_t *start, *face_of;
  int_list faces = {0}; /* the boundary faces' nodes, three per face */
  double (*normal)[3];
  int64_t nbf;

  PetscFunctionBeginUser;
  for (int64_t t = 0; t < w->nt; ++t) {
    if (!w->alive[t]) continue;
    for (int j = 0; j < 4; ++j) {
      int32_t f[3];
      outward_face(w, (int32_t)t, j, f);
      if (is_boundary_face(w, f[0], f[1], f[2]))
        for (int c = 0; c < 3; ++c) PetscCall(list_push(&faces, f[c]));
    }
  }
  nbf = faces.n / 3;
  PetscCall(PetscMalloc1(nbf + 1, &normal));
  for (int64_t k = 0; k < nbf; ++k) face_normal(pos(w, faces.item[3 * k]), pos(w, faces.item[3 * k + 1]), pos(w, faces.item[3 * k + 2]), normal[k]);
  /* node -> boundary faces (CSR: the faces' corner positions k by node, as faces k / 3) */
  PetscCall(pbng_csr_by_key32(3 * nbf, faces.item, 3, w->nv, &start, &face_of));
  PetscCall(PetscFree(faces.item));
  for (int64_t v = 0; v < w->nv; ++v) {
    int groups = 0;
    double rep[3][3];
    for (int32_t k = start[v]; k < start[v + 1] && groups < 3; ++k) {
      const double *n = normal[face_of[k]];
      int g = 0;
      while (g < groups && !cos_angle_at_least(rep[g], n, w->cos_feature)) ++g;
      if (g == groups) memcpy(rep[groups++], n, sizeof(rep[0]));
    }
    w->kind[v] = groups == 0 ? NODE_INTERIOR : (groups == 1 ? NODE_SURFACE : (groups == 2 ? NODE_RIDGE : NODE_CORNER));
  }
  PetscCall(PetscFree(start));
  PetscCall(PetscFree(face_of));
  PetscCall(PetscFree(normal));
  PetscFunctionReturn(0);
}

typedef struct {
  double length2;
  int32_t a, b;
} edge;

static int edge_shorter(const void *x, const void *y)
{
  const edge *p = x, *q = y;
  if (p->length2 != q->length2) return p->length2 < q->length2 ? -1 : 1;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  return (p->b > q->b) - (p->b < q->b);
}

/* The live edges, shortest first (ties by node indices: deterministic). */
static PetscErrorCode sorted_edges(work_mesh *w, edge **edges, int64_t *n)
{
  int_list nbr = {0};
  int64_t count = 0;

  PetscFunctionBeginUser;
  *edges = NULL;
  for (int pass = 0; pass < 2; ++pass) {
    count = 0;
    for (int64_t v = 0; v < w->nv; ++v) {
      if (w->removed[v]) continue;
      PetscCall(neighbours(w, (int32_t)v, &nbr));
      for (int32_t k = 0; k < nbr.n; ++k) {
        const int32_t u = nbr.item[k];
        if (u <= v) continue;
        if (pass == 1) {
          double d[3];
          vec3_sub(pos(w, (int32_t)v), pos(w, u), d);
          (*edges)[count] = (edge){vec3_dot(d, d), (int32_t)v, u};
        }
        ++count;
      }
    }
    if (pass == 0) PetscCall(PetscMalloc1(count + 1, edges));
  }
  qsort(*edges, (size_t)count, sizeof(edge), edge_shorter);
  *n = count;
  PetscCall(PetscFree(nbr.item));
  PetscFunctionReturn(0);
}

/* The smallest quality a -> b leaves, or -1 when the collapse is not allowed. */
static double try_quality(work_mesh *w, int32_t a, int32_t b)
{
  if (!compatible(w, a, b) || !edge_allowed(w, a, b) || !link_condition(w, a, b)) return -1;
  return collapse_quality(w, a, b);
}

/* One pass over the edges, shortest first: an edge neither of whose ends was touched yet in this pass
 * collapses in the allowed direction that leaves the better smallest quality, and its survivor is
 * touched, so that a pass removes at most about one node of every two neighbours (roughly halving the
 * resolution, densest regions first). At most `budget` collapses; *collapsed: how many were made. */
static PetscErrorCode collapse_pass(work_mesh *w, int64_t budget, int64_t *collapsed)
{
  edge *edges;
  int64_t n = 0;
  uint8_t *touched;

  PetscFunctionBeginUser;
  *collapsed = 0;
  PetscCall(sorted_edges(w, &edges, &n));
  PetscCall(PetscCalloc1(w->nv + 1, &touched));
  for (int64_t k = 0; k < n && *collapsed < budget; ++k) {
    const int32_t a = edges[k].a, b = edges[k].b;
    if (touched[a] || touched[b] || w->removed[a] || w->removed[b]) continue;
    const double qab = try_quality(w, a, b), qba = try_quality(w, b, a);
    if (qab < 0 && qba < 0) continue;
    const int32_t gone = qab >= qba ? a : b, survivor = gone == a ? b : a;
    PetscCall(collapse(w, gone, survivor));
    touched[survivor] = 1;
    ++*collapsed;
  }
  PetscCall(PetscFree(touched));
  PetscCall(PetscFree(edges));
  PetscFunctionReturn(0);
}

/* The smallest quality of the tetrahedra around v. */
static double quality_around(const work_mesh *w, int32_t v)
{
  double qmin = INFINITY;
  for (int32_t k = 0; k < w->around[v].n; ++k) {
    const int32_t *t = w->tet[w->around[v].item[k]];
    qmin = fmin(qmin, tet_quality(pos(w, t[0]), pos(w, t[1]), pos(w, t[2]), pos(w, t[3])));
  }
  return qmin;
}

/* Smart Laplacian smoothing of the interior nodes that carry no boundary condition or node set: each
 * moves to the centroid of its neighbours when that raises the smallest quality around it. Collapses
 * degrade the tetrahedra; this lets the next round continue. */
static PetscErrorCode smooth_interior(work_mesh *w, int passes)
{
  int_list nbr = {0};

  PetscFunctionBeginUser;
  for (int p = 0; p < passes; ++p)
    for (int64_t v = 0; v < w->nv; ++v) {
      if (w->removed[v] || w->kind[v] != NODE_INTERIOR || w->locked[v] || w->bc[v] >= 0 || w->sets[v]) continue;
      PetscCall(neighbours(w, (int32_t)v, &nbr));
      double c[3] = {0, 0, 0}, old[3];
      int n = 0;
      for (int32_t k = 0; k < nbr.n; ++k)
        if (nbr.item[k] != v) {
          for (int d = 0; d < 3; ++d) c[d] += pos(w, nbr.item[k])[d];
          ++n;
        }
      if (n == 0) continue;
      const double before = quality_around(w, (int32_t)v);
      memcpy(old, &w->X[3 * v], sizeof(old));
      for (int d = 0; d < 3; ++d) w->X[3 * v + d] = c[d] / n;
      if (!(quality_around(w, (int32_t)v) > before)) memcpy(&w->X[3 * v], old, sizeof(old));
    }
  PetscCall(PetscFree(nbr.item));
  PetscFunctionReturn(0);
}

static PetscErrorCode work_create(const pbng_mesh *fine, const int8_t *node_bc, const pbng_coarsen_options *opt, work_mesh *w)
{
  PetscFunctionBeginUser;
  memset(w, 0, sizeof(*w));
  w->nv = fine->nnodes, w->nt = fine->nelems;
  PetscCall(PetscMalloc1(3 * w->nv + 1, &w->X));
  PetscCall(PetscArraycpy(w->X, fine->X, 3 * w->nv));
  w->cos_feature = cos(opt->feature_angle * PETSC_PI / 180.0), w->quality_min = opt->quality_min;
  PetscCall(PetscMalloc1(w->nt + 1, &w->tet));
  PetscCall(PetscMalloc1(w->nt + 1, &w->alive));
  PetscCall(PetscCalloc1(w->nv + 1, &w->around));
  PetscCall(PetscCalloc5(w->nv + 1, &w->removed, w->nv + 1, &w->kind, w->nv + 1, &w->locked, w->nv + 1, &w->sets, w->nv + 1, &w->bc));
  PetscCall(PetscCalloc1(w->nv + 1, &w->mark));
  for (int64_t t = 0; t < w->nt; ++t) {
    w->alive[t] = 1;
    for (int j = 0; j < 4; ++j) {
      w->tet[t][j] = fine->elems[4 * t + j];
      PetscCall(list_push(&w->around[w->tet[t][j]], (int32_t)t));
    }
  }
  for (int64_t v = 0; v < w->nv; ++v) {
    w->bc[v] = node_bc ? node_bc[v] : -1;
    w->removed[v] = w->around[v].n == 0; /* in no element: no equation, not carried over */
  }
  for (int s = 0; s < fine->nsets; ++s)
    for (int64_t k = 0; k < fine->sets[s].count; ++k) {
      const int32_t v = fine->sets[s].nodes[k];
      if (s < 64) w->sets[v] |= (uint64_t)1 << s;
      else w->locked[v] = 1; /* beyond 64 sets: kept */
    }
  for (int64_t c = 0; c < fine->nweak; ++c)
    for (int j = 0; j < fine->weak[c].nnodes; ++j) {
      const int64_t v = fine->weak[c].node[j];
      w->locked[v] = 1, w->removed[v] = 0;
    }
  PetscFunctionReturn(0);
}

static PetscErrorCode work_destroy(work_mesh *w)
{
  PetscFunctionBeginUser;
  for (int64_t v = 0; v < w->nv; ++v) PetscCall(PetscFree(w->around[v].item));
  PetscCall(PetscFree(w->around));
  PetscCall(PetscFree(w->tet));
  PetscCall(PetscFree(w->alive));
  PetscCall(PetscFree5(w->removed, w->kind, w->locked, w->sets, w->bc));
  PetscCall(PetscFree(w->mark));
  PetscCall(PetscFree(w->X));
  PetscFunctionReturn(0);
}

/* Each node set of fine restricted to the nodes kept (newid[v] >= 0: their ids among the nv kept), added to coarse. */
static PetscErrorCode add_kept_node_sets(const pbng_mesh *fine, const int32_t *newid, int64_t nv, pbng_mesh *coarse)
{
  int32_t *ids;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nv + 1, &ids));
  for (int s = 0; s < fine->nsets; ++s) {
    int64_t n = 0;
    for (int64_t k = 0; k < fine->sets[s].count; ++k)
      if (newid[fine->sets[s].nodes[k]] >= 0) ids[n++] = newid[fine->sets[s].nodes[k]];
    PetscCall(pbng_mesh_add_node_set(coarse, fine->sets[s].name, n, ids));
  }
  PetscCall(PetscFree(ids));
  PetscFunctionReturn(0);
}

/* The kept nodes and live tetrahedra, renumbered, with node sets and weak constraints. */
static PetscErrorCode extract(const pbng_mesh *fine, const work_mesh *w, pbng_mesh *coarse)
{
  int32_t *newid;
  int64_t nv = 0, nt = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(w->nv + 1, &newid));
  for (int64_t v = 0; v < w->nv; ++v) newid[v] = w->removed[v] ? -1 : (int32_t)nv++;
  for (int64_t t = 0; t < w->nt; ++t) nt += w->alive[t];
  PetscCall(pbng_mesh_alloc(coarse, PBNG_ELEMENT_TET4, nv, nt));
  for (int64_t v = 0; v < w->nv; ++v)
    if (newid[v] >= 0) PetscCall(PetscArraycpy(&coarse->X[3 * (int64_t)newid[v]], &w->X[3 * v], 3));
  nt = 0;
  for (int64_t t = 0; t < w->nt; ++t)
    if (w->alive[t]) {
      for (int j = 0; j < 4; ++j) coarse->elems[4 * nt + j] = newid[w->tet[t][j]];
      ++nt;
    }
  PetscCall(add_kept_node_sets(fine, newid, nv, coarse));
  if (fine->nweak > 0) {
    pbng_weak_constraint *c;
    PetscCall(PetscMalloc1(fine->nweak, &c));
    for (int64_t k = 0; k < fine->nweak; ++k) {
      c[k] = fine->weak[k];
      for (int j = 0; j < c[k].nnodes; ++j) c[k].node[j] = newid[c[k].node[j]];
    }
    PetscCall(pbng_mesh_add_weak_constraints(coarse, fine->nweak, c));
    PetscCall(PetscFree(c));
  }
  PetscCall(PetscFree(newid));
  PetscFunctionReturn(0);
}

/* Appends the tetrahedron (a, b, c, d) to tet, positively oriented (X: the new mesh's positions). */
static void push_tet(pbng_mesh *tet, int64_t *nt, const double *X, int32_t a, int32_t b, int32_t c, int32_t d)
{
  int32_t *t = &tet->elems[4 * (*nt)++];
  const int flip = pbng_tet_signed_volume(&X[3 * (int64_t)a], &X[3 * (int64_t)b], &X[3 * (int64_t)c], &X[3 * (int64_t)d]) < 0;
  t[0] = a, t[1] = flip ? c : b, t[2] = flip ? b : c, t[3] = d;
}

/* The tetrahedra of element e's corners (new numbering newid) around the new node m at their centroid: one per
 * triangular face, two per quadrilateral face, split along the diagonal from its lowest-numbered corner (neighbours
 * sharing the face split it alike). */
static void split_around_centroid(const pbng_mesh *fine, int64_t e, const int32_t *newid, int32_t m, pbng_mesh *tet, int64_t *nt)
{
  const pbng_element_type *corner = pbng_element_corner_type(pbng_mesh_element_type(fine, e));
  const int32_t *row = &fine->elems[(int64_t)fine->nen * e];
  for (int f = 0; f < corner->nfaces; ++f) {
    const pbng_element_face *face = &corner->faces[f];
    int32_t c[4];
    for (int k = 0; k < face->corners; ++k) c[k] = newid[row[face->node[k]]];
    if (face->corners == 3) {
      push_tet(tet, nt, tet->X, c[0], c[1], c[2], m);
      continue;
    }
    int low = 0; /* the lowest-numbered corner: the diagonal from it */
    for (int k = 1; k < 4; ++k)
      if (row[face->node[k]] < row[face->node[low]]) low = k;
    const int a = low % 2; /* the diagonal c[a] - c[a + 2] */
    push_tet(tet, nt, tet->X, c[a], c[a + 1], c[(a + 2) % 4], m);
    push_tet(tet, nt, tet->X, c[a], c[(a + 2) % 4], c[(a + 3) % 4], m);
  }
}

/* *newid[fine->nnodes]: each node's number among the elements' corners (in fine's order; Gmsh lists an element's
 * corners first), -1 for the others; *nv: how many corners. */
static PetscErrorCode number_corners(const pbng_mesh *fine, int32_t **newid, int64_t *nv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(fine->nnodes + 1, newid));
  for (int64_t v = 0; v < fine->nnodes; ++v) (*newid)[v] = -1;
  for (int64_t e = 0; e < fine->nelems; ++e) {
    const pbng_element_type *t = pbng_element_corner_type(pbng_mesh_element_type(fine, e));
    for (int j = 0; j < t->nodes; ++j) (*newid)[fine->elems[(int64_t)fine->nen * e + j]] = 0;
  }
  *nv = 0;
  for (int64_t v = 0; v < fine->nnodes; ++v)
    if ((*newid)[v] == 0) (*newid)[v] = (int32_t)(*nv)++;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_corners(const pbng_mesh *fine, pbng_mesh *corner)
{
  int32_t *newid;
  int64_t nv;
  unsigned kinds = 0; /* the corner kinds present */
  int nen = 0;

  PetscFunctionBeginUser;
  for (int64_t e = 0; e < fine->nelems; ++e) {
    const pbng_element_type *t = pbng_element_corner_type(pbng_mesh_element_type(fine, e));
    PetscCheck(!pbng_element_is_sheet(t), PETSC_COMM_SELF, PETSC_ERR_SUP, "the corner mesh of %s: volume elements only (it has %s elements)",
               fine->source, t->name);
    kinds |= 1u << t->kind;
    nen = t->nodes > nen ? t->nodes : nen;
  }
  PetscCall(number_corners(fine, &newid, &nv));
  memset(corner, 0, sizeof(*corner));
  const int one_kind = !(kinds & (kinds - 1));
  if (one_kind) PetscCall(pbng_mesh_alloc(corner, pbng_element_corner_type(pbng_mesh_element_type(fine, 0))->kind, nv, fine->nelems));
  else PetscCall(pbng_mesh_alloc_mixed(corner, nen, nv, fine->nelems));
  for (int64_t v = 0; v < fine->nnodes; ++v)
    if (newid[v] >= 0) PetscCall(PetscArraycpy(&corner->X[3 * (int64_t)newid[v]], &fine->X[3 * v], 3));
  for (int64_t e = 0; e < fine->nelems; ++e) {
    const pbng_element_type *t = pbng_element_corner_type(pbng_mesh_element_type(fine, e));
    int32_t *row = &corner->elems[(int64_t)corner->nen * e];
    for (int j = 0; j < corner->nen; ++j) row[j] = j < t->nodes ? newid[fine->elems[(int64_t)fine->nen * e + j]] : -1; /* -1: a mixed row's padding */
    if (!one_kind) corner->kind[e] = (uint8_t)t->kind;
  }
  PetscCall(add_kept_node_sets(fine, newid, nv, corner));
  PetscCall(PetscFree(newid));
  snprintf(corner->source, sizeof(corner->source), "the corners of %.4000s", fine->source);
  PetscCall(pbng_mesh_validate(corner, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_tetrahedralize(const pbng_mesh *fine, pbng_mesh *tet)
{
  int32_t *newid;
  int64_t nv, ncentres = 0, ntets = 0;

  PetscFunctionBeginUser;
  for (int64_t e = 0; e < fine->nelems; ++e) {
    const pbng_element_type *t = pbng_element_corner_type(pbng_mesh_element_type(fine, e));
    PetscCheck(!pbng_element_is_sheet(t), PETSC_COMM_SELF, PETSC_ERR_SUP, "the tetrahedra of %s: volume elements only (it has %s elements)",
               fine->source, t->name);
    if (t->shape == PBNG_SHAPE_TETRAHEDRON) ++ntets;
    else {
      int faces = 0;
      for (int f = 0; f < t->nfaces; ++f) faces += t->faces[f].corners - 2;
      ++ncentres, ntets += faces;
    }
  }
  PetscCall(number_corners(fine, &newid, &nv));
  memset(tet, 0, sizeof(*tet));
  PetscCall(pbng_mesh_alloc(tet, PBNG_ELEMENT_TET4, nv + ncentres, ntets));
  for (int64_t v = 0; v < fine->nnodes; ++v)
    if (newid[v] >= 0) PetscCall(PetscArraycpy(&tet->X[3 * (int64_t)newid[v]], &fine->X[3 * v], 3));
  int64_t nt = 0, m = nv;
  for (int64_t e = 0; e < fine->nelems; ++e) {
    const pbng_element_type *t = pbng_element_corner_type(pbng_mesh_element_type(fine, e));
    const int32_t *row = &fine->elems[(int64_t)fine->nen * e];
    if (t->shape == PBNG_SHAPE_TETRAHEDRON) {
      push_tet(tet, &nt, tet->X, newid[row[0]], newid[row[1]], newid[row[2]], newid[row[3]]);
      continue;
    }
    double *c = &tet->X[3 * m];
    c[0] = c[1] = c[2] = 0;
    for (int j = 0; j < t->nodes; ++j)
      for (int d = 0; d < 3; ++d) c[d] += fine->X[3 * (int64_t)row[j] + d] / t->nodes;
    split_around_centroid(fine, e, newid, (int32_t)m++, tet, &nt);
  }
  PetscCall(add_kept_node_sets(fine, newid, nv, tet));
  PetscCall(PetscFree(newid));
  snprintf(tet->source, sizeof(tet->source), "the tetrahedra of %.4000s", fine->source);
  PetscCall(pbng_mesh_validate(tet, 0));
  PetscFunctionReturn(0);
}

/* A level's passes stop once one collapses fewer than this fraction of the nodes left: the tail of passes that each
 * remove a few nodes costs as much as the first ones (27K-node beam: passes 10-26 removed 3 % of the nodes), and
 * without it the coarse levels converged no faster (measured on the five meshes of bench/defaults.py, small, and
 * two medium ones: cycles equal or fewer, the collapses' time halved; 5 % cost the beam cycles). */
#define COARSEN_TAIL 0.02

PetscErrorCode pbng_mesh_coarsen(const pbng_mesh *fine, const int8_t *node_bc, const pbng_coarsen_options *opt, pbng_mesh *coarse)
{
  work_mesh w;
  int64_t remaining = 0, target;

  PetscFunctionBeginUser;
  PetscCheck(fine->etype && fine->etype->kind == PBNG_ELEMENT_TET4, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "coarsening %s: linear tetrahedra only (got %s)", fine->source, fine->etype ? fine->etype->name : "a mesh mixing element kinds");
  PetscCall(work_create(fine, node_bc, opt, &w));
  for (int64_t v = 0; v < w.nv; ++v) remaining += !w.removed[v];
  target = (int64_t)ceil((double)remaining / opt->target_ratio);
  for (int pass = 0; pass < 40 && remaining > target; ++pass) {
    int64_t collapsed;
    PetscCall(classify(&w));
    PetscCall(collapse_pass(&w, remaining - target, &collapsed));
    PetscCall(smooth_interior(&w, 2));
    remaining -= collapsed;
    if (collapsed == 0 || (double)collapsed < COARSEN_TAIL * (double)remaining) break;
  }
  memset(coarse, 0, sizeof(*coarse));
  PetscCall(extract(fine, &w, coarse));
  PetscCall(work_destroy(&w));
  snprintf(coarse->source, sizeof(coarse->source), "coarsened from %.4000s", fine->source);
  PetscCall(pbng_mesh_validate(coarse, 0));
  PetscFunctionReturn(0);
}
