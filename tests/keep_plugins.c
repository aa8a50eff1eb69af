/* Linked only into the sanitizer and fuzz builds (-DPBNG_SANITIZE=ON, -DPBNG_FUZZ=ON), never into a
 * release: replaces libc's dlclose, for every library of the program, by a no-op.
 *
 * The MPI runtime unloads the plugins it did not select (Open MPI 4.1 as Debian packages it has no
 * option to keep them). What such a plugin allocated and kept would then be reported by LeakSanitizer
 * from an "<unknown module>", which no suppression can name. With the plugins kept loaded their
 * allocations keep their module's name, tests/lsan.supp suppresses them, and a leak whose stack holds
 * only pbng, PETSc or HDF5 frames is still reported. */
#include <dlfcn.h>

int dlclose(void *handle)
{
  (void)handle;
  return 0;
}
