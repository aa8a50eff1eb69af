/* pbng: Position-Based Nonlinear Gauss-Seidel for quasistatic and dynamic hyperelasticity.
 * Configured through the PETSc options database: pbng -help lists every option. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "app/run.h"

static const char help[] =
  "pbng: large hyperelastic deformations with Position-Based Nonlinear Gauss-Seidel (PBNG).\n"
  "Example: pbng -scene box_stretch_twist -res 32 -frames 10 -output out/box.h5\n\n";

/* The command line as one string, for the output's command_line attribute. */
static void join_command_line(int argc, char **argv, char *buf, size_t len)
{
  buf[0] = 0;
  for (int k = 0; k < argc; ++k) {
    if (k) strncat(buf, " ", len - strlen(buf) - 1);
    strncat(buf, argv[k], len - strlen(buf) - 1);
  }
}

static PetscErrorCode run_command(const char *command_line, int *status)
{
  pbng_config cfg;
  pbng_run_summary summary;
  PetscBool help_only;

  PetscFunctionBeginUser;
  PetscCall(pbng_config_from_options(&cfg));
  PetscCall(PetscOptionsHasHelp(NULL, &help_only));
  if (help_only) {
    PetscCall(pbng_scene_print_help(PETSC_COMM_WORLD));
    PetscFunctionReturn(0);
  }
  PetscCall(pbng_run(PETSC_COMM_WORLD, &cfg, command_line, &summary));
  if (cfg.dry_run) PetscFunctionReturn(0);
  if (summary.stopped_by_signal) {
    *status = PBNG_EXIT_CHECKPOINTED;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "pbng: stopped by signal %d after frame %d; checkpoint %s and partial output %s.partial written;\n"
                          "      continue with the same options plus -restart %s (or -restart auto); exit status %d\n",
                          summary.stopped_by_signal, summary.frames, cfg.checkpoint, cfg.output, cfg.checkpoint, PBNG_EXIT_CHECKPOINTED));
    PetscFunctionReturn(0);
  }
  PetscCall(pbng_run_report(PETSC_COMM_WORLD, &cfg, &summary));
  PetscFunctionReturn(0);
}

/* -failure_timeout as given, else its default: read without raising a PETSc error (which would replace
 * the message being reported), since the options may have failed before the configuration was read. */
static double failure_timeout(void)
{
  char value[64] = "", *end = NULL;
  PetscBool set = PETSC_FALSE;
  if (PetscOptionsGetString(NULL, NULL, "-failure_timeout", value, sizeof value, &set) || !set) return PBNG_FAILURE_TIMEOUT_DEFAULT;
  const double t = strtod(value, &end);
  return end != value && !*end && t > 0 ? t : PBNG_FAILURE_TIMEOUT_DEFAULT;
}

int main(int argc, char **argv)
{
  static char command_line[8192];
  PetscErrorCode ierr;
  int status = 0;

  join_command_line(argc, argv, command_line, sizeof(command_line));
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  /* user errors print one clear line instead of PETSc's traceback */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = run_command(command_line, &status);
  PetscCall(PetscPopErrorHandler());
  if (ierr) {
    pbng_report_errors(PETSC_COMM_WORLD, ierr, failure_timeout(), "pbng"); /* once for the job, not once per rank */
    PetscFinalize();
    return 1;
  }
  PetscCall(PetscFinalize());
  return status;
}
