/* libFuzzer harness: the Gmsh reader (MSH 2.2 / 4.1, ASCII and binary) on arbitrary bytes. Any crash,
 * sanitizer report, leak or hang is a failure; errors are the expected outcome for most inputs. */
#include "fuzz_common.h"
#include "mesh/mesh.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char path[64];
  pbng_mesh mesh;
  fuzz_write_file(data, size, ".msh", path, sizeof(path));
  memset(&mesh, 0, sizeof(mesh));
  if (pbng_mesh_read(path, &mesh) == 0) pbng_mesh_destroy(&mesh);
  unlink(path);
  return 0;
}

/* PETSc and MPI set up; one input run first so that the MPI runtime's lazy allocations (on the first
 * collective call) are not taken for leaks of the first fuzzed input. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  static const char warmup[] = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";
  fuzz_init(argc, argv);
  return LLVMFuzzerTestOneInput((const uint8_t *)warmup, sizeof(warmup) - 1);
}
