#include "mesh/mesh.h"
#include "core/csr.h"
#include "mesh/repeated_elements.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static PetscErrorCode alloc_rows(pbng_mesh *mesh, int nen, int64_t nnodes, int64_t nelems)
{
  PetscFunctionBeginUser;
  PetscCheck(nnodes > 0 && nnodes <= INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "mesh: %" PRId64 " nodes is outside 1..2^31-1", nnodes);
  PetscCheck(nelems > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mesh: no elements");
  mesh->nnodes = nnodes;
  mesh->nelems = nelems;
  mesh->nen = nen;
  PetscCall(PetscMalloc1((size_t)nnodes * 3, &mesh->X));
  PetscCall(PetscMalloc1((size_t)nelems * nen, &mesh->elems));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_alloc(pbng_mesh *mesh, pbng_element_kind kind, int64_t nnodes, int64_t nelems)
{
  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh));
  mesh->etype = pbng_element_type_get(kind);
  PetscCall(alloc_rows(mesh, mesh->etype->nodes, nnodes, nelems));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_alloc_mixed(pbng_mesh *mesh, int nen, int64_t nnodes, int64_t nelems)
{
  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh));
  PetscCall(alloc_rows(mesh, nen, nnodes, nelems));
  PetscCall(PetscMalloc1((size_t)nelems, &mesh->kind));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_alloc_layout(pbng_mesh *mesh, int64_t layout, int64_t nnodes, int64_t nelems, const char *what)
{
  PetscFunctionBeginUser;
  PetscCheck(layout < PBNG_ELEMENT_KIND_COUNT && layout >= -PBNG_MAX_ELEMENT_NODES, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: element layout %" PRId64 " is neither a kind (0..%d) nor mixed kinds' row width (-4..-%d)", what, layout,
             PBNG_ELEMENT_KIND_COUNT - 1, PBNG_MAX_ELEMENT_NODES);
  if (layout >= 0) PetscCall(pbng_mesh_alloc(mesh, (pbng_element_kind)layout, nnodes, nelems));
  else PetscCall(pbng_mesh_alloc_mixed(mesh, (int)-layout, nnodes, nelems));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_alloc_empty(pbng_mesh *mesh, int64_t layout, const char *what)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_mesh_alloc_layout(mesh, layout, 1, 1, what)); /* the layout's checks and fields, then no rows */
  mesh->nnodes = mesh->nelems = 0;
  PetscFunctionReturn(0);
}

void pbng_mesh_count_kinds(const pbng_mesh *mesh, int64_t *counts)
{
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k) counts[k] = 0;
  if (!mesh->kind) counts[mesh->etype->kind] = mesh->nelems;
  else
    for (int64_t e = 0; e < mesh->nelems; ++e) ++counts[mesh->kind[e]];
}

void pbng_mesh_kinds_label(const pbng_mesh *mesh, char *buf, size_t len)
{
  pbng_element_kinds_label(pbng_element_kinds_mask(mesh->etype, mesh->kind, mesh->nelems), buf, len);
}

PetscErrorCode pbng_mesh_destroy(pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(mesh->X));
  PetscCall(PetscFree(mesh->elems));
  PetscCall(PetscFree(mesh->kind));
  for (int s = 0; s < mesh->nsets; ++s) PetscCall(PetscFree(mesh->sets[s].nodes));
  PetscCall(PetscFree(mesh->sets));
  PetscCall(PetscFree(mesh->weak));
  memset(mesh, 0, sizeof(*mesh));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_add_weak_constraints(pbng_mesh *mesh, int64_t n, const pbng_weak_constraint *c)
{
  PetscFunctionBeginUser;
  if (n <= 0) PetscFunctionReturn(0);
  PetscCall(PetscRealloc(sizeof(pbng_weak_constraint) * (size_t)(mesh->nweak + n), &mesh->weak));
  memcpy(&mesh->weak[mesh->nweak], c, sizeof(pbng_weak_constraint) * (size_t)n);
  mesh->nweak += n;
  PetscFunctionReturn(0);
}

static int compare_int32(const void *a, const void *b)
{
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

PetscErrorCode pbng_mesh_add_node_set(pbng_mesh *mesh, const char *name, int64_t count, const int32_t *nodes)
{
  pbng_node_set *set;

  PetscFunctionBeginUser;
  PetscCall(PetscRealloc(sizeof(pbng_node_set) * (size_t)(mesh->nsets + 1), &mesh->sets));
  set = &mesh->sets[mesh->nsets++];
  memset(set, 0, sizeof(*set));
  PetscCall(PetscStrncpy(set->name, name, sizeof(set->name)));
  PetscCall(PetscMalloc1((size_t)(count > 0 ? count : 1), &set->nodes));
  if (count > 0) memcpy(set->nodes, nodes, sizeof(int32_t) * (size_t)count);
  qsort(set->nodes, (size_t)count, sizeof(int32_t), compare_int32);
  int64_t unique = 0;
  for (int64_t i = 0; i < count; ++i)
    if (unique == 0 || set->nodes[unique - 1] != set->nodes[i]) set->nodes[unique++] = set->nodes[i];
  set->count = unique;
  PetscFunctionReturn(0);
}

const pbng_node_set *pbng_mesh_find_node_set(const pbng_mesh *mesh, const char *name)
{
  for (int s = 0; s < mesh->nsets; ++s)
    if (!strcmp(mesh->sets[s].name, name)) return &mesh->sets[s];
  return NULL;
}

static double tet_longest_edge(const double (*X)[3])
{
  double h2 = 0.0;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {
      double d2 = 0.0;
      for (int k = 0; k < 3; ++k) {
        const double d = X[a][k] - X[b][k];
        d2 += d * d;
      }
      if (d2 > h2) h2 = d2;
    }
  return sqrt(h2);
}

double pbng_tet4_rest_volume(const double (*X)[3], int *degenerate)
{
  const double V = pbng_tet_signed_volume(X[0], X[1], X[2], X[3]), h = tet_longest_edge(X);
  *degenerate = !(fabs(V) > 1e-12 * h * h * h && h > 0);
  return V;
}

static PetscErrorCode check_coordinates_finite(const pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  for (int64_t i = 0; i < mesh->nnodes; ++i)
    for (int k = 0; k < 3; ++k)
      PetscCheck(isfinite(mesh->X[3 * i + k]), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
                 "%s: node %" PRId64 " has a non-finite coordinate", mesh->source, i);
  PetscFunctionReturn(0);
}

/* How errors name an element's file record: record[e] when the reader gives one per element, else
 * e + offset (the records numbered like the elements from offset on). */
typedef struct {
  int64_t offset;
  const int64_t *record;
} mesh_records;

static int64_t record_of(const mesh_records *rec, int64_t e) { return rec->record ? rec->record[e] : e + rec->offset; }

static PetscErrorCode check_node_indices(const pbng_mesh *mesh, const mesh_records *rec)
{
  const int nen = mesh->nen;

  PetscFunctionBeginUser;
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    const int32_t *t = &mesh->elems[(size_t)e * nen];
    for (int a = 0, n = pbng_mesh_element_type(mesh, e)->nodes; a < n; ++a)
      PetscCheck(t[a] >= 0 && t[a] < mesh->nnodes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
                 "%s: element %" PRId64 " (record %" PRId64 ") references node %d, outside 0..%" PRId64,
                 mesh->source, e, record_of(rec, e), (int)t[a], mesh->nnodes - 1);
  }
  PetscFunctionReturn(0);
}

/* Whether element e is a linear tetrahedron (in a tet4 mesh, or one mixing tet4 with sheet kinds). */
static int is_tet4(const pbng_mesh *mesh, int64_t e) { return pbng_mesh_element_type(mesh, e)->kind == PBNG_ELEMENT_TET4; }

/* Rejects degenerate tetrahedra (|V| <= 1e-12 h^3) among the linear tetrahedra and counts them
 * (*ntet) and the negatively oriented ones: *negative, and the first negative and first positive element. */
static PetscErrorCode check_tet_volumes(const pbng_mesh *mesh, const mesh_records *rec, int64_t *ntet, int64_t *negative,
                                        int64_t *first_negative, int64_t *first_positive)
{
  PetscFunctionBeginUser;
  *ntet = 0, *negative = 0, *first_negative = -1, *first_positive = -1;
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    if (!is_tet4(mesh, e)) continue;
    const int32_t *t = &mesh->elems[(size_t)e * mesh->nen];
    double X[4][3];
    int degenerate;
    for (int a = 0; a < 4; ++a) memcpy(X[a], &mesh->X[3 * (int64_t)t[a]], sizeof(X[a]));
    const double V = pbng_tet4_rest_volume((const double(*)[3])X, &degenerate);
    PetscCheck(!degenerate, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%s: element %" PRId64 " (record %" PRId64 ", 0-based nodes %d %d %d %d) is degenerate: rest volume %g",
               mesh->source, e, record_of(rec, e), (int)t[0], (int)t[1], (int)t[2], (int)t[3], V);
    ++*ntet;
    if (V < 0) {
      if (*negative == 0) *first_negative = e;
      ++*negative;
    } else if (*first_positive < 0) *first_positive = e;
  }
  PetscFunctionReturn(0);
}

/* One orientation for all linear tetrahedra is a file convention (Gmsh and TetGen list nodes so that
 * the volume is positive; a file with every tetrahedron the other way round is re-oriented). A
 * tetrahedron oriented against the others is inverted in the rest state: the mesh is folded or its
 * element lists are inconsistent, and it is rejected, naming the first element of the minority. Other
 * elements (sheet kinds beside the tetrahedra) are left alone. */
static PetscErrorCode orient_tets_consistently(pbng_mesh *mesh, const mesh_records *rec)
{
  int64_t ntet, negative, first_negative, first_positive;

  PetscFunctionBeginUser;
  PetscCall(check_tet_volumes(mesh, rec, &ntet, &negative, &first_negative, &first_positive));
  if (negative > 0 && negative < ntet) {
    const PetscBool minority_negative = (PetscBool)(2 * negative <= ntet);
    const int64_t e = minority_negative ? first_negative : first_positive, n = minority_negative ? negative : ntet - negative;
    const int32_t *t = &mesh->elems[(size_t)e * mesh->nen];
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
            "%s: element %" PRId64 " (record %" PRId64 ", 0-based nodes %d %d %d %d) is inverted in the rest state: %" PRId64
            " of the %" PRId64 " tetrahedra are oriented against the others (a folded mesh or inconsistent node order)",
            mesh->source, e, record_of(rec, e), (int)t[0], (int)t[1], (int)t[2], (int)t[3], n, ntet);
  }
  if (ntet > 0 && negative == ntet) /* the file's convention is the opposite one: swap nodes 2 and 3 */
    for (int64_t e = 0; e < mesh->nelems; ++e) {
      if (!is_tet4(mesh, e)) continue;
      int32_t *t = &mesh->elems[(size_t)e * mesh->nen];
      const int32_t tmp = t[2];
      t[2] = t[3];
      t[3] = tmp;
    }
  PetscFunctionReturn(0);
}

/* The rest positions of element e's nodes. */
static void element_rest_nodes(const pbng_mesh *mesh, int64_t e, double (*X)[3])
{
  const int nen = mesh->nen;
  for (int a = 0, n = pbng_mesh_element_type(mesh, e)->nodes; a < n; ++a)
    memcpy(X[a], &mesh->X[3 * (int64_t)mesh->elems[(size_t)e * nen + a]], sizeof(X[a]));
}

/* The error for element e (of type t), the first of `bad` among `checked` elements that fail the element
 * layer's check at point q (a quadrature point; a sheet kind's triangle) with value det there. */
static PetscErrorCode jacobian_error(const pbng_mesh *mesh, const mesh_records *rec, int64_t e, const pbng_element_type *t,
                                     const pbng_element_reference *ref, int q, double det, int64_t bad, int64_t checked)
{
  PetscFunctionBeginUser;
  if (pbng_element_is_sheet(t)) {
    const int32_t *row = &mesh->elems[(size_t)e * mesh->nen];
    char nodes[64];
    snprintf(nodes, sizeof(nodes), t->nodes > 3 ? "%d %d %d %d" : "%d %d %d", (int)row[0], (int)row[1], (int)row[2], (int)row[t->nodes > 3 ? 3 : 2]);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
            "%s: element %" PRId64 " (record %" PRId64 ", %s, 0-based nodes %s) is degenerate: %s has twice its area over its longest edge "
            "squared %g (not above 1e-12: coincident or collinear corners); %" PRId64 " of the %" PRId64 " elements fail this check",
            mesh->source, e, record_of(rec, e), t->name, nodes, t->nodes > 3 ? (q ? "its second triangle" : "its first triangle") : "the triangle",
            det, bad, checked);
  }
  const double *r = ref->r[q < 0 ? 0 : q];
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
          "%s: element %" PRId64 " (record %" PRId64 ", %s) is %s in the rest state at quadrature point %d (reference point %g %g %g): "
          "det J = %g%s; %" PRId64 " of the %" PRId64 " elements fail this check",
          mesh->source, e, record_of(rec, e), t->name, det <= 0 ? "inverted" : "degenerate", q, r[0], r[1], r[2], det,
          det <= 0 ? "" : " (not above 1e-12 d^3, d the diagonal of its nodes' bounding box)", bad, checked);
}

/* The elements of the kinds in `kinds` (a kind mask): det J at each quadrature point, by the element
 * layer's own check (pbng_element_first_invalid_point, the test pbng_element_precompute applies), so
 * that what the reader accepts the solvers accept; for the sheet kinds that check is each triangle's
 * shape (degenerate: coincident or collinear corners). An element inverted or degenerate at some
 * point is an error naming the first such element and point, and how many elements fail. Not
 * re-oriented, unlike the linear tetrahedron: a mirrored listing of these kinds is no known file
 * convention (Gmsh and TetGen list them with det J > 0), its repair would be a kind-specific
 * permutation, and a curved element can be inverted at some points only, where no renumbering helps
 * (a sheet triangle has no inside and outside to get wrong). */
static PetscErrorCode check_element_jacobians(const pbng_mesh *mesh, const mesh_records *rec, unsigned kinds)
{
  pbng_element_reference *ref; /* [PBNG_ELEMENT_KIND_COUNT]: each kind checked */
  double X[PBNG_MAX_ELEMENT_NODES][3], det = 0;
  int64_t bad = 0, checked = 0, first = INT64_MAX;

  PetscFunctionBeginUser;
  kinds &= pbng_element_kinds_mask(mesh->etype, mesh->kind, mesh->nelems);
  if (!kinds) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(PBNG_ELEMENT_KIND_COUNT, &ref));
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k)
    if (kinds & (1u << k)) pbng_element_reference_init(pbng_element_type_get((pbng_element_kind)k), &ref[k]);
  /* threads: a second per 262 144 hex27 on one core, at every run of a large generated mesh */
#pragma omp parallel for private(X, det) reduction(+ : bad, checked) reduction(min : first) schedule(static)
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    const pbng_element_kind k = pbng_mesh_element_type(mesh, e)->kind;
    if (!(kinds & (1u << k))) continue;
    ++checked;
    element_rest_nodes(mesh, e, X);
    if (pbng_element_first_invalid_point(&ref[k], (const double(*)[3])X, &det) < 0) continue;
    first = e < first ? e : first;
    ++bad;
  }
  PetscErrorCode ierr = 0;
  if (bad) {
    const pbng_element_type *t = pbng_mesh_element_type(mesh, first);
    element_rest_nodes(mesh, first, X);
    const int q = pbng_element_first_invalid_point(&ref[t->kind], (const double(*)[3])X, &det);
    ierr = jacobian_error(mesh, rec, first, t, &ref[t->kind], q, det, bad, checked);
  }
  PetscCall(PetscFree(ref));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* The smallest node of a row of width n (padding left out). */
static int32_t smallest_node(const int32_t *v, int n)
{
  n = pbng_row_nodes(v, n);
  int32_t m = v[0];
  for (int i = 1; i < n; ++i) m = v[i] < m ? v[i] : m;
  return m;
}

/* Whether elements a and b of the mesh (ctx) are one element repeated: the same kind (a bending stencil and a linear
 * tetrahedron may share their 4 nodes) on the same nodes (padded rows compare as they are: -1 sorts first). */
static int same_element(const void *ctx, int32_t a, int32_t b)
{
  const pbng_mesh *mesh = ctx;
  const int nen = mesh->nen;
  const int32_t *ra = &mesh->elems[(size_t)a * nen], *rb = &mesh->elems[(size_t)b * nen];
  int32_t u[PBNG_MAX_ELEMENT_NODES], v[PBNG_MAX_ELEMENT_NODES];
  int64_t sum = 0;
  for (int k = 0; k < nen; ++k) sum += (int64_t)ra[k] - rb[k];
  if (sum != 0) return 0; /* different node sets, told apart without sorting (most pairs of a bucket) */
  if (pbng_mesh_element_type(mesh, a) != pbng_mesh_element_type(mesh, b)) return 0;
  memcpy(u, &mesh->elems[(size_t)a * nen], sizeof(int32_t) * (size_t)nen);
  memcpy(v, &mesh->elems[(size_t)b * nen], sizeof(int32_t) * (size_t)nen);
  pbng_sort_row_nodes(u, nen), pbng_sort_row_nodes(v, nen);
  return !memcmp(u, v, sizeof(int32_t) * (size_t)nen);
}

/* Rejects two elements on the same set of nodes (mesh/repeated_elements.h): buckets by the smallest node (a counting
 * sort, O(nnodes + nelems) memory). */
static PetscErrorCode check_duplicate_elements(const pbng_mesh *mesh, const mesh_records *rec)
{
  int64_t *start;
  int32_t *members, *smallest, a, b;
  char msg[PETSC_MAX_PATH_LEN + 256] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)mesh->nelems + 1, &smallest));
  for (int64_t e = 0; e < mesh->nelems; ++e) smallest[e] = smallest_node(&mesh->elems[(size_t)e * mesh->nen], mesh->nen);
  PetscErrorCode ierr = pbng_csr_by_key64(mesh->nelems, smallest, 1, mesh->nnodes, &start, &members);
  PetscCall(PetscFree(smallest));
  PetscCall(ierr);
  const int found = pbng_first_repeated_pair(mesh->nnodes, start, members, same_element, mesh, &a, &b);
  PetscCall(PetscFree(start));
  PetscCall(PetscFree(members));
  if (found)
    pbng_repeated_elements_message(msg, sizeof(msg), mesh->source, a, b, record_of(rec, a), record_of(rec, b), pbng_mesh_element_type(mesh, a)->name);
  PetscCheck(!found, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s", msg);
  PetscFunctionReturn(0);
}

/* Validation with the records named by rec (pbng_mesh_validate's checks). A mesh whose volume elements
 * are all linear tetrahedra (sheet kinds beside them or not) has them checked and re-oriented as a
 * whole; every other element is checked by its kind's own test. */
static PetscErrorCode validate(pbng_mesh *mesh, const mesh_records *rec)
{
  const unsigned kinds = pbng_element_kinds_mask(mesh->etype, mesh->kind, mesh->nelems), tet4 = 1u << PBNG_ELEMENT_TET4;

  PetscFunctionBeginUser;
  PetscCall(check_coordinates_finite(mesh));
  PetscCall(check_node_indices(mesh, rec));
  if ((kinds & ~PBNG_SHEET_KINDS_MASK) == tet4) {
    PetscCall(orient_tets_consistently(mesh, rec));
    PetscCall(check_element_jacobians(mesh, rec, kinds & PBNG_SHEET_KINDS_MASK));
  } else PetscCall(check_element_jacobians(mesh, rec, kinds));
  PetscCall(check_duplicate_elements(mesh, rec));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_validate(pbng_mesh *mesh, int64_t record_offset)
{
  const mesh_records rec = {record_offset, NULL};

  PetscFunctionBeginUser;
  PetscCall(validate(mesh, &rec));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_validate_records(pbng_mesh *mesh, const int64_t *record)
{
  const mesh_records rec = {0, record};

  PetscFunctionBeginUser;
  PetscCall(validate(mesh, &rec));
  PetscFunctionReturn(0);
}
