/* One GPBD term's update, the general path (issue 19; seed generalized-position-based-dynamics.txt Sec. 3.2,
 * 4.1; docs/gpbd_solver.md "One element's update"): any term kind the solver runs (linear tetrahedra, sheet
 * triangles and bending stencils), through the term's energy callback (methods/gpbd/gpbd_terms.h) and the
 * generic local solve (core/gpbd_local.h):
 *   1. a tetrahedron with det F <= 0 is first projected (Sec. 4.1, a PBD move: into pre, not into d_i);
 *   2. S = ds/dx at x; with o->project, d_i is replaced by its W^-1-orthogonal projection on col(W S^T) and x
 *      moved by the rest (null(S): the term's infinitesimal rigid motions);
 *   3. Eq. 17-19: dl minimising phi with S held fixed, dd = W S^T dl (minus step 2's move).
 * Linear tetrahedra take the closed-form fast path (core/gpbd_tet4.h) in runs; this path is its reference
 * (tests/test_gpbd_tet4.c) and serves every other kind. */
#ifndef PBNG_METHODS_GPBD_GPBD_STEP_H
#define PBNG_METHODS_GPBD_GPBD_STEP_H

#include "methods/gpbd/gpbd_terms.h"

/* A term as the local solve sees it: nodes, k and energy. Self-referential (term.ctx points into it): filled
 * in place by the init functions, never copied. */
typedef struct {
  int n, k, sheet;                /* nodes, strain dimensions; sheet: a tri3, bend4 or cloth6 */
  const pbng_material *mat;       /* a tetrahedron's material */
  pbng_gpbd_tet_rest tet;         /* a tetrahedron's rest shape */
  pbng_gpbd_material_tet tet_ctx;
  pbng_gpbd_sheet_term sheet_ctx; /* sheet kinds */
  pbng_gpbd_term term;
} pbng_gpbd_element_term;

/* A linear tetrahedron of material mat with B = Dm^-1 and rest volume V. */
void pbng_gpbd_tet_term_init(const pbng_material *mat, const double B[9], double V, pbng_gpbd_element_term *t);

/* A sheet element (kind PBNG_ELEMENT_TRI3, PBNG_ELEMENT_BEND4 or PBNG_ELEMENT_CLOTH6) of the sheet material with its rest data. */
void pbng_gpbd_sheet_term_init(const pbng_sheet_material *mat, pbng_element_kind kind, const pbng_sheet_rest *rest, pbng_gpbd_element_term *t);

/* The term's update at positions x (t->n nodes; moved in place by steps 1-2) with weights w (w_a = h^2 / m_a,
 * 0 at a prescribed node) and displacement d (3n): dd (3n, step 3's W S^T dl minus step 2's move; 0 where
 * w = 0, and only minus the move when U(x) is not finite: diverged positions) and pre (3n, step 1's move, else
 * 0). Returns the local Newton steps taken. */
int pbng_gpbd_term_step(pbng_gpbd_element_term *t, const pbng_gpbd_step_options *o, double x[][3], const double *w, const double *d, double *dd, double *pre);

#endif
