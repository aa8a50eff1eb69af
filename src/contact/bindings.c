#include "contact/bindings.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "contact/contact_detect.h"
#include "contact/surface.h"
#include "parallel/coloring.h"
#include "parallel/dmesh.h"
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
 * them (X: the rest positions), so that the binding holds the surfaces as they are at rest rather than pulling them
 * together (the offset is zero after -bind_snap placed the vertex on the triangle). */
static PetscErrorCode binding_of(const pbng_contact_record *r, const pbng_binding_options *o, const double *X, pbng_weak_constraint *c)
{
  const double one = 1.0;
  int64_t corner[3];
  double w[3];
  int n = 0;

  PetscFunctionBeginUser;
  for (int a = 0; a < 3; ++a)
    if (r->w[a] > 0 || o->snap) corner[n] = r->tri_gid[a], w[n++] = r->w[a];
  const char *why = pbng_weak_constraint_init(1, &r->vertex_gid, &one, n, corner, w, o->k_n, o->k_t, o->k_n == o->k_t ? NULL : r->normal, c);
  PetscCheck(!why, PETSC_COMM_SELF, PETSC_ERR_PLIB, "-bind_distance: the binding of node %" PRId64 ": %s", r->vertex_gid, why);
  pbng_weak_constraint_violation(c, X, c->target); /* the rest offset t = X_v - sum_j w_j X_j: C = 0 at rest */
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

/* Whether the record joins nodes of two different sets of -bind_apart: its vertex and a corner of non-zero weight. */
static int joins_apart(const pbng_contact_record *r, const int16_t *set_of)
{
  const int16_t c = set_of[r->vertex_gid];
  for (int a = 0; a < 3; ++a)
    if (c >= 0 && r->w[a] > 0 && set_of[r->tri_gid[a]] >= 0 && set_of[r->tri_gid[a]] != c) return 1;
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
  PetscCheck(o->distance > 0 && isfinite(o->distance), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-bind_distance %g: must be > 0", o->distance);
  PetscCheck(o->k_n >= 0 && o->k_t >= 0 && o->k_n + o->k_t > 0 && isfinite(o->k_n) && isfinite(o->k_t), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-bind_stiffness %g,%g: need k_n, k_t >= 0, finite, not both 0", o->k_n, o->k_t);
  memset(stats, 0, sizeof(*stats));
  PetscCall(PetscMalloc1(mesh->nnodes + 1, &set_of));
  PetscCall(node_sets(mesh, o->apart, set_of));
  PetscCall(whole_mesh_subdomain(mesh, &dm));
  PetscCall(pbng_contact_detector_create(&dm, &det_opt, &det));
  PetscCall(pbng_contact_detect(det, dm.X, &nrec, &rec)); /* at rest; records by (vertex, kind, key) */
  PetscCall(PetscMalloc1(nrec + 1, &keep));
  for (int32_t k = 0; k < nrec; ++k) {
    keep[k] = rec[k].kind == PBNG_CONTACT_TRIANGLE && !joins_apart(&rec[k], set_of);
    stats->separated += rec[k].kind == PBNG_CONTACT_TRIANGLE && !keep[k];
  }
  if (o->snap) PetscCall(snap_vertices(mesh, &dm, nrec, rec, keep, &stats->moved));
  for (int32_t k = 0; k < nrec; ++k) n += keep[k];
  PetscCall(PetscMalloc1(n + 1, &bind));
  n = 0;
  for (int32_t k = 0; k < nrec; ++k)
    if (keep[k]) PetscCall(binding_of(&rec[k], o, mesh->X, &bind[n++]));
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
