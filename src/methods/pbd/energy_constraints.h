/* The seed's energy constraints (Saillant et al. 2024, Sec. 4): per element and stiffness term k,
 *   S_k = sum_q V_q Psi~_k(F_q),  C_k = |S_k|^1/2                                   (Eq. 20, 22; Alg. 2)
 *   G_a = grad_a C_k = 1/(2 C_k) sum_q V_q P~_k(F_q) dN_a/dX(X_q)                  (Eq. 21, 23)
 * with compliance alpha_k = 1 / k_k, so that k_k/2 S_k is the term's share of the element energy:
 * sum_k k_k/2 S_k = sum_q V_q Psi(F_q) + (a constant per unit volume) for pbng's neohookean,
 * stable_neohookean and stvk (docs/high_order.md, "The seed's XPBD", gives every split and its constant).
 * The XPBD projection of one term (Eq. 16-17, alpha~ = alpha / dt^2):
 *   dlambda = (-C - alpha~ lambda) / (sum_a w_a |G_a|^2 + alpha~),  x_a += w_a G_a dlambda.
 * Where S_k < 0 (the stable splits' first term can be negative), C = |S|^1/2 and G = grad S / (2 C)
 * as Alg. 2 line 8 writes them: C G = grad S / 2 for either sign, so the constraint force
 * -C G / alpha is the term's exact force -grad(k S / 2); G is then minus the derivative of C.
 * Pure functions of the positions they are given; no MPI. */
#ifndef PBNG_METHODS_PBD_ENERGY_CONSTRAINTS_H
#define PBNG_METHODS_PBD_ENERGY_CONSTRAINTS_H

#include <stdint.h>
#include "core/element.h"
#include "core/material.h"
#include "core/sheet_material.h"
#include "problem/geometry.h"

typedef enum { PBNG_SPLIT_STABLE = 0, PBNG_SPLIT_MACKLIN = 1, PBNG_SPLIT_COUNT } pbng_split_kind;
enum { PBNG_SPLIT_TERMS = 2 };

/* A material's energy as two constraint terms: 0 the shear (mu, mu') term, 1 the volume (lh, lambda') term. */
typedef struct {
  pbng_split_kind kind;
  int stvk;           /* StVK's Table 2 terms tr(E^2) (k_0 = 2 mu) and tr(E)^2 (k_1 = lambda) */
  int log_term;       /* stable_neohookean: the term -mu'/2 log(|F|^2 + 1) sits in term 0 */
  double stiffness[PBNG_SPLIT_TERMS]; /* k_k; compliance alpha_k = 1 / k_k */
  double beta;        /* stable split: term 0 carries -2 beta (J - 1), beta = k_volume j_rest / k_shear */
  double c_volume;    /* term 1 is (J - c_volume)^2: 1 + j_rest (Macklin's), 1 (stable) */
  double offset;      /* sum_k k_k/2 Psi~_k(F) - Psi(F), the same for every F */
} pbng_energy_split;

/* "stable", "macklin" (-xpbd_ho_split). */
const char *pbng_split_kind_name(pbng_split_kind kind);

/* The split of material m (neohookean, stable_neohookean; stvk with kind "stable", its only split).
 * Returns 0, or -1 when the material has no such split (corotated; stvk with macklin or lambda < 0). */
int pbng_energy_split_init(const pbng_material *m, pbng_split_kind kind, pbng_energy_split *sp);

/* Psi~_k(F) (Table 2, Eq. 25, with the constants of docs/high_order.md), P~_k = dPsi~_k/dF (Eq. 26-28)
 * into P, and *roundoff, a bound of Psi~_k's floating-point error in units of the machine epsilon. */
double pbng_split_term(const pbng_energy_split *sp, int k, const double F[9], double P[9], double *roundoff);

/* One element as the constraints see it: its nodes, and per quadrature point q its weight V_q and
 * the physical shape gradients dN_a/dX(X_q) (seed Alg. 3). */
typedef struct {
  int nen, nq;
  const int32_t *node;  /* [nen]: indices into x and w */
  const double *V;      /* [nq] */
  const double *grad;   /* [nq][nen][3] */
} pbng_element_points;

/* Alg. 2 for term k at positions x: *S = sum_q V_q Psi~_k(F_q), *C = |S|^1/2, G[a] (Eq. 23).
 * Returns 0, leaving C and G unset, when |S| is within its round-off (4 eps sum_q V_q roundoff_q):
 * the constraint is then skipped (its gradient is not defined at C = 0). */
int pbng_energy_constraint(const pbng_energy_split *sp, int k, const pbng_element_points *el, const double *x, double *S, double *C,
                           double (*G)[3]);

/* Projects term k (Eq. 16-17): inverse masses w, alpha~ = inv_dt2 / k_k, lambda its multiplier
 * (updated). Returns the local nodes that moved as bits (bit a: node a). */
uint32_t pbng_project_energy_term(const pbng_energy_split *sp, int k, double inv_dt2, const pbng_element_points *el, const double *w,
                                  double *lambda, double *x);

/* Projects the element's terms in order (term 1 at the positions term 0 left), Eq. 16-17, with
 * inverse masses w and alpha~ = inv_dt2 / k_k; lambda[PBNG_SPLIT_TERMS] the multipliers (updated).
 * Returns the local nodes that moved as bits (bit a: node a). */
uint32_t pbng_project_energy_constraints(const pbng_energy_split *sp, double inv_dt2, const pbng_element_points *el, const double *w,
                                         double lambda[PBNG_SPLIT_TERMS], double *x);

/* A sheet term (issue 18: a tri3 membrane or a bend4 stencil, problem/sheet_terms.h; docs/cloth.md "PBD
 * and XPBD with sheets") as one energy constraint of compliance alpha = 1 for pbd, xpbd, xpbd_qs and xpbd_ho:
 *   C = sqrt(2 E(x)),  grad_a C = grad_a E / C,
 * E the term's energy (thickness, area and the membrane law, or k_b, included), so that C^2 / (2 alpha) = E
 * is exactly its share of pbng's energy, as the elements' constraints of Sec. 6 (Eq. 21-23) are theirs;
 * projected by Eq. 26-28 (alpha~ = 1/dt^2; PBD: 0). grad C is singular at C = 0 (a cone tip: the term at its
 * rest strain): the term counts as satisfied (skipped, no force) where E <= PBNG_SHEET_CONSTRAINT_FLOOR x
 * E_unit, E_unit the term's energy at a unit strain (membrane: h A tr(C) / 2) or a fold of order one radian
 * (bending: 3 k_b / 2), i.e. where its strain or fold is below ~1e-12. That is ~1e4 above round-off (a Green
 * strain computed from F^T F - I, or a flat stencil's v = sum K_i x_i, carries ~1e-16 relative), so the
 * terms of a sheet at rest or moving in its plane take no steps of round-off noise, and the force left out,
 * 1e-12 of the term's unit-strain force, is far below any tolerance. */
#define PBNG_SHEET_CONSTRAINT_FLOOR 1e-24

/* C and G[a] = grad_a C of the sheet term on nodes node[] (3 for tri3, 4 for bend4) at x. Returns 0,
 * leaving C and G meaningless, where the term counts as satisfied (above) or E is not finite. */
int pbng_sheet_constraint(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *node, const double *x,
                          double *C, double (*G)[3]);

/* Projects the sheet term (Eq. 26-28, alpha~ = inv_dt2; 0: PBD), inverse masses w, lambda its multiplier
 * (updated). Returns the local nodes that moved as bits (bit a: node a). */
uint32_t pbng_project_sheet_constraint(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *node,
                                       double inv_dt2, const double *w, double *lambda, double *x);

/* The term's squared secondary residual (C + alpha~ lambda)^2 (Eq. 25; C = 0 where satisfied), and its
 * constraint force grad C^T lambda (Eq. 24) added to force[node]. */
double pbng_sheet_constraint_residual(const pbng_sheet_material *m, pbng_element_kind kind, const pbng_sheet_rest *r, const int32_t *node,
                                      double inv_dt2, double lambda, const double *x, double *force);

#endif
