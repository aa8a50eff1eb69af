/* The barrier of the seed's contact local step (issue 20; seed projective-peridynamics-membranes.txt
 * Eq. 3, 49-53): the IPC log barrier, the C^1 rescale of the distance that keeps the barrier's argument
 * above eps xi, the bound of |B'| it gives and the step bound of Eq. 53. Pure functions of scalars.
 *
 * Arguments follow the seed: the barrier B(x) of Eq. 3 is evaluated (Alg. 2 line 24, Eq. 50) at the gap
 * x = f(d) - xi, d the primitives' distance (Eq. 48), f the rescale of Eq. 51, xi the thickness; dhat is
 * the barrier's activation distance of Eq. 3 (measured on that gap, not on d). docs/ccd.md. */
#ifndef PBNG_CORE_BARRIER_H
#define PBNG_CORE_BARRIER_H

/* Eq. 3: B(x) = -(x - dhat)^2 log(x / dhat) for 0 < x < dhat, 0 for x >= dhat, +inf for x <= 0. */
double pbng_barrier(double x, double dhat);

/* B'(x) = -2 (x - dhat) log(x / dhat) - (x - dhat)^2 / x for 0 < x < dhat (minus the bracket of
 * Eq. 49), 0 for x >= dhat, -inf for x <= 0. */
double pbng_barrier_derivative(double x, double dhat);

/* B''(x) = -2 log(x / dhat) - 4 (x - dhat) / x + (x - dhat)^2 / x^2 for 0 < x < dhat (> 0: B is convex there),
 * 0 for x >= dhat, +inf for x <= 0. The barrier's curvature in SISSM's D (docs/peridynamics.md#the-barrier-in-the-frames-residual). */
double pbng_barrier_second_derivative(double x, double dhat);

/* Eq. 51, the C^1 rescale of the distance d with thickness xi and minimal separation multiplier eps > 0:
 * (1 + eps) xi for d <= xi, (d - xi)^2 / (4 eps xi) + (1 + eps) xi for xi < d <= (1 + 2 eps) xi, d
 * beyond. f(d) - xi >= eps xi > 0 for every d (Eq. 50 holds). */
double pbng_contact_distance_rescale(double d, double xi, double eps);

/* f'(d) of Eq. 51: 0 for d <= xi, (d - xi) / (2 eps xi) for xi < d <= (1 + 2 eps) xi, 1 beyond. */
double pbng_contact_distance_rescale_derivative(double d, double xi, double eps);

/* The upper bound of |B'| over the rescaled gaps x = f(d) - xi >= eps xi (the seed's Fig. 9b): B' is
 * increasing on (0, dhat) (B'' > 0), so the bound is |B'(eps xi)|; 0 when eps xi >= dhat, +inf when eps xi = 0. */
double pbng_barrier_derivative_bound(double xi, double eps, double dhat);

/* Eq. 53: the step length lambda <= eps xi / (mu alpha0 dB_bound + displacement_bound) of the gradient
 * step z_i + lambda g_i of Eq. 49, which keeps every vertex's move within eps xi; mu is the barrier
 * weight of Eq. 47, alpha0 a bound of the sum of a vertex's barycentric weights over its pairs,
 * dB_bound a bound of |B'| (pbng_barrier_derivative_bound), displacement_bound a bound of |y_i - z_i|
 * (the seed's second use of the symbol dhat). */
double pbng_contact_step_bound(double eps, double xi, double mu, double alpha0, double dB_bound, double displacement_bound);

#endif
