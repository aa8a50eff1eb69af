/* Stop requests from the batch system: SIGTERM (Slurm's time limit, scancel, preemption) and SIGUSR1
 * (sbatch --signal=USR1@T) ask a run to finish its current iteration, write a checkpoint and exit. */
#ifndef PBNG_APP_SIGNALS_H
#define PBNG_APP_SIGNALS_H

/* Installs the handlers (once per process). */
void pbng_signals_install(void);
/* The signal received since installation, or 0. */
int pbng_signals_received(void);

#endif
