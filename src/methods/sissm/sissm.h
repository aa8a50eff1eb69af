/* SISSM's options (-sissm_*; docs/peridynamics.md#sissm): its own part of pbng_solver_options, its defaults and
 * set_from_options registered with pbng_solver_sissm_ops (sissm.c). */
#ifndef PBNG_METHODS_SISSM_SISSM_H
#define PBNG_METHODS_SISSM_SISSM_H

typedef struct {
  int form;          /* -sissm_form (0 exact, 1 seed) */
  int step_length;   /* -sissm_step_length (Eq. 33 on; 0: alpha = 1) */
  int chebyshev;     /* -sissm_chebyshev */
  double rho;        /* -sissm_rho, Chebyshev's spectral radius estimate */
  int check_energy;  /* -sissm_check_energy (count vertex steps that raise E_i; tests) */
  int d_every;       /* exact form: -sissm_d_every, D rebuilt every N iterations of a frame (1: every one) */
} pbng_sissm_options;

#endif
