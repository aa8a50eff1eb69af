/* libFuzzer harness: the pbng option parser (pbng_config_from_options) on an arbitrary option string,
 * as PETSc would receive it on the command line. -options_file, -help and the -log/-malloc debugging
 * options are removed from the input first (they read files or print), and so are -prefix_push and
 * -prefix_pop and the -options_* / yaml options (PETSc's own meta-options, which PETSc 3.18 leaks on when
 * they fail: not pbng's code). */
#include <ctype.h>
#include <string.h>
#include "app/config.h"
#include "fuzz_common.h"


static void blank_out(char *s, const char *word)
{
  for (char *p = strstr(s, word); p; p = strstr(p, word)) memset(p, ' ', strlen(word));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *s = malloc(size + 1);
  pbng_config cfg;
  memcpy(s, data, size);
  s[size] = 0;
  for (size_t k = 0; k < size; ++k) /* PETSc matches option names case-insensitively: so does the ban */
    s[k] = s[k] == 0 ? ' ' : (char)tolower((unsigned char)s[k]);
  static const char *const banned[] = {"options_file", "help", "-log", "-malloc", "-info", "-on_error", "-skip_petscrc", "-objects_dump",
                                       "-memory_view", "-check_pointer", "-stop_for_debugger", "-start_in_debugger", "-debugger", "-fp_trap", "-prefix_push", "-prefix_pop", "options_", "yaml"};
  for (size_t k = 0; k < sizeof(banned) / sizeof(banned[0]); ++k) blank_out(s, banned[k]);
  PetscOptionsClear(NULL);
  if (PetscOptionsInsertString(NULL, s) == 0) (void)pbng_config_from_options(&cfg);
  PetscOptionsClear(NULL);
  free(s);
  return 0;
}

/* PETSc and MPI set up; one input run first so that the MPI runtime's lazy allocations (on the first
 * collective call) are not taken for leaks of the first fuzzed input. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  static const char warmup[] = "-scene box -res 3";
  fuzz_init(argc, argv);
  return LLVMFuzzerTestOneInput((const uint8_t *)warmup, sizeof(warmup) - 1);
}
