/* PBNG's color sweep (Sec. 7 and 9) as a smoother object: one Gauss-Seidel pass over the free nodes,
 * color by color, each node taking one modified-Newton step on its 3x3 system (Eq. 31-33), then one
 * joint step per weak constraint (-weak_blocks) and SOR (Eq. 40) or Chebyshev (Eq. 39) acceleration.
 * The single-level solver (pbng.c) iterates it on the problem; the multilevel solver uses one per
 * level as the nonlinear Gauss-Seidel of PETSc's FAS, where each level solves F(x) = b for a
 * right-hand side b (the tau correction): F = -(f_int + f_ext) is the energy gradient, and every
 * step then solves for f_i(x) + b_i = 0. */
#ifndef PBNG_METHODS_PBNG_SWEEP_H
#define PBNG_METHODS_PBNG_SWEEP_H

#include "methods/pbng/contact_patch.h"
#include "methods/pbng/pbng.h"
#include "problem/problem.h"

typedef struct {
  pbng_problem *pb;
  pbng_sweep_options opt;
  PetscLogEvent ev_update, ev_halo; /* -log_view: node updates vs halo exchange */
  double *x_curr;                   /* x^{l}   of the owned free nodes (acceleration) */
  double *x_prev;                   /* x^{l-1} */
  double omega_prev;                /* Chebyshev omega_l */
  pbng_color_groups blocks;         /* counted weak constraints by block color (ncolors 0: none) */
  pbng_contact_patch contact_patch;  /* the contacts' joint step (with -weak_blocks) */
  double halo_seconds;              /* wall time in the per-color halo exchanges so far */
  long long ls_halved, ls_kept;     /* -vbd_line_search: node steps of this rank shortened, and refused (x_i kept), so far */
  /* corotated warm starts kept alike on every rank: per color, the visits (4 e + a) of local elements e whose node a of
   * that color is another rank's free node (its owner's visit moves e's warm start there: this rank's copy moves with it) */
  int32_t *refresh_start, *refresh_entry;
  int refresh_ncolors;
  int refresh_version;              /* the contacts' version the lists follow (their colors), -1 without contacts */
} pbng_sweeper;

/* Collective (the weak-block set-up checks agree over the ranks). */
PetscErrorCode pbng_sweeper_create(pbng_problem *pb, const pbng_sweep_options *opt, pbng_sweeper *sw);
PetscErrorCode pbng_sweeper_destroy(pbng_sweeper *sw);

/* Starts a new acceleration sequence at the current positions (x^{-1} = x^0, omega_0 = 1). */
void pbng_sweeper_restart(pbng_sweeper *sw);

/* Sweep l (0-based) of the current sequence: every owned free node once (ghosts kept current), the
 * weak blocks, the acceleration. b: right-hand side [nfree][3] of the owned free nodes (the step
 * solves F_i(x) = b_i, i.e. f_i(x) + b_i = 0 with f_i the node force of pbng_node_force), or NULL for b = 0. */
PetscErrorCode pbng_sweeper_iterate(pbng_sweeper *sw, int l, const double *b);

#endif
