#include "parallel/weak_levels.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "parallel/locate.h"

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

PetscErrorCode pbng_weak_springs_gather(const pbng_dmesh *dm, int64_t *n, pbng_weak_spring **springs)
{
  pbng_weak_spring *mine;
  int *counts = NULL, *displs = NULL, total = 0;
  const int count = (int)dm->nowned_weak * (int)sizeof(pbng_weak_spring);

  PetscFunctionBeginUser;
  *n = 0, *springs = NULL;
  PetscCall(PetscMalloc1(dm->nowned_weak + 1, &mine));
  for (int32_t c = 0; c < dm->nowned_weak; ++c) pbng_weak_spring_from(&dm->weak[c], dm->X, dm->global_weak[c], &mine[c]);
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

/* The coarse constraint of spring s from its two points' locations; 0 when it carries nothing there. */
static PetscErrorCode spring_constraint(const pbng_weak_spring *s, const pbng_point_location loc[2], const char *name, double radius,
                                        pbng_weak_constraint *c, int *kept)
{
  int64_t nodes[2][4];
  double w[2][4];
  int m[2];

  PetscFunctionBeginUser;
  for (int side = 0; side < 2; ++side) {
    PetscCheck(loc[side].elem >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
               "weak constraint %" PRId64 ": its side %d at (%g, %g, %g) lies outside %s (farther than %g times the nearest element's size)", s->id, side,
               s->p[side][0], s->p[side][1], s->p[side][2], name, radius);
    m[side] = side_weights(&loc[side], nodes[side], w[side]);
  }
  const double k2 = s->scale * s->scale;
  const char *err = pbng_weak_constraint_init(m[0], nodes[0], w[0], m[1], nodes[1], w[1], k2 * s->k_n, k2 * s->k_t, s->k_n == s->k_t ? NULL : s->n, c);
  PetscCheck(!err || !strcmp(err, "weak constraint: needs two distinct nodes"), PETSC_COMM_SELF, PETSC_ERR_PLIB, "weak constraint %" PRId64 " on %s: %s",
             s->id, name, err);
  for (int d = 0; d < 3 && !err; ++d) c->target[d] = s->target[d]; /* C' = x'(p0) - x'(p1) - t / s: C / s at the fine rest */
  *kept = !err && drop_cancelled(c);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_add_weak_springs(pbng_mesh *mesh, const char *name, int64_t n, const pbng_weak_spring *springs, double radius)
{
  pbng_locator *locator;
  pbng_point_location *loc;
  pbng_weak_constraint *out;
  double *points;
  int64_t kept = 0;

  PetscFunctionBeginUser;
  if (n == 0) PetscFunctionReturn(0);
  PetscCheck(mesh->etype && mesh->etype->shape == PBNG_SHAPE_TETRAHEDRON, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "%s: weak constraints are carried to coarse levels of tetrahedra only: a constraint's side holds at most %d nodes (a "
             "tetrahedron's corners), a point of this level's %s interpolates more; give tetrahedral coarse levels (-mesh FILE -mesh_levels "
             "...) or use -multilevel 1",
             name, PBNG_WC_MAX_NODES / 2, mesh->etype ? mesh->etype->name : "mixed element kinds");
  PetscCall(pbng_locator_create_serial(mesh, radius, PBNG_LOCATE_CORNERS, &locator));
  PetscCall(PetscMalloc3(n, &out, 2 * SPRING_CHUNK, &loc, 6 * SPRING_CHUNK, &points));
  for (int64_t first = 0; first < n; first += SPRING_CHUNK) {
    const int64_t m = n - first < SPRING_CHUNK ? n - first : SPRING_CHUNK;
    for (int64_t i = 0; i < m; ++i) memcpy(&points[6 * i], springs[first + i].p, 6 * sizeof(double));
    PetscCall(pbng_locator_find(locator, 2 * m, points, loc));
    for (int64_t i = 0; i < m; ++i) {
      int ok;
      PetscCall(spring_constraint(&springs[first + i], &loc[2 * i], name, radius, &out[kept], &ok));
      kept += ok;
    }
  }
  PetscCall(pbng_mesh_add_weak_constraints(mesh, kept, out));
  PetscCall(PetscFree3(out, loc, points));
  PetscCall(pbng_locator_destroy(&locator));
  PetscFunctionReturn(0);
}
