/* Where points lie in a distributed tetrahedral mesh (rest positions), for the transfer operators
 * between non-nested levels. Every element is searched by the one rank that owns it (its first
 * node's owner); a rank sends each of its points to the ranks whose elements' bounding box (grown
 * by the search radius) contains it, they answer from a bucket grid over their elements, and the
 * best answer wins: an element containing the point, else the nearest one, ties broken by the
 * lowest global element id, so that the result does not depend on the partition.
 *
 * Memory: the grid holds each owned element once (the cell of its centroid: about 6 bytes per
 * element), so that locating points in a fine mesh costs little beside the mesh itself; a caller
 * with many points passes them in chunks (pbng_locator_find is collective per call). */
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

typedef struct pbng_locator pbng_locator;

/* Collective. A locator for points in `mesh` (kept by reference, as is node_value[nlocal]: a value per
 * local node returned with each vertex). radius: how far from an element, in units of its longest
 * edge, a point outside the mesh may lie and still be matched to it. */
PetscErrorCode pbng_locator_create(const pbng_dmesh *mesh, const int64_t *node_value, double radius, pbng_locator **locator);
/* Not collective: a locator over every element of a serial (whole) mesh, element ids and node values
 * being their indices in it. */
PetscErrorCode pbng_locator_create_serial(const pbng_mesh *mesh, double radius, pbng_locator **locator);
PetscErrorCode pbng_locator_destroy(pbng_locator **locator);

/* Collective (every rank calls it, possibly with n = 0). For each of this rank's n points[n][3], the
 * element containing it or, when none does, the nearest element within the radius (elem -1: none). */
PetscErrorCode pbng_locator_find(pbng_locator *locator, int64_t n, const double *points, pbng_point_location *loc);

#endif
