/* Generalized PBD's options (-gpbd_*; docs/gpbd_solver.md): its own part of pbng_solver_options, its defaults and
 * set_from_options registered with pbng_solver_gpbd_ops (gpbd.c). */
#ifndef PBNG_METHODS_GPBD_GPBD_H
#define PBNG_METHODS_GPBD_GPBD_H

typedef struct {
  int form;               /* -gpbd_form (0 jacobi, 1 gs) */
  double omega;           /* Jacobi: over-relaxation in [1, 2) (-gpbd_omega; 0: not read yet, 1) */
  int newton_max;         /* local Newton steps at most (-gpbd_newton_max; 0: not read yet, 20) */
  int hessian_fix;        /* -gpbd_hessian_fix (0 qr_gershgorin, 1 eigen_clamp, 2 qr_when_indefinite) */
  int seed_drift;         /* -gpbd_subspace_projection 0 (the seed's rule: d_i not projected on its subspace) */
  int sheet_projection_off; /* -gpbd_sheet_projection 0 (sheet terms not projected as tetrahedra are) */
  double uninvert_min;    /* -gpbd_uninvert_min (< 0: no inverted-element projection; 0 in the options: not read yet) */
  int uninvert_passes;    /* -gpbd_uninvert_passes: passes of that projection after each sweep at most (0: not read yet, the default; -1: none) */
  int uninvert_joint;     /* -gpbd_uninvert_joint: inverted tetrahedra left after the passes projected jointly when at most this many
                             (0: not read yet, the default; -1: never) */
  int uninvert_joint_steps; /* -gpbd_uninvert_joint_steps: the joint projection's Newton steps on all its nodes at once after
                               a stalled node-wise sweep, at most (0: not read yet, the default; -1: none) */
  int uninvert_body;      /* -gpbd_uninvert_body (1 on, -1 off; 0: not read yet, off) */
  double dt;              /* quasistatic: pseudo-time step (-gpbd_dt; 0: -dt) */
  int substeps;           /* quasistatic: iterations per pseudo-time step (-gpbd_substeps; 0: not given, 1) */
} pbng_gpbd_options;

#endif
