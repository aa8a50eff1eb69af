/* Point location geometry for transfers between non-nested meshes: barycentric coordinates of a point
 * in a tetrahedron and its distance to a tetrahedron; for every element kind, the reference coordinates
 * of a point (Newton's method on the isoparametric map), whether the element contains it, its distance
 * to the element and the element's interpolation weights there. Pure functions, no allocation. */
#ifndef PBNG_CORE_LOCATE_H
#define PBNG_CORE_LOCATE_H

#include "core/element.h"

/* Barycentric coordinates w[4] of q in the tetrahedron X[0..3] (w_a = N_a(q), the linear shape
 * functions, extrapolated outside): sum w_a = 1, sum w_a X_a = q. Returns 0, or -1 for a degenerate
 * tetrahedron. */
int pbng_tet_barycentric(const double *const X[4], const double q[3], double w[4]);

/* Barycentric coordinates w[3] of the projection of q onto the plane of the triangle X[0..2]
 * (extrapolated outside): sum w_a = 1, sum w_a X_a = that projection. Returns 0, or -1 for a
 * degenerate triangle. */
int pbng_tri_barycentric(const double *const X[3], const double q[3], double w[3]);

/* Euclidean distance from q to the (closed) tetrahedron X[0..3] (0 inside), and the barycentric
 * coordinates of its closest point (all >= 0). */
double pbng_point_tet_distance(const double *const X[4], const double q[3], double wclosest[4]);

/* ---- Every element kind: X[t->nodes][3] are the element's node positions (Gmsh order). ---- */

/* The element's longest edge: the sides of its faces between consecutive corners (a tetrahedron's
 * six edges, a hexahedron's twelve, ...; a sheet triangle's three sides). */
double pbng_element_longest_edge(const pbng_element_type *t, const double (*X)[3]);

/* The point rc of t's reference element closest to the reference point r, and |r - rc| (0 inside);
 * over the reference element split into tetrahedra (pbng_point_tet_distance). */
double pbng_reference_closest_point(const pbng_element_type *t, const double r[3], double rc[3]);

/* The reference coordinates r of the point q: Newton's method on the isoparametric map
 * x(r) = sum_a N_a(r) X_a = q from the reference element's centroid, each step halved (at most 8 times)
 * while it does not reduce |x(r) - q|, iterates kept within [-3, 3]^3 (the pyramid's 1e-10 below its
 * apex, where its rational basis is singular). One step for affine elements. Returns 0 when
 * |x(r) - q| <= 1e-10 times the longest edge at the end (r extrapolated for a point outside), -1 when
 * Newton did not get there (r: its last iterate). */
int pbng_element_reference_coordinates(const pbng_element_type *t, const double (*X)[3], const double q[3], double r[3]);

/* Whether the closed element contains q: for tet4, q's barycentric coordinates are all >= 0; for tri3,
 * q lies within 1e-12 times the longest edge of the closed triangle; for the
 * other kinds q is one of the nodes (within 1e-13 times the longest edge) or its reference coordinates
 * converged within 1e-12 of the reference element. */
int pbng_element_contains_point(const pbng_element_type *t, const double (*X)[3], const double q[3]);

/* The element's interpolation weights w[t->nodes] at q and q's distance to the element (0 inside):
 *  - tet4: the barycentric coordinates (inside), extrapolated just outside, those of the closest point
 *    when extrapolation would give a weight below -1/2; the exact distance (pbng_point_tet_distance);
 *  - tri3 (a sheet triangle in 3-D): the barycentric coordinates of q's projection onto the triangle's
 *    plane (pbng_tri_barycentric), extrapolated as for tet4; the distance to the closed triangle in 3-D;
 *  - bend4 stencils have no interpolation: never locate in them (parallel/locate.c leaves them out);
 *  - the other kinds: at a node, 1 there and 0 elsewhere (the pyramid's apex included); inside, the
 *    shape functions at q's reference coordinates, N_a(r); outside, N_a(r) extrapolated while r lies
 *    within 0.25 (reference units) of the reference element, else N_a(rc) at its closest reference
 *    point rc; the distance is |x(rc) - q| (the Euclidean distance for affine elements up to the
 *    reference map's anisotropy: an upper bound).
 * Sum w_a = 1 and sum w_a X_a = q (inside, and extrapolated; tri3: q's projection). Returns -1 (no
 * answer) only for a degenerate tet4 or tri3. */
double pbng_element_point_weights(const pbng_element_type *t, const double (*X)[3], const double q[3], double *w);

#endif
