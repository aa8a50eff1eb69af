#include "parallel/slice_check.h"
#include "core/csr.h"
#include "mesh/repeated_elements.h"
#include "parallel/dist_graph.h"
#include "parallel/halo.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A message naming the mesh (its source: a path) and an element. */
enum { MESSAGE_LEN = PETSC_MAX_PATH_LEN + 512 };

PetscErrorCode pbng_agree_on_first_error(MPI_Comm comm, int64_t key, char *msg, size_t len, int *failed)
{
  struct {
    long key;
    int rank;
  } mine, first;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &mine.rank));
  mine.key = (long)key;
  PetscCallMPI(MPI_Allreduce(&mine, &first, 1, MPI_LONG_INT, MPI_MINLOC, comm));
  *failed = first.key != (long)INT64_MAX;
  if (*failed) PetscCallMPI(MPI_Bcast(msg, (int)len, MPI_CHAR, first.rank, comm));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_stop_on_first_error(MPI_Comm comm, int64_t key, char *msg, size_t len)
{
  int failed;

  PetscFunctionBeginUser;
  PetscCall(pbng_agree_on_first_error(comm, key, msg, len, &failed));
  PetscCheck(!failed, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s", msg);
  PetscFunctionReturn(0);
}

/* The first node of the slice with a non-finite coordinate (INT64_MAX: none), its message in msg. */
static int64_t first_non_finite(const pbng_mesh_slice *s, char *msg, size_t len)
{
  for (int64_t i = 0; i < s->node_end - s->node_begin; ++i)
    for (int d = 0; d < 3; ++d)
      if (!isfinite(s->X[3 * i + d])) {
        snprintf(msg, len, "%s: node %" PRId64 " has a non-finite coordinate", s->source, s->node_begin + i);
        return s->node_begin + i;
      }
  return INT64_MAX;
}

static void answer_position(void *ctx, int64_t local, void *item) { memcpy(item, &((const pbng_mesh_slice *)ctx)->X[3 * local], 3 * sizeof(double)); }

PetscErrorCode pbng_slice_positions_create(MPI_Comm comm, const pbng_mesh_slice *s, pbng_slice_positions *p)
{
  int64_t *range;

  PetscFunctionBeginUser;
  p->s = s;
  PetscCall(pbng_slice_ranges(comm, s, &range));
  PetscCall(pbng_slice_foreign_nodes(s, &p->nforeign, &p->foreign));
  PetscCall(PetscMalloc1(p->nforeign + 1, &p->Xforeign));
  PetscCall(pbng_ask_range_owners(comm, range, p->nforeign, p->foreign, 3 * sizeof(double), answer_position, (void *)s, p->Xforeign));
  PetscCall(PetscFree(range));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_slice_positions_destroy(pbng_slice_positions *p)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(p->foreign));
  PetscCall(PetscFree(p->Xforeign));
  PetscFunctionReturn(0);
}

int64_t pbng_slice_positions_local(const pbng_slice_positions *p, int64_t id)
{
  const pbng_mesh_slice *s = p->s;
  PetscInt at = -1;
  if (id >= s->node_begin && id < s->node_end) return id - s->node_begin;
  (void)PetscFindInt((PetscInt)id, p->nforeign, p->foreign, &at); /* found: every foreign node was asked */
  return at < 0 ? -1 : s->node_end - s->node_begin + at;
}

const double *pbng_slice_positions_of(const pbng_slice_positions *p, int64_t local)
{
  const int64_t nown = p->s->node_end - p->s->node_begin;
  return local < nown ? &p->s->X[3 * local] : p->Xforeign[local - nown];
}

/* The rest positions of slice element e's nodes (e: its index in the slice). */
static void element_positions(const pbng_slice_positions *p, int64_t e, double (*X)[3])
{
  const pbng_mesh_slice *s = p->s;
  for (int a = 0; a < s->etype->nodes; ++a) memcpy(X[a], pbng_slice_positions_of(p, pbng_slice_positions_local(p, s->elems[e * s->nen + a])), sizeof(X[a]));
}

/* Linear tetrahedra: the first degenerate one, then (over all slices) one orientation, as pbng_mesh_validate's
 * orient_tets_consistently; a mesh whose every tetrahedron is negative is re-oriented. */
static PetscErrorCode check_tetrahedra(MPI_Comm comm, const pbng_slice_positions *p, pbng_mesh_slice *s)
{
  const int64_t n = s->elem_end - s->elem_begin;
  int64_t key = INT64_MAX, first[2] = {INT64_MAX, INT64_MAX}; /* the first negative and first positive */
  int64_t count[2] = {n, 0};                                   /* tetrahedra, negative ones */
  char msg[MESSAGE_LEN] = "";
  double X[4][3];

  PetscFunctionBeginUser;
  for (int64_t e = 0; e < n && key == INT64_MAX; ++e) {
    int degenerate;
    element_positions(p, e, X);
    const double V = pbng_tet4_rest_volume((const double(*)[3])X, &degenerate);
    const int32_t *t = &s->elems[4 * e];
    if (degenerate) {
      key = s->elem_begin + e;
      snprintf(msg, sizeof(msg), "%s: element %" PRId64 " (record %" PRId64 ", 0-based nodes %d %d %d %d) is degenerate: rest volume %g", s->source, key,
               key, (int)t[0], (int)t[1], (int)t[2], (int)t[3], V);
    }
    if (V < 0) ++count[1];
    int64_t *f = &first[V < 0 ? 0 : 1];
    if (*f == INT64_MAX) *f = s->elem_begin + e;
  }
  PetscCall(pbng_stop_on_first_error(comm, key, msg, sizeof(msg)));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, count, 2, MPI_INT64_T, MPI_SUM, comm));
  if (count[1] > 0 && count[1] < count[0]) { /* the minority's first element, over all slices */
    const int minority_negative = 2 * count[1] <= count[0];
    key = first[minority_negative ? 0 : 1];
    if (key != INT64_MAX) {
      const int32_t *t = &s->elems[4 * (key - s->elem_begin)];
      snprintf(msg, sizeof(msg),
               "%s: element %" PRId64 " (record %" PRId64 ", 0-based nodes %d %d %d %d) is inverted in the rest state: %" PRId64
               " of the %" PRId64 " tetrahedra are oriented against the others (a folded mesh or inconsistent node order)",
               s->source, key, key, (int)t[0], (int)t[1], (int)t[2], (int)t[3], minority_negative ? count[1] : count[0] - count[1], count[0]);
    }
    PetscCall(pbng_stop_on_first_error(comm, key, msg, sizeof(msg)));
  }
  if (count[0] > 0 && count[1] == count[0]) /* the file's convention is the opposite one: swap nodes 2 and 3 */
    for (int64_t e = 0; e < n; ++e) {
      int32_t *t = &s->elems[4 * e];
      const int32_t tmp = t[2];
      t[2] = t[3], t[3] = tmp;
    }
  PetscFunctionReturn(0);
}

/* Every other kind: det J at each quadrature point by the element layer's check, as pbng_mesh_validate's. */
static PetscErrorCode check_jacobians(MPI_Comm comm, const pbng_slice_positions *p, const pbng_mesh_slice *s)
{
  const int64_t n = s->elem_end - s->elem_begin;
  pbng_element_reference *ref;
  int64_t key = INT64_MAX, count[2] = {n, 0}; /* checked, failing */
  double X[PBNG_MAX_ELEMENT_NODES][3], det = 0;
  char msg[MESSAGE_LEN] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(1, &ref));
  pbng_element_reference_init(s->etype, ref);
  for (int64_t e = 0; e < n; ++e) {
    element_positions(p, e, X);
    if (pbng_element_first_invalid_point(ref, (const double(*)[3])X, &det) < 0) continue;
    if (key == INT64_MAX) key = s->elem_begin + e;
    ++count[1];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, count, 2, MPI_INT64_T, MPI_SUM, comm));
  if (key != INT64_MAX) {
    element_positions(p, key - s->elem_begin, X);
    const int q = pbng_element_first_invalid_point(ref, (const double(*)[3])X, &det);
    const double *r = ref->r[q < 0 ? 0 : q];
    snprintf(msg, sizeof(msg),
             "%s: element %" PRId64 " (record %" PRId64 ", %s) is %s in the rest state at quadrature point %d (reference point %g %g %g): "
             "det J = %g%s; %" PRId64 " of the %" PRId64 " elements fail this check",
             s->source, key, key, s->etype->name, det <= 0 ? "inverted" : "degenerate", q, r[0], r[1], r[2], det,
             det <= 0 ? "" : " (not above 1e-12 d^3, d the diagonal of its nodes' bounding box)", count[1], count[0]);
  }
  PetscCall(PetscFree(ref));
  PetscCall(pbng_stop_on_first_error(comm, key, msg, sizeof(msg)));
  PetscFunctionReturn(0);
}

/* Elements sent to the process of their smallest node: per element its nodes sorted, then its global id. */
typedef struct {
  int width; /* nodes + 1 */
  const int32_t *item;
} sorted_rows;

static int same_sorted_row(const void *ctx, int32_t a, int32_t b)
{
  const sorted_rows *r = ctx;
  return !memcmp(&r->item[(int64_t)a * r->width], &r->item[(int64_t)b * r->width], sizeof(int32_t) * (size_t)(r->width - 1));
}

/* The slice's elements as items of `width` int32 (sorted nodes, global id) and their processes: their smallest nodes'. */
static PetscErrorCode sorted_rows_to_send(MPI_Comm comm, const pbng_mesh_slice *s, const int64_t *range, int32_t **item, int **dest)
{
  const int64_t n = s->elem_end - s->elem_begin;
  const int width = s->nen + 1;
  int size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMalloc2(n * width + 1, item, n + 1, dest));
  for (int64_t e = 0; e < n; ++e) {
    int32_t *t = &(*item)[e * width];
    memcpy(t, &s->elems[e * s->nen], sizeof(int32_t) * (size_t)s->nen);
    pbng_sort_row_nodes(t, s->nen);
    t[s->nen] = (int32_t)(s->elem_begin + e);
    (*dest)[e] = pbng_range_owner(range, size, t[0]);
  }
  PetscFunctionReturn(0);
}

/* No two elements on the same nodes anywhere in the mesh, as pbng_mesh_validate checks last: every element (its sorted
 * nodes and id) goes to the process of its smallest node, which buckets what it receives by that node (in element
 * order: the slices' element ranges increase with the rank) and looks for a repeated pair as the serial check does;
 * the buckets of the least node win, so the error is the serial one. */
static PetscErrorCode check_repeated_elements(MPI_Comm comm, const pbng_mesh_slice *s)
{
  const int width = s->nen + 1;
  int64_t *range, *start, nrecv, key = INT64_MAX;
  int32_t *item, *recv, *bucket, *members, a, b;
  int *dest, rank;
  char msg[MESSAGE_LEN] = "";

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(pbng_slice_ranges(comm, s, &range));
  PetscCall(sorted_rows_to_send(comm, s, range, &item, &dest));
  PetscCall(pbng_send_items_to(comm, sizeof(int32_t) * (size_t)width, s->elem_end - s->elem_begin, dest, item, &nrecv, (void **)&recv));
  PetscCall(PetscFree2(item, dest));
  PetscCall(PetscMalloc1(nrecv + 1, &bucket));
  for (int64_t k = 0; k < nrecv; ++k) bucket[k] = (int32_t)(recv[k * width] - range[rank]);
  PetscCall(pbng_csr_by_key64(nrecv, bucket, 1, range[rank + 1] - range[rank], &start, &members));
  const sorted_rows rows = {width, recv};
  if (pbng_first_repeated_pair(range[rank + 1] - range[rank], start, members, same_sorted_row, &rows, &a, &b)) {
    const int64_t ea = recv[(int64_t)a * width + s->nen], eb = recv[(int64_t)b * width + s->nen];
    key = recv[(int64_t)a * width];
    pbng_repeated_elements_message(msg, sizeof(msg), s->source, ea, eb, ea, eb, s->etype->name);
  }
  PetscCall(PetscFree(range));
  PetscCall(PetscFree(recv));
  PetscCall(PetscFree(bucket));
  PetscCall(PetscFree(start));
  PetscCall(PetscFree(members));
  PetscCall(pbng_stop_on_first_error(comm, key, msg, sizeof(msg)));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_slice_validate(MPI_Comm comm, pbng_mesh_slice *s)
{
  char msg[MESSAGE_LEN] = "";
  pbng_slice_positions p;

  PetscFunctionBeginUser;
  PetscCheck(!pbng_element_is_sheet(s->etype), comm, PETSC_ERR_SUP, "%s: slices of sheet elements (%s) are not checked", s->source, s->etype->name);
  PetscCall(pbng_stop_on_first_error(comm, first_non_finite(s, msg, sizeof(msg)), msg, sizeof(msg)));
  PetscCall(pbng_slice_positions_create(comm, s, &p));
  PetscErrorCode ierr = s->etype->kind == PBNG_ELEMENT_TET4 ? check_tetrahedra(comm, &p, s) : check_jacobians(comm, &p, s);
  PetscCall(pbng_slice_positions_destroy(&p));
  PetscCall(ierr);
  PetscCall(check_repeated_elements(comm, s));
  PetscFunctionReturn(0);
}
