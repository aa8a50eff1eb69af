/* The constraints of PBD and XPBD (Sec. 6) and their Gauss-Seidel projections (Eq. 26-28):
 *   per element e two scalar constraints (Eq. 22-23),
 *     corotated:  C_2e = |F - R(F)|_F,  C_2e+1 = det F - 1,         alpha = 1/(2 mu V), 1/(lambda V)
 *     neohookean: C_2e = |F|_F,         C_2e+1 = det F - 1 - mu/lh,  alpha = 1/(mu V),   1/(lh V)
 *   (lh = lambda + mu, Sec. 8: with it, sum C^2/(2 alpha) is exactly pbng's energy Eq. 7 / Eq. 8);
 *   each weak constraint (Eq. 18-19) as the vector constraint C = sum_j a_j x_j, split along n
 *   (compliance 1/k_n) and across it (1/k_t), so that 1/2 C^T K C = sum C^2/(2 alpha) too.
 * A projection with multiplier lambda and alpha~ = alpha / dt^2 (Macklin et al. 2016):
 *   dlambda = (-C - alpha~ lambda) / (sum_j w_j |grad_j C|^2 + alpha~),  x_j += w_j grad_j C dlambda,
 * w_j = 1/m_j (0 for prescribed nodes). PBD is the limit alpha -> 0 (no multiplier kept).
 * Pure functions of the positions they are given; no MPI. */
#ifndef PBNG_METHODS_PBD_CONSTRAINTS_H
#define PBNG_METHODS_PBD_CONSTRAINTS_H

#include "core/material.h"
#include "core/weak_constraint.h"

typedef struct {
  const pbng_material *mat;
  double inv_dt2; /* 1/dt^2 (XPBD); 0 selects PBD (alpha~ = 0, multipliers unused) */
} pbng_projection;

/* 1 when the material's energy is a sum of squared constraints (corotated, neohookean). */
int pbng_material_has_constraints(const pbng_material *mat);

/* Projects element e's two constraints in order (C_2e, then C_2e+1 at the updated positions).
 * node[4]: indices into x and w; B, V: rest shape; lambda[2]: the element's multipliers (updated);
 * q: warm-start quaternion for R(F) (corotated) or NULL. Returns which nodes moved (bit a). */
int pbng_project_element(const pbng_projection *p, const int32_t node[4], const double B[9], double V, const double *w,
                         double lambda[2], float q[4], double *x);

/* Projects one weak constraint (node[] indices into x and w); lambda[3] = lambda_n n + lambda_t. A
 * unilateral one (a contact, energy 1/2 k_n min(n.C, 0)^2) is an inequality constraint: its accumulated
 * lambda_n is kept >= 0 (the step clamped to -lambda_n), so it acts only while n.C < 0 or while it still
 * pushes (then the step gives back what it pushed too far). */
void pbng_project_weak(const pbng_projection *p, const pbng_weak_constraint *c, const double *w, double lambda[3], double *x);

/* The squared secondary residual (Eq. 25, h = C + alpha~ lambda); also adds each node's constraint
 * force grad_j C^T lambda (Eq. 24) to force[node], for the primary residual M(x - x~) - grad C^T lambda
 * of Sec. 6.2. A unilateral weak constraint's normal part is the complementarity residual: C_n + alpha~
 * lambda_n while lambda_n > 0, else min(C_n, 0). */
double pbng_element_constraint_residual(const pbng_projection *p, const int32_t node[4], const double B[9], double V,
                                        const double lambda[2], const double *x, double *force);
double pbng_weak_constraint_residual(const pbng_projection *p, const pbng_weak_constraint *c, const double lambda[3], const double *x,
                                     double *force);

#endif
