/* The Newton baseline's options (-newton_*; docs/newton.md): its own part of pbng_solver_options, its defaults and
 * set_from_options registered with pbng_solver_newton_ops (newton.c). */
#ifndef PBNG_METHODS_NEWTON_NEWTON_H
#define PBNG_METHODS_NEWTON_NEWTON_H

typedef struct {
  char preconditioner[32]; /* -newton_preconditioner: the linear solver preset ("": the default) */
  int hessian;             /* -newton_projection / -newton_exact_hessian (a pbng_hessian_kind) */
  int npc;                 /* -newton_npc pbng: PBNG sweeps as its nonlinear preconditioner */
} pbng_newton_options;

#endif
