/* Where points lie in a distributed tetrahedral mesh (rest positions), for the transfer operators
 * between non-nested levels. Every element is searched by the one rank that owns it (its first
 * node's owner); a rank sends each of its points to the ranks whose elements' bounding box (grown
 * by the search radius) contains it, they answer from a bucket grid over their elements, and the
 * best answer wins: an element containing the point, else the nearest one, ties broken by the
 * lowest global element id, so that the result does not depend on the partition. */
#ifndef PBNG_PARALLEL_LOCATE_H
#define PBNG_PARALLEL_LOCATE_H

#include "parallel/dmesh.h"

typedef struct {
  int64_t elem;      /* global id of the element, -1 when none lies within the search radius */
  int64_t value[4];  /* per vertex: node_value[] of the vertex (e.g. its unknown's global index, -1 if held) */
  double w[4];       /* the point's barycentric coordinates in the element (linear shape functions; for a
                        point outside, extrapolated, or those of the closest point when extrapolation
                        would give a weight below -1/2) */
  double distance;   /* 0 inside, else the distance to the element */
  double size;       /* the element's longest edge */
} pbng_point_location;

/* Collective. For each of this rank's n points[n][3], the element of `mesh` containing it or, when
 * none does, the nearest element whose distance is at most `radius` times its longest edge.
 * node_value[nlocal]: a value per local node of the mesh returned with each vertex. */
PetscErrorCode pbng_locate_points(const pbng_dmesh *mesh, const int64_t *node_value, double radius, int64_t n, const double *points,
                                  pbng_point_location *loc);

#endif
