/* A pbng run: scene or mesh -> coloring and subdomain -> problem and solver -> frame loop -> output. */
#ifndef PBNG_APP_RUN_H
#define PBNG_APP_RUN_H

#include "app/config.h"
#include "app/errors.h"

/* Exit status of a run stopped by SIGTERM / SIGUSR1 after writing its checkpoint (resubmit with -restart). */
#define PBNG_EXIT_CHECKPOINTED 85

/* Error code of a run whose solution diverged (non-finite, or relative residual above -divergence_limit):
 * the output is kept with the frames before, its status attribute saying where it diverged. */
#define PBNG_ERR_DIVERGED PETSC_ERR_NOT_CONVERGED

/* One level of a multilevel run in the summary (the slowest rank's seconds). */
typedef struct {
  char name[PETSC_MAX_PATH_LEN + 32];
  int64_t nodes, elements;
  int ranks;                    /* the ranks holding a part of it (fewer than the run's: -multilevel_min_nodes_per_rank) */
  double seconds;
  long long sweeps, functions, objectives, jacobians;
  double halo_seconds;          /* the slowest rank's */
  pbng_comm_counts comm;        /* the busiest rank's reductions, messages and bytes (each its own maximum) */
  double transfer_seconds;      /* the transfers to the next coarser level (restriction, interpolation, injection), slowest rank */
  pbng_comm_counts transfer_comm; /* and their communication, busiest rank */
  double factor_seconds;        /* the coarsest level's factorisations and solves, slowest rank (0: none, or aggregation) */
  pbng_comm_counts factor_comm;
} pbng_level_report;

typedef struct {
  int frames, iterations;         /* frames solved, iterations over all frames */
  long long linear_iterations;    /* Krylov iterations over all frames (Newton; 0 for PBNG) */
  double solver_seconds;          /* iterations only: no setup, residual evaluation or output */
  double total_seconds;           /* wall time of the whole run */
  double visits_per_second;       /* element visits (one element seen from one of its nodes; an iteration = nodes per element x elements) per solver second */
  int64_t free_visits_per_iteration; /* visits actually made per iteration: held nodes are not visited */
  int ncolors;
  int constraint_colors; /* PBD/XPBD: element + weak constraint colors (0 for the other solvers) */
  int64_t nodes, elements;
  double nodes_per_element;       /* element-node visits per element (the mean when kinds mix) */
  double quad_points;             /* quadrature points per element visit (1 for linear tetrahedra; the mean when kinds mix) */
  char element[64];               /* the element kind's name, or "mixed hex8+prism6+pyramid5" */
  double final_residual, final_relative_residual;
  int capped_frames;              /* with a tolerance: frames that stopped at -iters (or the time budget) before it */
  int guesses_taken, guesses_declined; /* -quasistatic_guess secant: frames started from the guess, and where it was declined */
  double absolute_tolerance;      /* -atol, or the default tolerance's floor (0: none) */
  double peak_rss_bytes_max;      /* largest peak resident set over ranks */
  double peak_rss_bytes_sum;      /* summed over ranks */
  int ranks, threads;
  int64_t owned_min, owned_max, ghosts_min, ghosts_max; /* nodes per rank */
  int64_t halo_bytes_per_iteration;                     /* sent by all ranks in one sweep */
  int halo_neighbors_max;                               /* largest number of neighbour ranks */
  double halo_seconds;                                  /* largest over ranks, within solver_seconds */
  int stopped_by_signal;                                /* the signal that stopped the run after a checkpoint, or 0 */
  int contact;                                          /* contacts on */
  int64_t contacts_last, contacts_max;                  /* contacts in force at the end, and at most */
  double contact_detect_seconds, contact_recolor_seconds, contact_update_seconds; /* summed over detections (slowest rank each) */
  int nlevels;                                          /* multilevel: levels (iterations are cycles), else 1 */
  pbng_comm_counts iteration_comm;                      /* communication inside the iterations (the busiest rank's, each
                                                           count its own maximum) */
  pbng_level_report level[PBNG_MAX_LEVELS];             /* [nlevels], level[0] the coarsest */
} pbng_run_summary;

PetscErrorCode pbng_run(MPI_Comm comm, pbng_config *cfg, const char *command_line, pbng_run_summary *summary);

/* Prints the closing summary (rank 0) and, when cfg->summary is set, writes it as JSON. */
PetscErrorCode pbng_run_report(MPI_Comm comm, const pbng_config *cfg, const pbng_run_summary *summary);

#endif
