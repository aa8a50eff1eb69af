/* Weak constraints carried to the coarse levels of multilevel PBNG (docs/multilevel.md).
 * A constraint C = sum_j a_j y_j (Eq. 19) is, for a linear field y, C = s (y(p0) - y(p1)) with p0, p1
 * its sides' rest points (p0 = sum_{a_j > 0} a_j X_j / s, p1 likewise for the negative weights) and s
 * the sum of its positive weights (1 unless a node is on both sides). On a coarser mesh of the same
 * bodies it becomes the constraint between the points p0 and p1 interpolated there (the barycentric
 * weights of the elements containing them: up to 4 + 4 nodes) with stiffness s^2 K, so that its
 * energy is the fine constraint's energy of the interpolated coarse field wherever that field is
 * linear: a fine constraint, one coarse constraint. */
#ifndef PBNG_PARALLEL_WEAK_LEVELS_H
#define PBNG_PARALLEL_WEAK_LEVELS_H

#include "mesh/slice.h"
#include "parallel/dmesh.h"

typedef struct {
  int64_t id;     /* the fine constraint's global id (the order of the coarse constraints) */
  double p[2][3]; /* the sides' rest points */
  double scale;   /* s */
  double k_n, k_t, n[3];
  double target[3]; /* the rest offset per unit scale: the fine target / s (the coarse constraint's target) */
} pbng_weak_spring;

/* Springs to carry to the coarse levels: all of them on rank 0 (pbng_weak_springs_gather), or each rank's share
 * (pbng_weak_springs_spread, pbng_slice_weak_springs). */
typedef struct {
  int64_t n;
  pbng_weak_spring *s;
} pbng_weak_springs;

/* A constraint as a spring: X holds the rest positions its node[] values index. */
void pbng_weak_spring_from(const pbng_weak_constraint *c, const double *X, int64_t id, pbng_weak_spring *s);

/* Collective: every constraint of dm (once, by the rank counting it) as a spring, gathered on rank 0
 * sorted by global id (n = 0 and NULL elsewhere). */
PetscErrorCode pbng_weak_springs_gather(const pbng_dmesh *dm, int64_t *n, pbng_weak_spring **springs);

/* Collective: the same spread over the ranks instead, rank r of P holding the springs of ids [W r / P, W (r + 1) / P)
 * of the W constraints, sorted by id (for pbng_slice_add_weak_springs: no rank holds them all). */
PetscErrorCode pbng_weak_springs_spread(const pbng_dmesh *dm, int64_t *n, pbng_weak_spring **springs);

/* Every weak constraint of a serial mesh as a spring (ids: their indices). */
PetscErrorCode pbng_weak_springs_of_mesh(const pbng_mesh *mesh, int64_t *n, pbng_weak_spring **springs);

/* Serial: appends to mesh one weak constraint per spring, between its points interpolated in mesh's
 * elements (a point outside the mesh within radius x the nearest element's longest edge takes the
 * closest point's weights). A spring whose two points interpolate the same nodes alike carries nothing
 * there and is left out; a point farther away is an error naming `name` and the constraint. */
PetscErrorCode pbng_mesh_add_weak_springs(pbng_mesh *mesh, const char *name, int64_t n, const pbng_weak_spring *springs, double radius);

/* The same for a mesh that no process holds whole (-partitioner ptscotch: mesh/slice.h), no process holding all the
 * springs either. Collective: the slice's constraints [weak_begin, weak_end) as springs, *springs[*n] (ids: their
 * global indices; the slices' ranges, so in id order by process). */
PetscErrorCode pbng_slice_weak_springs(MPI_Comm comm, const pbng_mesh_slice *s, int64_t *n, pbng_weak_spring **springs);
/* Collective: appends to the slices one weak constraint per spring that carries something (every process passing its
 * n springs, in id order by process: pbng_slice_weak_springs's), located with the distributed locator (parallel/locate.h)
 * over the slices' elements, each searched by its slice's process: the same elements and weights as
 * pbng_mesh_add_weak_springs's on the whole mesh (the best answer does not depend on how the elements are spread), the
 * constraints in the same order. Errors (a point outside, a level not of tetrahedra) are every process's alike. */
PetscErrorCode pbng_slice_add_weak_springs(MPI_Comm comm, pbng_mesh_slice *s, const char *name, int64_t n, const pbng_weak_spring *springs, double radius);

#endif
