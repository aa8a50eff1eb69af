/* Distances between contact primitives and additive continuous collision detection (issue 20; seed
 * projective-peridynamics-membranes.txt Sec. 6.2, Alg. 2 line 6, which takes the additive CCD of
 * Li, Kaufman and Jiang, "Codimensional incremental potential contact", 2021). Pure functions, no
 * allocation, no MPI. The point-triangle distance is pbng_point_triangle_closest (contact_geometry.h).
 * What each function computes and the measured figures: docs/ccd.md. */
#ifndef PBNG_CORE_CCD_H
#define PBNG_CORE_CCD_H

/* Default conservative factor s of pbng_accd_*: each advance covers s times the gap's worst-case
 * closing time, and the search stops once the gap falls below (1 - s) times its start (the seed's and
 * C-IPC's "s = 0.1" is 1 - s here). */
#define PBNG_ACCD_CONSERVATIVE 0.9
/* Default cap on the advances of pbng_accd_*; reaching it returns the (safe) time reached. */
#define PBNG_ACCD_MAX_ITERATIONS 1000000

/* The closest point (1 - t) a + t b of segment [a, b] to x: *t in [0, 1] (0 for a zero-length
 * segment); returns its squared distance to x. */
double pbng_point_segment_closest(const double x[3], const double a[3], const double b[3], double *t);

/* The closest points (1 - s) a0 + s a1 and (1 - t) b0 + t b1 of segments [a0, a1] and [b0, b1] (the
 * edge-edge distance of Eq. 48): *s, *t in [0, 1]; returns their squared distance. Robust for parallel,
 * near-parallel, collinear and zero-length segments: the smallest of the interior stationary point
 * (when it lies in [0, 1]^2) and the four endpoint-segment distances, each evaluated from its points. */
double pbng_segment_segment_closest(const double a0[3], const double a1[3], const double b0[3], const double b1[3], double *s, double *t);

/* The distance between the point x[0] and the triangle (x[1], x[2], x[3]) at time t of the step, the
 * corners at x + t dx. */
double pbng_point_triangle_distance_at(const double x[4][3], const double dx[4][3], double t);

/* The distance between the edges [x[0], x[1]] and [x[2], x[3]] at time t of the step. */
double pbng_edge_edge_distance_at(const double x[4][3], const double dx[4][3], double t);

/* Additive CCD of the point x[0] against the triangle (x[1], x[2], x[3]) moving linearly to x + dx over
 * the step t in [0, 1], with minimum separation `thickness` (xi >= 0), conservative factor `s` in
 * (0, 1) (PBNG_ACCD_CONSERVATIVE) and at most `max_iterations` advances. Returns a lower bound of the
 * time of impact (the first time the distance falls to xi): 1 when the distance stays above xi over
 * the whole step, 0 when it is not above xi at the start or a displacement is not finite. For every
 * t' <= the returned t the distance is above xi, and when the returned t < 1 the gap (distance - xi)
 * there is at least (1 - s) times the starting gap. */
double pbng_accd_point_triangle(const double x[4][3], const double dx[4][3], double thickness, double s, int max_iterations);

/* The same for the edges [x[0], x[1]] and [x[2], x[3]]. */
double pbng_accd_edge_edge(const double x[4][3], const double dx[4][3], double thickness, double s, int max_iterations);

/* Whether the point x[0], moving linearly to x[0] + dx[0] while the triangle's corners x[1..3] move to x + dx,
 * passes through the triangle from its front (the side of its normal (x2 - x1) x (x3 - x1)) to its back during the
 * step: the first time t in [0, 1] at which the orientation g(t) = (x0 - x1).((x2 - x1) x (x3 - x1)), a cubic in t,
 * falls from > 0 to <= 0 with the point inside the closed triangle then (its distance to the triangle within
 * 1e-9 of the triangle's longest edge). Returns 1 and that time in *t, or 0 (also for a triangle degenerate at
 * that time). Used by contact detection to find a vertex carried through a surface between two detections
 * (contact/contact_detect.h). Each root is bracketed between the stationary points of g and bisected on g itself. */
int pbng_point_triangle_crossing(const double x[4][3], const double dx[4][3], double *t);

#endif
