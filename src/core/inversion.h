/* Robust handling of degenerate and inverted tetrahedra (issue 18; seed position-based-continuous-
 * materials.txt Sec. 4.2, "Inversion Handling", after Irving et al. 2004 and Gao et al.): F = U diag(s) V^T
 * with U, V proper rotations and the reflection of an inverted F moved to the smallest singular value
 * (negated), the stress evaluated on the diagonal and rotated back, P = U P(diag(s)) V^T, with the
 * StVK stress clamped at its compressive maximum (the seed's Fig. 2b). Pure functions. Derivation and
 * checks: docs/cloth.md#inversion-handling. */
#ifndef PBNG_CORE_INVERSION_H
#define PBNG_CORE_INVERSION_H

/* F = U diag(s) V^T (row-major 3 x 3): U and V rotations (det +1), |s| in decreasing order, s[0] >= s[1]
 * >= |s[2]|, and s[2] < 0 exactly when det F < 0. Singular F (rank 2, 1 or 0) get U completed to a
 * rotation. By the eigen decomposition of F^T F (cyclic Jacobi to round-off). */
void pbng_svd3_rotations(const double F[9], double U[9], double s[3], double V[9]);

/* The 1-D StVK stretch at which its compressive stress is largest: the uniaxial stress of StVK,
 * proportional to s (s^2 - 1) / 2, is most negative at s = 1/sqrt(3) ~ 0.577 (the seed's "compression of
 * approximately 58 %"). */
#define PBNG_STVK_CLAMP_STRETCH 0.57735026918962576

/* The seed's StVK first Piola-Kirchhoff stress with inversion handling: with F = U diag(s) V^T as above,
 * each s_i below PBNG_STVK_CLAMP_STRETCH (inverted ones included) replaced by it, P^ = diag(t) S(diag(t))
 * with S = 2 mu E + lambda tr(E) I, E = (diag(t)^2 - I)/2, and P = U P^ V^T. Equals the plain StVK
 * P = F S while every s_i >= PBNG_STVK_CLAMP_STRETCH; bounded for every F; continuous across det F = 0.
 * Returns the energy density that goes with it; P written when given. */

/* The energy that goes with it (the seed's energy constraint C = E needs one), and the stress above into
 * P when P is given (one SVD for both): StVK's Psi = mu tr(E^2) + lambda/2 tr(E)^2 of the clamped diag(t).
 * Equals the plain StVK energy while every s_i >= PBNG_STVK_CLAMP_STRETCH; positive for an inverted F (a
 * mirrored element, F^T F = I, has plain StVK energy 0 and would never be pushed back). P is its
 * derivative where nothing is clamped. */
double pbng_stvk_energy_inversion_safe(double mu, double lambda, const double F[9], double P[9]);

#endif
