/* One small interface for every iterative method on a pbng_problem:
 * create (by name) -> begin_frame -> iterate ... -> destroy. The residual is the problem's
 * (pbng_problem_residual), identical for every solver. */
#ifndef PBNG_SOLVERS_SOLVER_H
#define PBNG_SOLVERS_SOLVER_H

#include "solvers/problem.h"
#include "solvers/state.h"

typedef enum { PBNG_ACCEL_NONE = 0, PBNG_ACCEL_SOR = 1, PBNG_ACCEL_CHEBYSHEV = 2 } pbng_accel;

typedef struct {
  pbng_accel accel;
  double omega; /* SOR relaxation (Eq. 40), paper: 1.7 */
  double rho;   /* Chebyshev spectral radius estimate (Eq. 39), paper: 0.95 */
  double gamma; /* Chebyshev relaxation (Eq. 39), paper: 1.7 */
  int weak_blocks;  /* PBNG: a joint step per weak constraint after each sweep (-weak_blocks) */
  int weak_first;   /* PBD/XPBD: project the weak constraints before the elements (-xpbd_order weak_first) */
  double pseudo_dt; /* XPBD-QS: pseudo-time step */
  int substeps;     /* XPBD-QS: iterations per pseudo-time step */
} pbng_solver_options;

typedef struct pbng_solver pbng_solver;

typedef struct {
  const char *name;
  PetscErrorCode (*create)(pbng_solver *s);
  PetscErrorCode (*begin_frame)(pbng_solver *s);
  PetscErrorCode (*iterate)(pbng_solver *s, int l); /* iteration l (0-based) of the current frame */
  PetscErrorCode (*destroy)(pbng_solver *s);
  PetscErrorCode (*monitor)(pbng_solver *s, char *buf, size_t len); /* optional -monitor suffix (collective) */
  /* optional: the state a checkpoint must keep between iterations (pointers into the solver), and
   * what to do once it was read back (e.g. refresh ghosts) */
  PetscErrorCode (*state)(pbng_solver *s, pbng_state_field *fields, int *nfields);
  PetscErrorCode (*restored)(pbng_solver *s);
} pbng_solver_ops;

struct pbng_solver {
  const pbng_solver_ops *ops;
  pbng_problem *pb;
  pbng_solver_options opt;
  double halo_seconds; /* wall time spent in halo exchanges (part of the iterations' time) */
  long long linear_iterations; /* Krylov iterations so far, over all frames (Newton; 0 for PBNG) */
  void *data;
};

/* Solver names: "pbng", "newton", "pbd", "xpbd", "xpbd_qs". Unknown name -> error listing the known ones. */
PetscErrorCode pbng_solver_create(const char *name, pbng_problem *pb, const pbng_solver_options *opt, pbng_solver *s);
PetscErrorCode pbng_solver_begin_frame(pbng_solver *s);
PetscErrorCode pbng_solver_iterate(pbng_solver *s, int l);
PetscErrorCode pbng_solver_destroy(pbng_solver *s);

/* 1 for the constraint-based solvers (pbd, xpbd, xpbd_qs): they need the constraint colors. */
int pbng_solver_uses_constraint_colors(const char *name);

/* Names of the accelerations "none" | "sor" | "chebyshev": 0 or -1 for an unknown name. */
int pbng_accel_from_name(const char *name, pbng_accel *accel);
const char *pbng_accel_name(pbng_accel accel);

extern const pbng_solver_ops pbng_solver_pbng_ops;
extern const pbng_solver_ops pbng_solver_newton_ops;
extern const pbng_solver_ops pbng_solver_pbd_ops, pbng_solver_xpbd_ops, pbng_solver_xpbd_qs_ops;

#endif
