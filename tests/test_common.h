/* Helpers shared by the C unit tests (included, not a test itself). */
#ifndef PBNG_TESTS_TEST_COMMON_H
#define PBNG_TESTS_TEST_COMMON_H

#include "mesh/boundary.h"
#include "parallel/halo.h"
#include "parallel/partition.h"

/* Every rank holds the same global mesh; each colors and partitions it over the communicator alike
 * and cuts its own piece: subdomain and halo plan, with bcs assigned. The mesh is destroyed. */
static inline PetscErrorCode test_build_subdomain(MPI_Comm comm, pbng_mesh *mesh, const pbng_bc_list *bcs, pbng_dmesh *dm, pbng_halo *halo)
{
  pbng_node_elements adj;
  pbng_submesh sub;
  int32_t *color, *part;
  int8_t *node_bc;
  int ncolors, rank, size;
  int64_t selected[PBNG_MAX_BC];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscMalloc2(mesh->nnodes, &color, mesh->nnodes, &part));
  PetscCall(pbng_node_elements_build(mesh, &adj));
  PetscCall(pbng_color_nodes(mesh, &adj, color, &ncolors));
  PetscCall(pbng_partition_nodes(mesh, &adj, size, part));
  PetscCall(pbng_node_elements_destroy(&adj));
  PetscCall(pbng_submesh_extract(mesh, color, ncolors, NULL, part, rank, &sub));
  PetscCall(PetscMalloc1(sub.mesh.nnodes + 1, &node_bc));
  PetscCall(pbng_bc_assign(bcs, &sub.mesh, pbng_mesh_extent(mesh), node_bc, selected));
  PetscCall(pbng_dmesh_create(comm, &sub, node_bc, dm));
  PetscCall(pbng_halo_create(dm, halo));
  PetscCall(PetscFree(node_bc));
  PetscCall(pbng_submesh_destroy(&sub));
  PetscCall(PetscFree2(color, part));
  PetscCall(pbng_mesh_destroy(mesh));
  PetscFunctionReturn(0);
}

#endif
