/* libFuzzer harness: the TetGen reader. The input is split at the first 0xff byte (or in half) into a
 * .node and an .ele file. */
#include <string.h>
#include "fuzz_common.h"
#include "mesh/mesh.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char node[64], ele[64], base[64];
  pbng_mesh mesh;
  const uint8_t *cut = memchr(data, 0xff, size);
  const size_t n = cut ? (size_t)(cut - data) : size / 2, rest = cut ? size - n - 1 : size - n;
  snprintf(base, sizeof(base), "/tmp/pbng-fuzz-%d", (int)getpid());
  fuzz_write_file(data, n, ".node", node, sizeof(node));
  fuzz_write_file(data + size - rest, rest, ".ele", ele, sizeof(ele));
  memset(&mesh, 0, sizeof(mesh));
  if (pbng_mesh_read(node, &mesh) == 0) pbng_mesh_destroy(&mesh);
  unlink(node);
  unlink(ele);
  return 0;
}

/* PETSc and MPI set up; one input run first so that the MPI runtime's lazy allocations (on the first
 * collective call) are not taken for leaks of the first fuzzed input. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  static const char warmup[] = "1 3 0 0\n1 0 0 0\n\xff" "1 4 0\n";
  fuzz_init(argc, argv);
  return LLVMFuzzerTestOneInput((const uint8_t *)warmup, sizeof(warmup) - 1);
}
