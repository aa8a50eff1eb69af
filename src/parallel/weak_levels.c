#include "parallel/weak_levels.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "parallel/halo.h"
#include "parallel/locate.h"
#include "parallel/slice_check.h"
#include "parallel/slice_weak.h"
#include <stdio.h>

/* A vertex bound to a triangle's point where it lies (-bind_snap, contact/bindings.h: a = 1 on node 0, -w on the three
 * corners in the triangle's outward order, the sides' points within round-off of each other): the two points are moved
 * SNAPPED_SEPARATION of the triangle's longest edge apart along its normal, p1 into the triangle's body and p0 out of it
 * into the vertex's, so that located on a coarse level they fall in their own bodies' elements instead of cancelling
 * (measured at -scale 0.4 of the muscles, contacts off: 0.005 199 cycles, 0.02 274, 0.25 736, 1.0 471; not separated,
 * the coarse levels without these bindings: 418 with contacts against 372 at 0.005). */
#define SNAPPED_SEPARATION 0.005
static void separate_snapped(const pbng_weak_constraint *c, const double *X, pbng_weak_spring *s)
{
  const double *q[3];
  double e[3][3], n[3], longest = 0;
  if (c->nnodes != 4 || c->a[0] != 1.0) return;
  for (int a = 0; a < 3; ++a) q[a] = &X[3 * c->node[a + 1]];
  for (int a = 0; a < 3; ++a) {
    double len = 0;
    for (int k = 0; k < 3; ++k) e[a][k] = q[(a + 1) % 3][k] - q[a][k], len += e[a][k] * e[a][k];
    longest = fmax(longest, sqrt(len));
  }
  n[0] = e[0][1] * e[2][2] - e[0][2] * e[2][1], n[1] = e[0][2] * e[2][0] - e[0][0] * e[2][2], n[2] = e[0][0] * e[2][1] - e[0][1] * e[2][0];
  const double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  double gap = 0;
  for (int k = 0; k < 3; ++k) gap += (s->p[0][k] - s->p[1][k]) * (s->p[0][k] - s->p[1][k]);
  if (!(nn > 0) || sqrt(gap) > 1e-9 * longest) return;
  for (int k = 0; k < 3; ++k) { /* n = e0 x e2 = -(q1 - q0) x (q2 - q0): -n is the outward normal */
    const double out = -n[k] / nn * SNAPPED_SEPARATION * longest;
    s->p[0][k] += out, s->p[1][k] -= out;
    s->target[k] += 2 * out; /* the coarse constraint's rest offset p0 - p1 */
  }
}

void pbng_weak_spring_from(const pbng_weak_constraint *c, const double *X, int64_t id, pbng_weak_spring *s)
{
  memset(s, 0, sizeof(*s));
  s->id = id;
  for (int j = 0; j < c->nnodes; ++j) {
    const int side = c->a[j] > 0 ? 0 : 1;
    const double w = fabs(c->a[j]);
    if (side == 0) s->scale += w;
    for (int k = 0; k < 3; ++k) s->p[side][k] += w * X[3 * c->node[j] + k];
  }
  for (int side = 0; side < 2; ++side)
    for (int k = 0; k < 3; ++k) s->p[side][k] /= s->scale > 0 ? s->scale : 1.0;
  s->k_n = c->k_n, s->k_t = c->k_t;
  for (int k = 0; k < 3; ++k) s->n[k] = c->n[k], s->target[k] = c->target[k] / (s->scale > 0 ? s->scale : 1.0);
  separate_snapped(c, X, s);
}

static int by_id(const void *a, const void *b)
{
  const int64_t x = ((const pbng_weak_spring *)a)->id, y = ((const pbng_weak_spring *)b)->id;
  return (x > y) - (x < y);
}

/* The constraints this rank counts (node 0 owned) as springs, *mine[dm->nowned_weak]. */
static PetscErrorCode counted_springs(const pbng_dmesh *dm, pbng_weak_spring **mine)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(dm->nowned_weak + 1, mine));
  for (int32_t c = 0; c < dm->nowned_weak; ++c) pbng_weak_spring_from(&dm->weak[c], dm->X, dm->global_weak[c], &(*mine)[c]);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_weak_springs_spread(const pbng_dmesh *dm, int64_t *n, pbng_weak_spring **springs)
{
  pbng_weak_spring *mine, *recv;
  int *dest;
  int64_t nrecv;

  PetscFunctionBeginUser;
  PetscCall(counted_springs(dm, &mine));
  PetscCall(PetscMalloc1(dm->nowned_weak + 1, &dest));
  for (int32_t c = 0; c < dm->nowned_weak; ++c) dest[c] = pbng_balanced_owner(mine[c].id, dm->nglobal_weak, dm->size);
  PetscCall(pbng_send_items_to(dm->comm, sizeof(pbng_weak_spring), dm->nowned_weak, dest, mine, &nrecv, (void **)&recv));
  qsort(recv, (size_t)nrecv, sizeof(pbng_weak_spring), by_id);
  *n = nrecv, *springs = recv;
  PetscCall(PetscFree(dest));
  PetscCall(PetscFree(mine));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_weak_springs_gather(const pbng_dmesh *dm, int64_t *n, pbng_weak_spring **springs)
{
  pbng_weak_spring *mine;
  int *counts = NULL, *displs = NULL, total = 0;
  const int count = (int)dm->nowned_weak * (int)sizeof(pbng_weak_spring);

  PetscFunctionBeginUser;
  *n = 0, *springs = NULL;
  PetscCall(counted_springs(dm, &mine));
  if (dm->rank == 0) PetscCall(PetscMalloc2(dm->size, &counts, dm->size + 1, &displs));
  PetscCallMPI(MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, dm->comm));
  if (dm->rank == 0) {
    displs[0] = 0;
    for (int r = 0; r < dm->size; ++r) displs[r + 1] = displs[r] + counts[r];
    total = displs[dm->size];
    PetscCall(PetscMalloc1(total / sizeof(pbng_weak_spring) + 1, springs));
  }
  PetscCallMPI(MPI_Gatherv(mine, count, MPI_BYTE, *springs, counts, displs, MPI_BYTE, 0, dm->comm));
  if (dm->rank == 0) {
    *n = total / (int)sizeof(pbng_weak_spring);
    qsort(*springs, (size_t)*n, sizeof(pbng_weak_spring), by_id);
    PetscCall(PetscFree2(counts, displs));
  }
  PetscCall(PetscFree(mine));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_weak_springs_of_mesh(const pbng_mesh *mesh, int64_t *n, pbng_weak_spring **springs)
{
  PetscFunctionBeginUser;
  *n = mesh->nweak;
  PetscCall(PetscMalloc1(mesh->nweak + 1, springs));
  for (int64_t c = 0; c < mesh->nweak; ++c) pbng_weak_spring_from(&mesh->weak[c], mesh->X, c, &(*springs)[c]);
  PetscFunctionReturn(0);
}

/* A side's nodes and weights from a location (a tetrahedron's corners): negative (extrapolated)
 * weights clipped, tiny ones dropped, the rest renormalised to sum to one. */
static int side_weights(const pbng_point_location *l, int64_t nodes[4], double w[4])
{
  int n = 0;
  double sum = 0;
  for (int a = 0; a < l->nodes && a < 4; ++a)
    if (l->w[a] > 1e-14) nodes[n] = l->value[a], w[n] = l->w[a], sum += l->w[a], ++n;
  for (int k = 0; k < n; ++k) w[k] /= sum;
  return n;
}

/* Removes the nodes whose signed weights cancelled: 1 if the constraint still joins two nodes. */
static int drop_cancelled(pbng_weak_constraint *c)
{
  int n = 0;
  for (int j = 0; j < c->nnodes; ++j)
    if (fabs(c->a[j]) > 1e-12) c->node[n] = c->node[j], c->a[n] = c->a[j], ++n;
  c->nnodes = n;
  return n >= 2;
}

#define SPRING_CHUNK (PBNG_LOCATE_CHUNK / 2) /* springs located per call (two points each) */

/* The coarse constraint of spring s from its two points' locations into c, *kept = 0 when it carries nothing there;
 * 0 with msg[len] set when a point lies outside the mesh (beyond the radius). */
static int spring_constraint(const pbng_weak_spring *s, const pbng_point_location loc[2], const char *name, double radius, pbng_weak_constraint *c,
                             int *kept, char *msg, size_t len)
{
  int64_t nodes[2][4];
  double w[2][4];
  int m[2];

  *kept = 0;
  for (int side = 0; side < 2; ++side) {
    if (loc[side].elem < 0) {
      snprintf(msg, len, "weak constraint %" PRId64 ": its side %d at (%g, %g, %g) lies outside %s (farther than %g times the nearest element's size)", s->id,
               side, s->p[side][0], s->p[side][1], s->p[side][2], name, radius);
      return 0;
    }
    m[side] = side_weights(&loc[side], nodes[side], w[side]);
  }
  const double k2 = s->scale * s->scale;
  const char *err = pbng_weak_constraint_init(m[0], nodes[0], w[0], m[1], nodes[1], w[1], k2 * s->k_n, k2 * s->k_t, s->k_n == s->k_t ? NULL : s->n, c);
  if (err && strcmp(err, "weak constraint: needs two distinct nodes")) {
    snprintf(msg, len, "weak constraint %" PRId64 " on %s: %s", s->id, name, err);
    return 0;
  }
  for (int d = 0; d < 3 && !err; ++d) c->target[d] = s->target[d]; /* C' = x'(p0) - x'(p1) - t / s: C / s at the fine rest */
  *kept = !err && drop_cancelled(c);
  return 1;
}

/* The coarse constraints of the n springs located by L in chunks, rounds calls of pbng_locator_find (collective: the
 * same on every process of L) into out[*kept]; the id of the first spring that fails (INT64_MAX: none) with msg[len]. */
static PetscErrorCode carry_springs(pbng_locator *L, int64_t rounds, int64_t n, const pbng_weak_spring *springs, const char *name, double radius,
                                   pbng_weak_constraint *out, int64_t *kept, int64_t *bad, char *msg, size_t len)
{
  pbng_point_location *loc;
  double *points;

  PetscFunctionBeginUser;
  *kept = 0, *bad = INT64_MAX;
  PetscCall(PetscMalloc2(2 * SPRING_CHUNK, &loc, 6 * SPRING_CHUNK, &points));
  for (int64_t r = 0, first = 0; r < rounds; ++r, first += SPRING_CHUNK) {
    const int64_t m = PetscMax(0, PetscMin(n - first, SPRING_CHUNK));
    for (int64_t i = 0; i < m; ++i) memcpy(&points[6 * i], springs[first + i].p, 6 * sizeof(double));
    PetscCall(pbng_locator_find(L, 2 * m, points, loc));
    for (int64_t i = 0; i < m && *bad == INT64_MAX; ++i) {
      int ok;
      if (!spring_constraint(&springs[first + i], &loc[2 * i], name, radius, &out[*kept], &ok, msg, len)) *bad = springs[first + i].id;
      *kept += ok;
    }
  }
  PetscCall(PetscFree2(loc, points));
  PetscFunctionReturn(0);
}

/* Weak constraints are carried to tetrahedral levels only: an error naming `name` for another kind. */
static PetscErrorCode check_tetrahedral(const pbng_element_type *etype, const char *name, MPI_Comm comm)
{
  PetscFunctionBeginUser;
  PetscCheck(etype && etype->shape == PBNG_SHAPE_TETRAHEDRON, comm, PETSC_ERR_SUP,
             "%s: weak constraints are carried to coarse levels of tetrahedra only: a constraint's side holds at most %d nodes (a "
             "tetrahedron's corners), a point of this level's %s interpolates more; give tetrahedral coarse levels (-mesh FILE -mesh_levels "
             "...) or use -multilevel 1",
             name, PBNG_WC_MAX_NODES / 2, etype ? etype->name : "mixed element kinds");
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_add_weak_springs(pbng_mesh *mesh, const char *name, int64_t n, const pbng_weak_spring *springs, double radius)
{
  pbng_locator *locator;
  pbng_weak_constraint *out;
  int64_t kept, bad;
  char msg[PETSC_MAX_PATH_LEN + 256];

  PetscFunctionBeginUser;
  if (n == 0) PetscFunctionReturn(0);
  PetscCall(check_tetrahedral(mesh->etype, name, PETSC_COMM_SELF));
  PetscCall(pbng_locator_create_serial(mesh, radius, PBNG_LOCATE_CORNERS, &locator));
  PetscCall(PetscMalloc1(n, &out));
  PetscErrorCode ierr = carry_springs(locator, (n + SPRING_CHUNK - 1) / SPRING_CHUNK, n, springs, name, radius, out, &kept, &bad, msg, sizeof(msg));
  if (!ierr && bad == INT64_MAX) ierr = pbng_mesh_add_weak_constraints(mesh, kept, out);
  PetscCall(PetscFree(out));
  PetscCall(pbng_locator_destroy(&locator));
  PetscCall(ierr);
  PetscCheck(bad == INT64_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s", msg);
  PetscFunctionReturn(0);
}

/* The slice's own and foreign nodes' rest positions in one array *X[nlocal][3] (local indices, pbng_slice_positions)
 * and their global ids *id[nlocal]. */
static PetscErrorCode local_nodes(const pbng_slice_positions *p, int64_t *nlocal, double **X, int64_t **id)
{
  const pbng_mesh_slice *s = p->s;
  const int64_t nown = s->node_end - s->node_begin;

  PetscFunctionBeginUser;
  *nlocal = nown + p->nforeign;
  PetscCall(PetscMalloc2(3 * *nlocal + 1, X, *nlocal + 1, id));
  for (int64_t l = 0; l < *nlocal; ++l) {
    memcpy(&(*X)[3 * l], pbng_slice_positions_of(p, l), 3 * sizeof(double));
    (*id)[l] = l < nown ? s->node_begin + l : p->foreign[l - nown];
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_slice_weak_springs(MPI_Comm comm, const pbng_mesh_slice *s, int64_t *n, pbng_weak_spring **springs)
{
  pbng_slice_positions p;
  double *X;
  int64_t nlocal, *id;

  PetscFunctionBeginUser;
  PetscCall(pbng_slice_positions_create(comm, s, &p));
  PetscCall(local_nodes(&p, &nlocal, &X, &id));
  *n = s->weak_end - s->weak_begin;
  PetscCall(PetscMalloc1(*n + 1, springs));
  for (int64_t c = 0; c < *n; ++c) {
    pbng_weak_constraint local = s->weak[c];
    for (int j = 0; j < local.nnodes; ++j) local.node[j] = pbng_slice_positions_local(&p, local.node[j]);
    pbng_weak_spring_from(&local, X, s->weak_begin + c, &(*springs)[c]);
  }
  PetscCall(PetscFree2(X, id));
  PetscCall(pbng_slice_positions_destroy(&p));
  PetscFunctionReturn(0);
}

/* A locator over the slice's elements (local numbering: X, id from local_nodes), and their rows and global ids, freed
 * with it by the caller. */
static PetscErrorCode slice_locator(MPI_Comm comm, const pbng_mesh_slice *s, const pbng_slice_positions *p, const double *X, const int64_t *id,
                                    double radius, int32_t **rows, int64_t **global_elem, pbng_locator **L)
{
  const int64_t nelems = s->elem_end - s->elem_begin;

  PetscFunctionBeginUser;
  PetscCheck(nelems < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "point location: %s has %" PRId64 " elements on one process", s->source, nelems);
  PetscCall(PetscMalloc2(nelems * s->nen + 1, rows, nelems + 1, global_elem));
  for (int64_t e = 0; e < nelems; ++e) {
    (*global_elem)[e] = s->elem_begin + e;
    for (int a = 0; a < s->nen; ++a) (*rows)[e * s->nen + a] = (int32_t)pbng_slice_positions_local(p, s->elems[e * s->nen + a]);
  }
  PetscCall(pbng_locator_create_rows(comm, (int32_t)nelems, s->nen, s->etype, NULL, *rows, X, *global_elem, id, radius, PBNG_LOCATE_CORNERS, L));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_slice_add_weak_springs(MPI_Comm comm, pbng_mesh_slice *s, const char *name, int64_t n, const pbng_weak_spring *springs, double radius)
{
  pbng_slice_positions p;
  pbng_locator *L;
  pbng_weak_constraint *out;
  double *X;
  int32_t *rows;
  int64_t nlocal, *id, *global_elem, total, rounds, kept, bad;
  char msg[PETSC_MAX_PATH_LEN + 256] = "";

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&n, &total, 1, MPI_INT64_T, MPI_SUM, comm));
  if (total == 0) PetscFunctionReturn(0);
  PetscCall(check_tetrahedral(s->etype, name, comm)); /* every slice of one kind */
  rounds = (n + SPRING_CHUNK - 1) / SPRING_CHUNK;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_INT64_T, MPI_MAX, comm));
  PetscCall(pbng_slice_positions_create(comm, s, &p));
  PetscCall(local_nodes(&p, &nlocal, &X, &id));
  PetscCall(slice_locator(comm, s, &p, X, id, radius, &rows, &global_elem, &L));
  PetscCall(PetscMalloc1(n + 1, &out));
  PetscErrorCode ierr = carry_springs(L, rounds, n, springs, name, radius, out, &kept, &bad, msg, sizeof(msg));
  if (!ierr) ierr = pbng_stop_on_first_error(comm, bad, msg, sizeof(msg));
  if (!ierr) ierr = pbng_slice_add_weak(comm, s, kept, out); /* in the springs' order: process r's after r - 1's */
  PetscCall(PetscFree(out));
  PetscCall(pbng_locator_destroy(&L));
  PetscCall(PetscFree2(rows, global_elem));
  PetscCall(PetscFree2(X, id));
  PetscCall(pbng_slice_positions_destroy(&p));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
