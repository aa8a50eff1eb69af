#include "contact/surface.h"
#include "core/csr.h"
#include <stdlib.h>
#include <string.h>
#include "core/adjacency.h"
#include "parallel/halo.h"
#include "core/sorted_ids.h"

/* A face of a local element with an owned corner, identified by its corners' global ids. */
typedef struct {
  int64_t corner[4]; /* increasing; INT64_MAX pads a triangle */
  int32_t elem;
  int32_t face;
} face_record;

static int compare_faces(const void *a, const void *b)
{
  const face_record *x = a, *y = b;
  for (int k = 0; k < 4; ++k)
    if (x->corner[k] != y->corner[k]) return x->corner[k] < y->corner[k] ? -1 : 1;
  return 0;
}

static int compare_triangles(const void *a, const void *b)
{
  return pbng_compare_int64(&((const pbng_surface_triangle *)a)->key, &((const pbng_surface_triangle *)b)->key);
}

/* Face f of local element e: its corners' local indices (outward order) into c; returns how many. */
static int face_corners(const pbng_dmesh *dm, int32_t e, int f, int32_t c[4])
{
  const pbng_element_face *face = &pbng_dmesh_element_type(dm, e)->faces[f];
  const int32_t *row = &dm->elems[(int64_t)dm->nen * e];
  for (int k = 0; k < face->corners; ++k) c[k] = row[face->node[k]];
  return face->corners;
}

/* The faces of the local elements that have an owned corner (every element holding such a face is
 * local), each with its corners' global ids sorted. */
static PetscErrorCode collect_faces(const pbng_dmesh *dm, face_record **faces, int64_t *nfaces)
{
  int64_t n = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((int64_t)dm->nelems * PBNG_MAX_FACES + 1, faces));
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const pbng_element_type *t = pbng_dmesh_element_type(dm, e);
    for (int f = 0; f < t->nfaces; ++f) {
      int32_t c[4];
      const int m = face_corners(dm, e, f, c);
      int owned = 0;
      face_record *r = &(*faces)[n];
      for (int k = 0; k < 4; ++k) r->corner[k] = k < m ? dm->global_node[c[k]] : INT64_MAX;
      for (int k = 0; k < m; ++k) owned |= c[k] < dm->nowned;
      if (!owned) continue;
      qsort(r->corner, 4, sizeof(int64_t), pbng_compare_int64);
      r->elem = e, r->face = f;
      ++n;
    }
  }
  qsort(*faces, (size_t)n, sizeof(face_record), compare_faces);
  *nfaces = n;
  PetscFunctionReturn(0);
}

/* The triangles of boundary face f of local element e, in its outward corner order: the face itself,
 * or a quadrilateral's two triangles (m, m+1, m+2) and (m, m+2, m+3), m its lowest-gid corner. Keys
 * (global element * PBNG_MAX_FACES + f) * 2 + sub-triangle. Returns how many (1 or 2). */
static int face_triangles(const pbng_dmesh *dm, int32_t e, int f, pbng_surface_triangle tri[2])
{
  int32_t c[4];
  const int m = face_corners(dm, e, f, c);
  const int64_t base = (dm->global_elem[e] * PBNG_MAX_FACES + f) * 2;
  if (m == 3) {
    tri[0].key = base;
    for (int k = 0; k < 3; ++k) tri[0].node[k] = c[k];
    return 1;
  }
  int low = 0;
  for (int k = 1; k < 4; ++k)
    if (dm->global_node[c[k]] < dm->global_node[c[low]]) low = k;
  for (int s = 0; s < 2; ++s) {
    tri[s].key = base + s;
    tri[s].node[0] = c[low], tri[s].node[1] = c[(low + 1 + s) % 4], tri[s].node[2] = c[(low + 2 + s) % 4];
  }
  return 2;
}

/* The two sides of sheet triangle e (a tri3 element): its corner order, then the reversed one. */
static void sheet_sides(const pbng_dmesh *dm, int32_t e, pbng_surface_triangle tri[2])
{
  const int32_t *row = &dm->elems[(int64_t)dm->nen * e];
  const int64_t base = dm->global_elem[e] * PBNG_MAX_FACES * 2;
  for (int side = 0; side < 2; ++side) {
    tri[side].key = base + side, tri[side].sheet = 1;
    tri[side].node[0] = row[0], tri[side].node[1] = row[side ? 2 : 1], tri[side].node[2] = row[side ? 1 : 2];
  }
}

/* Whether local element e is a sheet triangle with an owned corner. */
static int is_sheet_triangle(const pbng_dmesh *dm, int32_t e)
{
  if (pbng_dmesh_element_type(dm, e)->kind != PBNG_ELEMENT_TRI3) return 0;
  const int32_t *row = &dm->elems[(int64_t)dm->nen * e];
  return row[0] < dm->nowned || row[1] < dm->nowned || row[2] < dm->nowned;
}

/* Whether this rank holds the triangle: it owns the corner with the lowest global id. */
static int holds(const pbng_dmesh *dm, const pbng_surface_triangle *t)
{
  int32_t low = t->node[0];
  for (int k = 1; k < 3; ++k)
    if (dm->global_node[t->node[k]] < dm->global_node[low]) low = t->node[k];
  return low < dm->nowned;
}

/* Boundary faces (runs of one in the sorted faces) triangulated; the held triangles first, each part
 * by increasing key. */
static PetscErrorCode build_triangles(const pbng_dmesh *dm, pbng_surface *s)
{
  face_record *faces;
  int64_t nfaces = 0, n = 0;

  PetscFunctionBeginUser;
  PetscCall(collect_faces(dm, &faces, &nfaces));
  int64_t nsheet = 0;
  for (int32_t e = 0; e < dm->nelems; ++e) nsheet += is_sheet_triangle(dm, e);
  PetscCall(PetscCalloc1(2 * (nfaces + nsheet) + 1, &s->tri));
  for (int64_t i = 0, j; i < nfaces; i = j) {
    for (j = i + 1; j < nfaces && !compare_faces(&faces[i], &faces[j]);) ++j;
    if (j - i == 1) n += face_triangles(dm, faces[i].elem, faces[i].face, &s->tri[n]);
  }
  PetscCall(PetscFree(faces));
  for (int32_t e = 0; e < dm->nelems; ++e)
    if (is_sheet_triangle(dm, e)) sheet_sides(dm, e, &s->tri[n]), n += 2;
  PetscCheck(n < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "surface: too many boundary triangles on one rank");
  /* held ones first, then those that only touch an owned node */
  pbng_surface_triangle *sorted;
  PetscCall(PetscMalloc1(n + 1, &sorted));
  s->ntri = (int32_t)n, s->nheld = 0;
  for (int64_t k = 0; k < n; ++k)
    if (holds(dm, &s->tri[k])) sorted[s->nheld++] = s->tri[k];
  for (int64_t k = 0, m = s->nheld; k < n; ++k)
    if (!holds(dm, &s->tri[k])) sorted[m++] = s->tri[k];
  qsort(sorted, (size_t)s->nheld, sizeof(*sorted), compare_triangles);
  qsort(sorted + s->nheld, (size_t)(n - s->nheld), sizeof(*sorted), compare_triangles);
  PetscCall(PetscFree(s->tri));
  s->tri = sorted;
  PetscFunctionReturn(0);
}

/* Surface vertex flags: an owned node is one when it is a corner of a boundary triangle (all its faces
 * were decided here); ghosts get their owner's flag. */
static PetscErrorCode mark_vertices(const pbng_dmesh *dm, const pbng_ghost_plan *plan, pbng_surface *s)
{
  int64_t *flag;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(dm->nlocal + 1, &flag));
  for (int32_t t = 0; t < s->ntri; ++t)
    for (int k = 0; k < 3; ++k)
      if (s->tri[t].node[k] < dm->nowned) flag[s->tri[t].node[k]] = 1;
  PetscCall(pbng_ghost_plan_forward(plan, flag));
  PetscCall(PetscMalloc1(dm->nlocal + 1, &s->is_vertex));
  for (int32_t i = 0; i < dm->nlocal; ++i) s->is_vertex[i] = (uint8_t)flag[i];
  PetscCall(PetscFree(flag));
  PetscFunctionReturn(0);
}

/* Owned surface vertices by increasing global id (sorted as (gid, local index) pairs). */
static PetscErrorCode list_vertices(const pbng_dmesh *dm, pbng_surface *s)
{
  int64_t *pair;

  PetscFunctionBeginUser;
  s->nvert = 0;
  for (int32_t i = 0; i < dm->nowned; ++i) s->nvert += s->is_vertex[i];
  PetscCall(PetscMalloc1(2 * (int64_t)s->nvert + 1, &pair));
  PetscCall(PetscMalloc1(s->nvert + 1, &s->vert));
  for (int32_t i = 0, n = 0; i < dm->nowned; ++i)
    if (s->is_vertex[i]) pair[2 * n] = dm->global_node[i], pair[2 * n + 1] = i, ++n;
  qsort(pair, (size_t)s->nvert, 2 * sizeof(int64_t), pbng_compare_int64); /* by the first of each pair: the gid */
  for (int32_t v = 0; v < s->nvert; ++v) s->vert[v] = (int32_t)pair[2 * v + 1];
  PetscCall(PetscFree(pair));
  PetscFunctionReturn(0);
}

/* Per owned surface vertex, the triangles having it as a corner, by increasing key. */
static PetscErrorCode incident_triangles(const pbng_dmesh *dm, pbng_surface *s)
{
  int32_t *index, *corner_vertex;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(dm->nowned + 1, &index));
  for (int32_t i = 0; i < dm->nowned; ++i) index[i] = -1;
  for (int32_t v = 0; v < s->nvert; ++v) index[s->vert[v]] = v;
  PetscCall(PetscMalloc1(3 * (int64_t)s->ntri + 1, &corner_vertex)); /* each triangle corner's owned surface vertex, or -1 */
  for (int32_t t = 0; t < s->ntri; ++t)
    for (int k = 0; k < 3; ++k) corner_vertex[3 * (int64_t)t + k] = s->tri[t].node[k] < dm->nowned ? index[s->tri[t].node[k]] : -1;
  PetscErrorCode ierr = pbng_csr_by_key32(3 * (int64_t)s->ntri, corner_vertex, 3, s->nvert, &s->vtri_start, &s->vtri);
  PetscCall(PetscFree(corner_vertex));
  PetscCall(ierr);
  for (int32_t v = 0; v < s->nvert; ++v) { /* insertion sort by key: lists are short */
    int32_t *list = &s->vtri[s->vtri_start[v]];
    for (int32_t j = 1; j < s->vtri_start[v + 1] - s->vtri_start[v]; ++j) {
      const int32_t t = list[j];
      int32_t k = j - 1;
      for (; k >= 0 && s->tri[list[k]].key > s->tri[t].key; --k) list[k + 1] = list[k];
      list[k + 1] = t;
    }
  }
  PetscCall(PetscFree(index));
  PetscFunctionReturn(0);
}

/* Per owned surface vertex, the global ids of the nodes of its elements (all local), sorted, unique. */
static PetscErrorCode element_neighbours(const pbng_dmesh *dm, pbng_surface *s)
{
  int64_t bound = 0, n = 0;

  PetscFunctionBeginUser;
  for (int32_t v = 0; v < s->nvert; ++v) bound += (int64_t)dm->nen * (dm->adj_start[s->vert[v] + 1] - dm->adj_start[s->vert[v]]);
  PetscCall(PetscMalloc1(bound + 1, &s->nbr));
  PetscCall(PetscMalloc1(s->nvert + 1, &s->nbr_start));
  s->nbr_start[0] = 0;
  for (int32_t v = 0; v < s->nvert; ++v) {
    const int32_t i = s->vert[v];
    const int64_t first = n;
    for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
      const int32_t e = pbng_adj_element(dm->nen, dm->adj[k]);
      const int32_t *row = &dm->elems[(int64_t)dm->nen * e];
      for (int a = 0, m = pbng_row_nodes(row, dm->nen); a < m; ++a) s->nbr[n++] = dm->global_node[row[a]];
    }
    qsort(&s->nbr[first], (size_t)(n - first), sizeof(int64_t), pbng_compare_int64);
    int64_t u = first;
    for (int64_t k = first; k < n; ++k)
      if (k == first || s->nbr[k] != s->nbr[u - 1]) s->nbr[u++] = s->nbr[k];
    n = u;
    PetscCheck(n < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "surface: too many vertex neighbours on one rank");
    s->nbr_start[v + 1] = (int32_t)n;
  }
  PetscFunctionReturn(0);
}

/* Union-find root with path halving. */
static int32_t find_root(int32_t *parent, int32_t i)
{
  while (parent[i] != i) parent[i] = parent[parent[i]], i = parent[i];
  return i;
}

/* Every node of a local element joined with the element's first node. */
static PetscErrorCode join_local_elements(const pbng_dmesh *dm, int32_t *parent)
{
  PetscFunctionBeginUser;
  for (int32_t i = 0; i < dm->nlocal; ++i) parent[i] = i;
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const int32_t *row = &dm->elems[(int64_t)dm->nen * e];
    const int32_t r0 = find_root(parent, row[0]);
    for (int a = 1, m = pbng_row_nodes(row, dm->nen); a < m; ++a) {
      const int32_t r = find_root(parent, row[a]);
      if (r != r0) parent[r] = r0;
    }
  }
  PetscFunctionReturn(0);
}

/* Each local set's nodes take the set's smallest label; returns whether a label changed. */
static int spread_set_minimum(int32_t nlocal, int32_t *parent, int64_t *setmin, int64_t *label)
{
  int changed = 0;
  for (int32_t i = 0; i < nlocal; ++i) setmin[i] = INT64_MAX;
  for (int32_t i = 0; i < nlocal; ++i) {
    const int32_t r = find_root(parent, i);
    if (label[i] < setmin[r]) setmin[r] = label[i];
  }
  for (int32_t i = 0; i < nlocal; ++i) {
    const int64_t m = setmin[find_root(parent, i)];
    changed |= m != label[i];
    label[i] = m;
  }
  return changed;
}

/* Bodies: labels start as the nodes' global ids; a round takes each local set's minimum, then each
 * owned node the minimum over its ghost copies, then gives it back to them; rounds repeat until none
 * changes a label on any rank. The labels are then the smallest global id of each component. */
static PetscErrorCode label_bodies(const pbng_dmesh *dm, const pbng_ghost_plan *plan, int64_t *body, int64_t *nbodies, int *rounds)
{
  int32_t *parent;
  int64_t *setmin, *before, mine = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3(dm->nlocal + 1, &parent, dm->nlocal + 1, &setmin, dm->nlocal + 1, &before));
  PetscCall(join_local_elements(dm, parent));
  for (int32_t i = 0; i < dm->nlocal; ++i) body[i] = dm->global_node[i];
  *rounds = 0;
  for (int changed = 1; changed; ++*rounds) {
    memcpy(before, body, sizeof(int64_t) * (size_t)dm->nlocal);
    spread_set_minimum(dm->nlocal, parent, setmin, body);
    PetscCall(pbng_ghost_plan_reverse_min(plan, body));
    PetscCall(pbng_ghost_plan_forward(plan, body));
    int mine_changed = memcmp(before, body, sizeof(int64_t) * (size_t)dm->nlocal) != 0;
    PetscCallMPI(MPI_Allreduce(&mine_changed, &changed, 1, MPI_INT, MPI_LOR, dm->comm));
  }
  for (int32_t i = 0; i < dm->nowned; ++i) mine += dm->adj_start[i + 1] > dm->adj_start[i] && body[i] == dm->global_node[i];
  PetscCallMPI(MPI_Allreduce(&mine, nbodies, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  PetscCall(PetscFree3(parent, setmin, before));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_body_labels(const pbng_dmesh *dm, int64_t *body, int64_t *nbodies, int *rounds)
{
  pbng_ghost_plan plan;

  PetscFunctionBeginUser;
  PetscCall(pbng_ghost_plan_create(dm, &plan));
  PetscErrorCode ierr = label_bodies(dm, &plan, body, nbodies, rounds);
  PetscCall(pbng_ghost_plan_destroy(&plan));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_surface_create(const pbng_dmesh *dm, pbng_surface *s)
{
  pbng_ghost_plan plan;

  PetscFunctionBeginUser;
  memset(s, 0, sizeof(*s));
  PetscCall(pbng_ghost_plan_create(dm, &plan));
  PetscCall(build_triangles(dm, s));
  PetscCall(mark_vertices(dm, &plan, s));
  PetscCall(list_vertices(dm, s));
  PetscCall(incident_triangles(dm, s));
  PetscCall(element_neighbours(dm, s));
  PetscCall(PetscMalloc1(dm->nlocal + 1, &s->body));
  PetscCall(label_bodies(dm, &plan, s->body, &s->nbodies, &s->body_rounds));
  PetscCall(pbng_ghost_plan_destroy(&plan));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_surface_destroy(pbng_surface *s)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(s->tri));
  PetscCall(PetscFree(s->is_vertex));
  PetscCall(PetscFree(s->vert));
  PetscCall(PetscFree(s->vtri_start));
  PetscCall(PetscFree(s->vtri));
  PetscCall(PetscFree(s->nbr_start));
  PetscCall(PetscFree(s->nbr));
  PetscCall(PetscFree(s->body));
  memset(s, 0, sizeof(*s));
  PetscFunctionReturn(0);
}
