/* Checkpoint files: everything a run needs to continue exactly where it stopped (-restart), written
 * atomically ("<path>.partial", then renamed) with the collective HDF5 writer. Layout
 * "pbng-checkpoint-1" (docs/running.md#checkpoint-and-restart):
 *   root attributes format, counters (float64 [PBNG_CKPT_NCOUNTERS], pbng_checkpoint_counters in
 *   order), config (the options that must not change on restart), command_line, scalar_NAME;
 *   /nodes/NAME [N, k], /elements/NAME [M, k], /weak/NAME [W, k]: per-item state by global index.
 * Collective over the subdomain's communicator. */
#ifndef PBNG_IO_CHECKPOINT_H
#define PBNG_IO_CHECKPOINT_H

#include "parallel/dmesh.h"
#include "core/state.h"



typedef struct {
  double next_frame;     /* the frame to continue */
  double next_iteration; /* its iterations already done (0: the frame has not started) */
  double time0;          /* time of frame 0 */
  double residual0, residual, energy, fresh, seconds, linear; /* the frame in progress (solve_frame's state) */
  double iterations, linear_iterations, solver_seconds; /* run totals of the frames completed */
  double diverge_ref, detected, redetections, recovery_inverted, recovering, recovery_skipped; /* the frame loop's
                                                                     judgement state (run.c's frame_judgement) */
} pbng_checkpoint_counters;
#define PBNG_CKPT_NCOUNTERS ((int)(sizeof(pbng_checkpoint_counters) / sizeof(double)))

/* Writes path atomically. config: a string of the options a restart must repeat. */
PetscErrorCode pbng_checkpoint_write(const pbng_dmesh *dm, const char *path, const pbng_checkpoint_counters *counters, const char *config,
                                     const char *command_line, int nfields, const pbng_state_field *fields);

/* Reads the counters and checks the file against this run (format, mesh sizes, config). */
PetscErrorCode pbng_checkpoint_read_counters(const pbng_dmesh *dm, const char *path, const char *config, pbng_checkpoint_counters *counters);
/* Reads the fields' data (their layout must be as when written). */
PetscErrorCode pbng_checkpoint_read_fields(const pbng_dmesh *dm, const char *path, int nfields, pbng_state_field *fields);

#endif
