/* The corotated model's polar rotation R(F) (Eq. 7) from a warm start: Newton steps on tr(R(q)^T F) over
 * unit quaternions q, as straight-line code. One step (pbng_polar_newton_step) is shared by the scalar
 * path (material.c: polar_warm_newton, up to 4 steps with an early exit) and by the fixed-step path
 * (pbng_polar_warm_fixed), which has no branch so that a node's element visits run as one SIMD loop
 * (problem.c: node_force_corotated). Whatever either declines, pbng_polar_rotation's robust iteration
 * (Newton / Mueller steps, Horn's eigenproblem) takes over. docs/equations.md "Corotated R(F)". */
#ifndef PBNG_CORE_POLAR_H
#define PBNG_CORE_POLAR_H

#include <math.h>

#include "core/mat3.h" /* PBNG_HOT_INLINE */

/* R of a unit quaternion (w, x, y, z). (A quaternion of squared norm n gives n R: a float warm start's
 * rounding scales M below, which the Newton step w = H^{-1} g does not see.) */
PBNG_HOT_INLINE void pbng_unit_quat_rotation(const double q[4], double R[9])
{
  const double qw = q[0], qx = q[1], qy = q[2], qz = q[3];
  const double ww = qw * qw, xx = qx * qx, yy = qy * qy, zz = qz * qz;
  const double xy = qx * qy, xz = qx * qz, yz = qy * qz, wx = qw * qx, wy = qw * qy, wz = qw * qz;
  R[0] = (ww + xx) - (yy + zz); R[1] = 2.0 * (xy - wz);       R[2] = 2.0 * (xz + wy);
  R[3] = 2.0 * (xy + wz);       R[4] = (ww + yy) - (xx + zz); R[5] = 2.0 * (yz - wx);
  R[6] = 2.0 * (xz - wy);       R[7] = 2.0 * (yz + wx);       R[8] = (ww + zz) - (xx + yy);
}

/* What a Newton step saw: spd, H = tr(M) I - sym(M) positive definite (M = F R(q)^T; each LDL^T pivot
 * above 1e-12 tr M) so that the step is Newton's; angle_sq = |w|^2 of the step w; tr = tr M, det = det H
 * for the acceptance test pbng_polar_step_final. */
typedef struct {
  int spd;
  double angle_sq, tr, det;
} pbng_polar_step;

/* One Newton step on f(w) = tr(exp(-[w]x) M), M = F R(q)^T (gradient g = (M21 - M12, M02 - M20, M10 - M01),
 * Hessian -H): w = H^{-1} g = adj(H) g / det(H), then q <- (q + (0, w/2) q) / |.|, free of trigonometry: it
 * rotates about w by 2 atan(|w|/2), |w| to O(|w|^3), so it keeps the fixed point (g = 0) and Newton's
 * cubic convergence (W^3 = -|w|^2 W: the gradient has no second-order term). No branch: where H is not
 * SPD the step is meaningless (spd = 0) and the caller discards it. */
PBNG_HOT_INLINE pbng_polar_step pbng_polar_newton_step(const double F[9], double q[4])
{
  pbng_polar_step st;
  double R[9], M[9];
  pbng_unit_quat_rotation(q, R);
  for (int r = 0; r < 3; ++r) /* M = F R^T */
    for (int c = 0; c < 3; ++c) M[3 * r + c] = F[3 * r] * R[3 * c] + F[3 * r + 1] * R[3 * c + 1] + F[3 * r + 2] * R[3 * c + 2];
  const double g0 = M[7] - M[5], g1 = M[2] - M[6], g2 = M[3] - M[1];
  const double tr = M[0] + M[4] + M[8];
  const double a = M[4] + M[8], b = M[0] + M[8], c = M[0] + M[4]; /* H = tr(M) I - sym(M) */
  const double d = -0.5 * (M[1] + M[3]), e = -0.5 * (M[5] + M[7]), f = -0.5 * (M[2] + M[6]);
  const double A00 = b * c - e * e, A11 = a * c - f * f, A22 = a * b - d * d; /* adjugate of H */
  const double A01 = f * e - d * c, A02 = d * e - f * b, A12 = d * f - a * e;
  const double det = a * A00 + d * A01 + f * A02;
  const double pivot_min = 1e-12 * tr; /* LDL^T pivots a, A22 / a, det / A22, tested without divisions */
  st.spd = (tr > 0.0) & (a > pivot_min) & (A22 > pivot_min * a) & (det > pivot_min * A22);
  const double s = 1.0 / det;
  const double w0 = (A00 * g0 + A01 * g1 + A02 * g2) * s;
  const double w1 = (A01 * g0 + A11 * g1 + A12 * g2) * s;
  const double w2 = (A02 * g0 + A12 * g1 + A22 * g2) * s;
  st.angle_sq = w0 * w0 + w1 * w1 + w2 * w2;
  st.tr = tr;
  st.det = det;
  const double px = 0.5 * w0, py = 0.5 * w1, pz = 0.5 * w2, qw = q[0], qx = q[1], qy = q[2], qz = q[3];
  const double nw = qw - (px * qx + py * qy + pz * qz);
  const double nx = qx + (px * qw + py * qz - pz * qy);
  const double ny = qy + (py * qw + pz * qx - px * qz);
  const double nz = qz + (pz * qw + px * qy - py * qx);
  const double n2 = nw * nw + nx * nx + ny * ny + nz * nz, en = n2 - 1.0; /* |w|^2 / 4 + the start's rounding */
  /* 1/sqrt(1 + en) without sqrt (whose errno would keep the loop from vectorizing): its series to en^4
   * (error 63/256 en^5) and one Newton step y <- y (3 - n2 y^2) / 2, which squares the relative error:
   * below 1e-16 for |en| <= 0.01 + rounding, i.e. for every step below 0.2 rad from a unit quaternion */
  double inv = 1.0 - en * (0.5 - en * (0.375 - en * (0.3125 - 0.2734375 * en)));
  inv *= 1.5 - 0.5 * n2 * inv * inv;
  q[0] = nw * inv, q[1] = nx * inv, q[2] = ny * inv, q[3] = nz * inv;
  return st;
}

/* Whether the rotation after step st is final: Newton's error after a step w is about c |w|^3 with
 * c ~ |M| / lambda_min(H) (measured 0.26..0.5 |w|^3 for moderate F); C = (2 tr)^2 |F| / det(H) bounds that
 * scale from above (lambda_min(H) >= 4 det H / tr(H)^2), and the step is final when C |w|^3 < 1e-13 rad
 * (|w| < ~2e-5 for F near a rotation). fsq = |F|^2. */
PBNG_HOT_INLINE int pbng_polar_step_final(pbng_polar_step st, double fsq)
{
  const double trh = 2.0 * st.tr, c2 = trh * trh * trh * trh * fsq;
  const double a3 = st.angle_sq * st.angle_sq * st.angle_sq;
  return st.spd & (st.angle_sq < 1e-8) & (a3 * c2 < 1e-26 * st.det * st.det);
}

/* R(F) by exactly two Newton steps from the warm start qf (the rotation stored at this
 * element's previous visit), with no branch. Two: in a sweep at most one node of an element moves between
 * two of its visits, and the first step's |w| is below ~1e-2 rad in 99 % of the visits of
 * box_stretch_twist's first iterations; two cubic steps take that to ~1e-13 rad, one step only from
 * within ~2e-5 rad (a third of those visits). Returns 1 with R and qn (the new warm start) set when every
 * step was a Newton step below 0.2 rad and the last one is final (pbng_polar_step_final): then R is the
 * polar rotation to ~1e-13 rad, the same maximiser of tr(R^T F) as pbng_polar_rotation's. Returns 0
 * otherwise (large rotations since the last visit, inverted or degenerate F, qf not a unit quaternion):
 * R and qn are then meaningless (possibly NaN), and the caller takes pbng_polar_rotation from qf. */
PBNG_HOT_INLINE int pbng_polar_warm_fixed(const double F[9], const double qf[4], double R[9], double qn[4])
{
  double q[4] = {qf[0], qf[1], qf[2], qf[3]};
  const double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  int ok = fabs(n2 - 1.0) < 1e-5; /* a stored unit quaternion */
  /* the steps written out: a loop around them would be too large to unroll before vectorization */
  const pbng_polar_step first = pbng_polar_newton_step(F, q);
  const pbng_polar_step st = pbng_polar_newton_step(F, q);
  ok &= first.spd & (first.angle_sq < 0.04) & st.spd & (st.angle_sq < 0.04);
  double fsq = 0.0;
  for (int k = 0; k < 9; ++k) fsq += F[k] * F[k];
  ok &= pbng_polar_step_final(st, fsq);
  pbng_unit_quat_rotation(q, R);
  for (int k = 0; k < 4; ++k) qn[k] = q[k];
  return ok;
}

#endif
