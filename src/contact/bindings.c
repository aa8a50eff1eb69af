#include "contact/bindings.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "contact/contact_detect.h"
#include "contact/surface.h"
#include "parallel/coloring.h"
#include "parallel/distributed_partition.h"
#include "parallel/dmesh.h"
#include "parallel/halo.h"
#include "parallel/slice_weak.h"
#include "parallel/submesh.h"

/* The whole mesh as one subdomain on this process (PETSC_COMM_SELF): what the detector works on. */
static PetscErrorCode whole_mesh_subdomain(const pbng_mesh *mesh, pbng_dmesh *dm)
{
  pbng_node_elements adj;
  pbng_submesh sub;
  int32_t *color, *part;
  int8_t *node_bc;
  int ncolors;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(mesh->nnodes + 1, &color, mesh->nnodes + 1, &part));
  PetscCall(pbng_node_elements_build(mesh, &adj));
  PetscCall(pbng_color_nodes(mesh, &adj, color, &ncolors));
  PetscCall(pbng_node_elements_destroy(&adj));
  for (int64_t i = 0; i < mesh->nnodes; ++i) part[i] = 0;
  PetscCall(pbng_submesh_extract(mesh, color, ncolors, NULL, part, 0, &sub));
  PetscCall(PetscMalloc1(sub.mesh.nnodes + 1, &node_bc));
  for (int64_t i = 0; i < sub.mesh.nnodes; ++i) node_bc[i] = -1; /* nothing held: every surface vertex may bind */
  PetscCall(pbng_dmesh_create(PETSC_COMM_SELF, &sub, node_bc, dm));
  PetscCall(PetscFree(node_bc));
  PetscCall(pbng_submesh_destroy(&sub));
  PetscCall(PetscFree2(color, part));
  PetscFunctionReturn(0);
}

/* The binding of a vertex-triangle record: the vertex on one side, the closest point's corners on the other (in the
 * triangle's outward order; a corner of weight 0 is left out, except after -bind_snap, where all three stay so that the
 * coarse levels find the triangle's body from its normal: parallel/weak_levels.h), its target the rest offset between
 * them (xv, xc[3]: the vertex's and the corners' rest positions), so that the binding holds the surfaces as they are at
 * rest rather than pulling them together (the offset is zero after -bind_snap placed the vertex on the triangle). */
static PetscErrorCode binding_of(const pbng_contact_record *r, const pbng_binding_options *o, const double *xv, const double *const xc[3],
                                 pbng_weak_constraint *c)
{
  const double one = 1.0;
  const int64_t vertex = 0; /* the nodes numbered 0 (the vertex), 1.. (the corners kept) until their global ids are set */
  int64_t corner[3], gid[4] = {r->vertex_gid};
  double w[3], X[4][3];
  int n = 0;

  PetscFunctionBeginUser;
  memcpy(X[0], xv, sizeof(X[0]));
  for (int a = 0; a < 3; ++a)
    if (r->w[a] > 0 || o->snap) corner[n] = n + 1, gid[n + 1] = r->tri_gid[a], memcpy(X[n + 1], xc[a], sizeof(X[0])), w[n++] = r->w[a];
  const char *why = pbng_weak_constraint_init(1, &vertex, &one, n, corner, w, o->k_n, o->k_t, o->k_n == o->k_t ? NULL : r->normal, c);
  PetscCheck(!why, PETSC_COMM_SELF, PETSC_ERR_PLIB, "-bind_distance: the binding of node %" PRId64 ": %s", r->vertex_gid, why);
  pbng_weak_constraint_violation(c, &X[0][0], c->target); /* the rest offset t = X_v - sum_j w_j X_j: C = 0 at rest */
  for (int j = 0; j < c->nnodes; ++j) c->node[j] = gid[c->node[j]];
  PetscFunctionReturn(0);
}

/* The same with the positions of a whole mesh's nodes X. */
static PetscErrorCode binding_at(const pbng_contact_record *r, const pbng_binding_options *o, const double *X, pbng_weak_constraint *c)
{
  const double *xc[3];

  PetscFunctionBeginUser;
  for (int a = 0; a < 3; ++a) xc[a] = &X[3 * r->tri_gid[a]];
  PetscCall(binding_of(r, o, &X[3 * r->vertex_gid], xc, c));
  PetscFunctionReturn(0);
}

/* set[v]: the index in the list of the first of the sets that holds node v, -1 for none (every node without a list). */
static PetscErrorCode node_sets(const pbng_mesh *mesh, const char *list, int16_t *set_of)
{
  char buf[PETSC_MAX_PATH_LEN], *save = NULL;
  int16_t count = 0;

  PetscFunctionBeginUser;
  for (int64_t v = 0; v < mesh->nnodes; ++v) set_of[v] = -1;
  if (!list || !list[0]) PetscFunctionReturn(0);
  PetscCheck(strlen(list) < sizeof(buf), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "-bind_apart: the list is too long");
  strcpy(buf, list);
  for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save), ++count) {
    const pbng_node_set *set = pbng_mesh_find_node_set(mesh, name);
    PetscCheck(set, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "-bind_apart: %s has no node set \"%s\"", mesh->source, name);
    for (int64_t i = 0; i < set->count; ++i)
      if (set_of[set->nodes[i]] < 0) set_of[set->nodes[i]] = count;
  }
  PetscFunctionReturn(0);
}

/* Whether the record joins nodes of two different sets of -bind_apart: its vertex (in set v of the list, -1 none) and
 * a corner of non-zero weight (in set corner[a]). */
static int joins_apart(const pbng_contact_record *r, int16_t v, const int16_t corner[3])
{
  for (int a = 0; a < 3; ++a)
    if (v >= 0 && r->w[a] > 0 && corner[a] >= 0 && corner[a] != v) return 1;
  return 0;
}

/* body[gid]: the body label (contact/surface.h) of every node of the mesh, from the whole-mesh subdomain dm. */
static PetscErrorCode global_bodies(const pbng_dmesh *dm, int64_t *body)
{
  int64_t *local, nbodies;
  int rounds;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(dm->nlocal + 1, &local));
  PetscCall(pbng_body_labels(dm, local, &nbodies, &rounds));
  for (int32_t i = 0; i < dm->nlocal; ++i) body[dm->global_node[i]] = local[i];
  PetscCall(PetscFree(local));
  PetscFunctionReturn(0);
}

typedef struct {
  int32_t record;
  int64_t body; /* the vertex's */
} snap_item;

/* Bodies of higher labels first (their vertices placed before the lower bodies' land on them), then by vertex. */
static int snap_order(const void *a, const void *b)
{
  const snap_item *x = a, *y = b;
  if (x->body != y->body) return (x->body < y->body) - (x->body > y->body);
  return (x->record > y->record) - (x->record < y->record);
}

/* -bind_snap: of the records kept (keep[k]), each vertex's closest one to a body of a higher label (one side of each
 * pair of bodies binds), its vertex moved onto that triangle's point (sum_a w_a X_a, the corners as already placed:
 * bodies of higher labels first); keep[] then marks those records alone. *moved: the longest move. */
static PetscErrorCode snap_vertices(pbng_mesh *mesh, const pbng_dmesh *dm, int32_t nrec, const pbng_contact_record *rec, uint8_t *keep, double *moved)
{
  int64_t *body;
  snap_item *items;
  int32_t n = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(mesh->nnodes + 1, &body, nrec + 1, &items));
  PetscCall(global_bodies(dm, body));
  for (int32_t k = 0; k < nrec;) { /* records come by vertex */
    int32_t end = k, best = -1;
    double best_d = PETSC_MAX_REAL;
    while (end < nrec && rec[end].vertex_gid == rec[k].vertex_gid) ++end;
    for (int32_t j = k; j < end; ++j) {
      const double *x = &mesh->X[3 * rec[j].vertex_gid];
      const double d = hypot(hypot(x[0] - rec[j].point[0], x[1] - rec[j].point[1]), x[2] - rec[j].point[2]);
      if (keep[j] && body[rec[j].vertex_gid] < body[rec[j].tri_gid[0]] && d < best_d) best = j, best_d = d;
      keep[j] = 0;
    }
    if (best >= 0) items[n++] = (snap_item){.record = best, .body = body[rec[best].vertex_gid]};
    k = end;
  }
  qsort(items, (size_t)n, sizeof(*items), snap_order);
  *moved = 0;
  for (int32_t i = 0; i < n; ++i) {
    const pbng_contact_record *r = &rec[items[i].record];
    double p[3] = {0, 0, 0}, *x = &mesh->X[3 * r->vertex_gid];
    for (int a = 0; a < 3; ++a)
      for (int d = 0; d < 3; ++d) p[d] += r->w[a] * mesh->X[3 * r->tri_gid[a] + d];
    const double m = hypot(hypot(x[0] - p[0], x[1] - p[1]), x[2] - p[2]);
    if (m > *moved) *moved = m;
    for (int d = 0; d < 3; ++d) x[d] = p[d];
    keep[items[i].record] = 1;
  }
  PetscCall(PetscFree2(body, items));
  PetscFunctionReturn(0);
}

/* d and the stiffness in range (errors raised on comm). */
static PetscErrorCode check_options(const pbng_binding_options *o, MPI_Comm comm)
{
  PetscFunctionBeginUser;
  PetscCheck(o->distance > 0 && isfinite(o->distance), comm, PETSC_ERR_ARG_OUTOFRANGE, "-bind_distance %g: must be > 0", o->distance);
  PetscCheck(o->k_n >= 0 && o->k_t >= 0 && o->k_n + o->k_t > 0 && isfinite(o->k_n) && isfinite(o->k_t), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-bind_stiffness %g,%g: need k_n, k_t >= 0, finite, not both 0", o->k_n, o->k_t);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_bind_bodies(pbng_mesh *mesh, const pbng_binding_options *o, pbng_binding_stats *stats)
{
  const pbng_contact_detect_options det_opt = {.distance = o->distance, .sheet_offset = 0, .self = 0, .nobstacles = 0};
  pbng_contact_detector *det;
  pbng_contact_record *rec;
  pbng_weak_constraint *bind = NULL;
  int64_t n = 0;
  int32_t nrec;
  int16_t *set_of;
  uint8_t *keep;
  pbng_dmesh dm;

  PetscFunctionBeginUser;
  PetscCall(check_options(o, PETSC_COMM_SELF));
  memset(stats, 0, sizeof(*stats));
  PetscCall(PetscMalloc1(mesh->nnodes + 1, &set_of));
  PetscCall(node_sets(mesh, o->apart, set_of));
  PetscCall(whole_mesh_subdomain(mesh, &dm));
  PetscCall(pbng_contact_detector_create(&dm, &det_opt, &det));
  PetscCall(pbng_contact_detect(det, dm.X, &nrec, &rec)); /* at rest; records by (vertex, kind, key) */
  PetscCall(PetscMalloc1(nrec + 1, &keep));
  for (int32_t k = 0; k < nrec; ++k) {
    const int16_t corner[3] = {set_of[rec[k].tri_gid[0]], set_of[rec[k].tri_gid[1]], set_of[rec[k].tri_gid[2]]};
    keep[k] = rec[k].kind == PBNG_CONTACT_TRIANGLE && !joins_apart(&rec[k], set_of[rec[k].vertex_gid], corner);
    stats->separated += rec[k].kind == PBNG_CONTACT_TRIANGLE && !keep[k];
  }
  if (o->snap) PetscCall(snap_vertices(mesh, &dm, nrec, rec, keep, &stats->moved));
  for (int32_t k = 0; k < nrec; ++k) n += keep[k];
  PetscCall(PetscMalloc1(n + 1, &bind));
  n = 0;
  for (int32_t k = 0; k < nrec; ++k)
    if (keep[k]) PetscCall(binding_at(&rec[k], o, mesh->X, &bind[n++]));
  PetscCall(PetscFree(rec));
  PetscCall(PetscFree(keep));
  PetscCall(pbng_contact_detector_destroy(&det));
  PetscCall(pbng_dmesh_destroy(&dm));
  if (o->snap) { /* no element turned inside out or flat by the moves */
    const PetscErrorCode bad = pbng_mesh_validate(mesh, 0);
    const char *text = NULL;
    char *specific = NULL;
    if (bad) PetscErrorMessage(bad, &text, &specific);
    PetscCheck(!bad, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
               "-bind_snap: moving the bound vertices (by up to %g) onto the surfaces they bind to spoilt an element (%s): give a smaller "
               "-bind_distance, or leave out -bind_snap", stats->moved, specific ? specific : text ? text : "?");
  }
  PetscCall(pbng_mesh_add_weak_constraints(mesh, n, bind));
  PetscCall(PetscFree(bind));
  PetscCall(PetscFree(set_of));
  stats->bound = n;
  PetscFunctionReturn(0);
}

/* --- in slices (-partitioner ptscotch) --- */

/* The -bind_apart list as indices into the slice's node sets, *index[*n] (PetscMalloc'd). */
static PetscErrorCode apart_sets(MPI_Comm comm, const pbng_mesh_slice *s, const char *list, int *n, int **index)
{
  char buf[PETSC_MAX_PATH_LEN], *save = NULL;

  PetscFunctionBeginUser;
  *n = 0;
  PetscCall(PetscMalloc1(s->nsets + 1, index));
  if (!list || !list[0]) PetscFunctionReturn(0);
  PetscCheck(strlen(list) < sizeof(buf), comm, PETSC_ERR_ARG_SIZ, "-bind_apart: the list is too long");
  strcpy(buf, list);
  for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    int t = 0;
    while (t < s->nsets && strcmp(s->set_name[t], name)) ++t;
    PetscCheck(t < s->nsets, comm, PETSC_ERR_ARG_WRONG, "-bind_apart: %s has no node set \"%s\"", s->source, name);
    PetscCall(PetscRealloc(sizeof(int) * (size_t)(*n + 1), index));
    (*index)[(*n)++] = t;
  }
  PetscFunctionReturn(0);
}

/* What a slice answers about one of its nodes: the first set of the -bind_apart list holding it, -1 for none. */
typedef struct {
  const pbng_mesh_slice *s;
  int n;
  const int *index;
} apart_lookup;

static void answer_apart(void *ctx, int64_t local, void *item)
{
  const apart_lookup *a = ctx;
  int32_t first = -1;
  for (int k = 0; k < a->n && first < 0; ++k)
    if (pbng_mesh_slice_in_set(a->s, local, a->index[k])) first = k;
  *(int32_t *)item = first;
}

/* A binding on its way to the slice of its vertex, with what orders the serial list: (vertex, triangle key). */
typedef struct {
  int64_t vertex_gid, key;
  pbng_weak_constraint c;
} ordered_binding;

static int by_vertex_and_key(const void *a, const void *b)
{
  const ordered_binding *x = a, *y = b;
  if (x->vertex_gid != y->vertex_gid) return (x->vertex_gid > y->vertex_gid) - (x->vertex_gid < y->vertex_gid);
  return (x->key > y->key) - (x->key < y->key);
}

/* The -bind_apart set of the records' vertices and corners (asked of the slices: *ids[*n] sorted, set[*n]). */
static PetscErrorCode records_apart(MPI_Comm comm, const pbng_mesh_slice *s, const apart_lookup *a, int32_t nrec, const pbng_contact_record *rec,
                                    PetscInt *n, PetscInt **ids, int32_t **set)
{
  int64_t *range;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(4 * (int64_t)nrec + 1, ids));
  *n = 0;
  for (int32_t k = 0; k < nrec; ++k) {
    if (rec[k].kind != PBNG_CONTACT_TRIANGLE) continue;
    (*ids)[(*n)++] = (PetscInt)rec[k].vertex_gid;
    for (int c = 0; c < 3; ++c) (*ids)[(*n)++] = (PetscInt)rec[k].tri_gid[c];
  }
  PetscCall(PetscSortRemoveDupsInt(n, *ids));
  PetscCall(PetscMalloc1(*n + 1, set));
  PetscCall(pbng_slice_ranges(comm, s, &range));
  PetscCall(pbng_ask_range_owners(comm, range, *n, *ids, sizeof(int32_t), answer_apart, (void *)a, *set));
  PetscCall(PetscFree(range));
  PetscFunctionReturn(0);
}

static int16_t set_of_node(PetscInt n, const PetscInt *ids, const int32_t *set, int64_t gid)
{
  PetscInt at = -1;
  (void)PetscFindInt((PetscInt)gid, n, ids, &at); /* found: every vertex and corner was asked */
  return (int16_t)set[at];
}

/* This rank's records (its owned vertices', at rest on the subdomain dm) as bindings, those joining two -bind_apart
 * sets left out (counted in *separated): *out[*n] with their order keys. */
static PetscErrorCode bindings_of_records(MPI_Comm comm, const pbng_mesh_slice *s, const pbng_dmesh *dm, const pbng_binding_options *o, int32_t nrec,
                                          const pbng_contact_record *rec, ordered_binding **out, int64_t *n, int64_t *separated)
{
  PetscInt nids, *ids;
  int32_t *set;
  int napart, *index;

  PetscFunctionBeginUser;
  PetscCall(apart_sets(comm, s, o->apart, &napart, &index));
  const apart_lookup a = {s, napart, index};
  PetscCall(records_apart(comm, s, &a, nrec, rec, &nids, &ids, &set));
  PetscCall(PetscMalloc1(nrec + 1, out));
  *n = 0, *separated = 0;
  for (int32_t k = 0; k < nrec; ++k) {
    const pbng_contact_record *r = &rec[k];
    if (r->kind != PBNG_CONTACT_TRIANGLE) continue;
    const int16_t corner[3] = {set_of_node(nids, ids, set, r->tri_gid[0]), set_of_node(nids, ids, set, r->tri_gid[1]), set_of_node(nids, ids, set, r->tri_gid[2])};
    if (joins_apart(r, set_of_node(nids, ids, set, r->vertex_gid), corner)) {
      ++*separated;
      continue;
    }
    const double *xc[3] = {r->tri_x[0], r->tri_x[1], r->tri_x[2]}; /* at rest: the detection's positions */
    (*out)[*n].vertex_gid = r->vertex_gid, (*out)[*n].key = r->key;
    PetscCall(binding_of(r, o, &dm->X[3 * r->vertex], xc, &(*out)[(*n)++].c));
  }
  PetscCall(PetscFree(ids));
  PetscCall(PetscFree(set));
  PetscCall(PetscFree(index));
  PetscFunctionReturn(0);
}

/* The bindings in the serial list's order: each sent to the slice of its vertex, sorted there by (vertex, key), so that
 * process r's come after those of processes 0 .. r - 1; *c[*n] (PetscMalloc'd). */
static PetscErrorCode order_bindings(MPI_Comm comm, const pbng_mesh_slice *s, int64_t n, const ordered_binding *b, int64_t *m, pbng_weak_constraint **c)
{
  int64_t *range;
  int size, *dest;
  ordered_binding *recv;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(pbng_slice_ranges(comm, s, &range));
  PetscCall(PetscMalloc1(n + 1, &dest));
  for (int64_t k = 0; k < n; ++k) dest[k] = pbng_range_owner(range, size, b[k].vertex_gid);
  PetscCall(pbng_send_items_to(comm, sizeof(ordered_binding), n, dest, b, m, (void **)&recv));
  qsort(recv, (size_t)*m, sizeof(*recv), by_vertex_and_key);
  PetscCall(PetscMalloc1(*m + 1, c));
  for (int64_t k = 0; k < *m; ++k) (*c)[k] = recv[k].c;
  PetscCall(PetscFree(recv));
  PetscCall(PetscFree(dest));
  PetscCall(PetscFree(range));
  PetscFunctionReturn(0);
}

/* The records of this rank's surface vertices at rest, found on a partition of the slices' mesh into one piece a rank
 * (the subdomain dm, created here: free with pbng_dmesh_destroy). */
static PetscErrorCode detect_at_rest(MPI_Comm comm, const pbng_mesh_slice *s, const pbng_binding_options *o, pbng_dmesh *dm, int32_t *nrec,
                                     pbng_contact_record **rec)
{
  const pbng_contact_detect_options det_opt = {.distance = o->distance, .sheet_offset = 0, .self = 0, .nobstacles = 0};
  pbng_contact_detector *det;
  pbng_parts pp;
  pbng_partition_times t;
  int8_t *node_bc;
  int size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(pbng_partition_slice_kept(comm, s, size, 0, &pp, &t)); /* one part a rank (part p on rank p) */
  PetscCall(PetscMalloc1(pp.sub[0].mesh.nnodes + 1, &node_bc));
  for (int64_t i = 0; i < pp.sub[0].mesh.nnodes; ++i) node_bc[i] = -1; /* nothing held: every surface vertex may bind */
  PetscErrorCode ierr = pbng_dmesh_create(comm, &pp.sub[0], node_bc, dm);
  PetscCall(PetscFree(node_bc));
  PetscCall(pbng_parts_destroy(&pp));
  PetscCall(ierr);
  PetscCall(pbng_contact_detector_create(dm, &det_opt, &det));
  PetscCall(pbng_contact_detect(det, dm->X, nrec, rec)); /* at rest; records by (vertex, kind, key) */
  PetscCall(pbng_contact_detector_destroy(&det));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_slice_bind_bodies(MPI_Comm comm, pbng_mesh_slice *s, const pbng_binding_options *o, pbng_binding_stats *stats)
{
  pbng_dmesh dm;
  pbng_contact_record *rec;
  ordered_binding *b;
  pbng_weak_constraint *c;
  int32_t nrec;
  int64_t n, m;

  PetscFunctionBeginUser;
  PetscCall(check_options(o, comm));
  PetscCheck(!o->snap, comm, PETSC_ERR_SUP,
             "-bind_snap with -partitioner ptscotch: snapping moves vertices body after body across the whole mesh, which is not done in slices; "
             "use -partitioner metis, or leave out -bind_snap");
  memset(stats, 0, sizeof(*stats));
  PetscCall(detect_at_rest(comm, s, o, &dm, &nrec, &rec));
  PetscErrorCode ierr = bindings_of_records(comm, s, &dm, o, nrec, rec, &b, &n, &stats->separated);
  PetscCall(PetscFree(rec));
  PetscCall(pbng_dmesh_destroy(&dm));
  PetscCall(ierr);
  PetscCall(order_bindings(comm, s, n, b, &m, &c));
  PetscCall(PetscFree(b));
  ierr = pbng_slice_add_weak(comm, s, m, c);
  PetscCall(PetscFree(c));
  PetscCall(ierr);
  stats->bound = n;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &stats->bound, 1, MPI_INT64_T, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &stats->separated, 1, MPI_INT64_T, MPI_SUM, comm));
  PetscFunctionReturn(0);
}
