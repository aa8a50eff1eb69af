/* Point location geometry for transfers between non-nested meshes: barycentric coordinates of a point
 * in a tetrahedron, and its distance to a tetrahedron. Pure functions, no allocation. */
#ifndef PBNG_CORE_LOCATE_H
#define PBNG_CORE_LOCATE_H

/* Barycentric coordinates w[4] of q in the tetrahedron X[0..3] (w_a = N_a(q), the linear shape
 * functions, extrapolated outside): sum w_a = 1, sum w_a X_a = q. Returns 0, or -1 for a degenerate
 * tetrahedron. */
int pbng_tet_barycentric(const double *const X[4], const double q[3], double w[4]);

/* Euclidean distance from q to the (closed) tetrahedron X[0..3] (0 inside), and the barycentric
 * coordinates of its closest point (all >= 0). */
double pbng_point_tet_distance(const double *const X[4], const double q[3], double wclosest[4]);

/* Longest edge of the tetrahedron X[0..3]. */
double pbng_tet_longest_edge(const double *const X[4]);

#endif
