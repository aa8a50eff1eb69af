/* Shared by the libFuzzer harnesses (tests/fuzz/, built with -DPBNG_FUZZ=ON by tests/test_fuzz.sh):
 * PETSc (and MPI, as a singleton) initialised once, errors returned silently instead of printed. */
#ifndef PBNG_FUZZ_COMMON_H
#define PBNG_FUZZ_COMMON_H

#include <petscsys.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline int fuzz_init(int *argc, char ***argv)
{
  static char *args[] = {"fuzz", NULL};
  int n = 1;
  char **a = args;
  (void)argc, (void)argv;
  if (PetscInitialize(&n, &a, NULL, NULL)) abort();
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  return 0;
}

/* Writes the input to a private file with the given suffix (the readers take paths); returns its path
 * in buf. */
static inline void fuzz_write_file(const uint8_t *data, size_t size, const char *suffix, char *buf, size_t len)
{
  snprintf(buf, len, "/tmp/pbng-fuzz-%d%s", (int)getpid(), suffix);
  FILE *f = fopen(buf, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
}

#endif
