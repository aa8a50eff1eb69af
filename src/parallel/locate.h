/* Where points lie in a distributed mesh of any element kinds (rest positions), for the transfer operators
 * between non-nested levels. Every element is searched by the one rank that owns it (its first
 * node's owner); a rank sends each of its points to the ranks whose elements' bounding box contains
 * it, they answer from a bucket grid over their elements with an element containing it, and only
 * the points no element contains go, in a second round, to the ranks whose box grown by the search
 * radius contains them, for their nearest element. The best answer wins: an element containing the
 * point, else the nearest one, ties broken by the lowest global element id, so that the result does
 * not depend on the partition. The answer is the
 * element's own interpolation weights at the point (core/locate.h: pbng_element_point_weights), or
 * those of its corners alone (the linear element of the same shape: tet4, hex8, prism6, pyramid5).
 *
 * The grid lists each owned element in every cell its bounding box overlaps (about two elements per cell),
 * so that a point is looked for inside the elements of its own cell only, and outside the mesh ring by
 * ring of cells around it until no unvisited element can lie nearer than the best found (linear
 * elements; quadratic ones, which may bulge out of their nodes' box, search the whole radius). Before, a
 * point searched every cell within the largest element's extent: with large coarse elements beside small
 * ones (-scene muscles -scale 2.1, 2 ranks) the solver's setup took 64 s, now 8 s. Memory: 4 bytes per entry,
 * a few per element, beside the elements' boxes (48 bytes each); a caller
 * with many points passes them in chunks (pbng_locator_find is collective per call) of at most
 * PBNG_LOCATE_CHUNK points, so that the search's buffers stay near 4 MB each. */
#ifndef PBNG_PARALLEL_LOCATE_H
#define PBNG_PARALLEL_LOCATE_H

#include "parallel/dmesh.h"

typedef struct {
  int64_t elem;      /* global id of the element, -1 when none lies within the search radius */
  int nodes;         /* weights given: the element's nodes, or its corners (PBNG_LOCATE_CORNERS) */
  int64_t value[PBNG_MAX_ELEMENT_NODES]; /* per node: node_value[] of the node (e.g. its unknown's global index, -1 if held) */
  double w[PBNG_MAX_ELEMENT_NODES];      /* the point's weights (pbng_element_point_weights: the shape functions at the
                                            point, extrapolated just outside, or the closest point's) */
  double distance;   /* 0 inside, else the distance to the element */
  double size;       /* the element's longest edge */
} pbng_point_location;

/* Points located per collective round: about 4 MB per array of answers. */
#define PBNG_LOCATE_CHUNK ((int64_t)(4 << 20) / (int64_t)sizeof(pbng_point_location))

/* Which weights a location gives: the element's own shape functions (exact for its field), or those of
 * its corners alone (a linear interpolation with weights in [0, 1] inside; straight-sided geometry). */
typedef enum { PBNG_LOCATE_SHAPE, PBNG_LOCATE_CORNERS } pbng_locate_weights;

typedef struct pbng_locator pbng_locator;

/* Collective. A locator for points in `mesh` (kept by reference, as is node_value[nlocal]: a value per
 * local node returned with each weight). radius: how far from an element, in units of its longest
 * edge, a point outside the mesh may lie and still be matched to it. */
PetscErrorCode pbng_locator_create(const pbng_dmesh *mesh, const int64_t *node_value, double radius, pbng_locate_weights weights,
                                   pbng_locator **locator);
/* Collective. The same over any rows of elements each process searches (e.g. the slices of a mesh not cut into
 * subdomains: parallel/distributed_partition.h): nelems rows elems[nelems][nen] of indices into X (rest positions, as
 * node_value), of one kind etype or of the kinds kind[] (etype NULL), their global ids global_elem[nelems]. */
PetscErrorCode pbng_locator_create_rows(MPI_Comm comm, int32_t nelems, int nen, const pbng_element_type *etype, const uint8_t *kind, const int32_t *elems,
                                        const double *X, const int64_t *global_elem, const int64_t *node_value, double radius,
                                        pbng_locate_weights weights, pbng_locator **locator);
/* Not collective: a locator over every element of a serial (whole) mesh, element ids and node values
 * being their indices in it. */
PetscErrorCode pbng_locator_create_serial(const pbng_mesh *mesh, double radius, pbng_locate_weights weights, pbng_locator **locator);
/* The most weights one location gives, over every rank's elements (at most PBNG_MAX_ELEMENT_NODES). */
int pbng_locator_width(const pbng_locator *locator);
PetscErrorCode pbng_locator_destroy(pbng_locator **locator);

/* Collective (every rank calls it, possibly with n = 0). For each of this rank's n points[n][3], the
 * element containing it or, when none does, the nearest element within the radius (elem -1: none). */
PetscErrorCode pbng_locator_find(pbng_locator *locator, int64_t n, const double *points, pbng_point_location *loc);

#endif
