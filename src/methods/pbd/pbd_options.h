/* The constraint solvers' options: each solver's own part of pbng_solver_options, defaults and set_from_options
 * registered with its ops (xpbd.c for pbd, xpbd, xpbd_qs; xpbd_ho.c; continuum_pbd.c). */
#ifndef PBNG_METHODS_PBD_PBD_OPTIONS_H
#define PBNG_METHODS_PBD_PBD_OPTIONS_H

/* pbd, xpbd, xpbd_qs (-xpbd_*; docs/options.md#pbd-xpbd-and-xpbd-qs-baselines) */
typedef struct {
  int weak_first;   /* project the weak constraints before the elements (-xpbd_order weak_first) */
  double pseudo_dt; /* XPBD-QS: pseudo-time step (-xpbd_qs_dt; 0: -dt) */
  int substeps;     /* XPBD-QS: iterations per pseudo-time step (-xpbd_qs_substeps) */
} pbng_xpbd_options;

/* The seed's XPBD (-xpbd_ho_*; docs/high_order.md#the-seeds-xpbd) */
typedef struct {
  int split;      /* -xpbd_ho_split (a pbng_split_kind) */
  int substeps;   /* dynamic: substeps per frame (-xpbd_ho_substeps; 0: not given) */
  double dt;      /* quasistatic: pseudo-time step (-xpbd_ho_dt; 0: not given, -dt) */
  int iterations; /* solver iterations per (pseudo) step, n_it of Alg. 1 (-xpbd_ho_iterations) */
} pbng_xpbd_ho_options;

/* The continuum seed's solver (-continuum_pbd_*; docs/cloth.md#the-seeds-solver) */
typedef struct {
  int substeps;   /* dynamic: substeps per frame (-continuum_pbd_substeps; 0: not given) */
  double dt;      /* quasistatic: pseudo-time step (-continuum_pbd_dt; 0: -dt) */
  int iterations; /* constraint sweeps per (pseudo) step (-continuum_pbd_iterations) */
  double damping; /* velocities scaled by 1 - damping after each step (Alg. 1 line 12; -continuum_pbd_damping) */
  int inversion;  /* StVK's inversion handling (-continuum_pbd_inversion) */
} pbng_continuum_pbd_options;

#endif
