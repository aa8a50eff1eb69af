/* PBNG's options (-accel, -omega, -rho, -gamma, -weak_blocks, -vbd_*; docs/options.md): the sweep's, its own part of
 * pbng_solver_options, its defaults and set_from_options registered with pbng_solver_pbng_ops (pbng.c). The
 * multilevel solver smooths with the same sweep, Newton's -newton_npc pbng too. */
#ifndef PBNG_METHODS_PBNG_PBNG_H
#define PBNG_METHODS_PBNG_PBNG_H

typedef enum { PBNG_ACCEL_NONE = 0, PBNG_ACCEL_SOR = 1, PBNG_ACCEL_CHEBYSHEV = 2 } pbng_accel;

typedef struct {
  pbng_accel accel;
  double omega;    /* SOR relaxation (Eq. 40), paper: 1.7 */
  double rho;      /* Chebyshev spectral radius estimate (Eq. 39), paper: 0.95 */
  double gamma;    /* Chebyshev relaxation (Eq. 39), paper: 1.7 */
  int weak_blocks; /* a joint step per weak constraint (static ones and contacts) after each sweep */
  int vbd_line_search; /* VBD's backtracking line search after each node step (pbng_node_line_search) */
  int vbd_exact_block; /* VBD's node block (pbng_node_exact_block) instead of Eq. 36-38 */
} pbng_sweep_options;

/* The acceleration's name: "none" | "sor" | "chebyshev" (-accel). */
const char *pbng_accel_name(pbng_accel accel);

#endif
