/* Global unknown numbering over ranks (run on 1 rank by ctest and on 3 by test_dofs.sh): every free
 * node has exactly one index in 0..n-1, owned ranges are contiguous per rank, and every ghost carries
 * its owner's index (held nodes: -1). */
#include <stdio.h>
#include "mesh/boundary.h"
#include "mesh/generate.h"
#include "parallel/dofs.h"
#include "parallel/partition.h"

static int checks, failures;

static void check(int ok, const char *what)
{
  ++checks;
  if (!ok && failures++ < 10) printf("FAIL: %s\n", what);
}

/* Every rank builds the same global mesh, coloring and partition, and cuts its own piece. */
static PetscErrorCode build(MPI_Comm comm, pbng_dmesh *dm, pbng_halo *halo, pbng_bc_list *bcs)
{
  pbng_mesh mesh;
  pbng_node_elements adj;
  pbng_submesh sub;
  int32_t *color, *part;
  int8_t *node_bc;
  int ncolors, rank, size;
  int64_t selected[PBNG_MAX_BC];
  const double clamp[6] = {0, 0, 0, 0, 1, 1};

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(pbng_generate_res_box(7, &mesh));
  PetscCall(PetscMalloc2(mesh.nnodes, &color, mesh.nnodes, &part));
  PetscCall(pbng_node_elements_build(&mesh, &adj));
  PetscCall(pbng_color_nodes(&mesh, &adj, color, &ncolors));
  PetscCall(pbng_partition_nodes(&mesh, &adj, color, ncolors, size, part));
  PetscCall(pbng_node_elements_destroy(&adj));
  PetscCall(pbng_submesh_extract(&mesh, color, ncolors, part, rank, &sub));
  PetscCall(PetscMemzero(bcs, sizeof(*bcs)));
  PetscCall(pbng_bc_add_box(bcs, "clamp", clamp, NULL));
  PetscCall(PetscMalloc1(sub.mesh.nnodes, &node_bc));
  PetscCall(pbng_bc_assign(bcs, &sub.mesh, pbng_mesh_extent(&mesh), node_bc, selected));
  PetscCall(pbng_dmesh_create(comm, &sub, node_bc, dm));
  PetscCall(pbng_halo_create(dm, halo));
  PetscCall(PetscFree(node_bc));
  PetscCall(pbng_submesh_destroy(&sub));
  PetscCall(PetscFree2(color, part));
  PetscCall(pbng_mesh_destroy(&mesh));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_numbering(const pbng_dmesh *dm, const pbng_dof_map *map)
{
  int size;
  int64_t *owner_dof; /* global node -> dof as its owner numbered it (-1 held) */
  int64_t *mine, *all, nall = 0;
  int *counts, *displs, n = 2 * dm->nowned;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(dm->comm, &size));
  PetscCall(PetscMalloc3(size, &counts, size, &displs, 2 * dm->nowned + 1, &mine));
  for (int32_t i = 0; i < dm->nowned; ++i) mine[2 * i] = dm->global_node[i], mine[2 * i + 1] = map->node_dof[i];
  PetscCallMPI(MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, dm->comm));
  for (int r = 0; r < size; ++r) displs[r] = (int)nall, nall += counts[r];
  PetscCall(PetscMalloc1(nall + 1, &all));
  PetscCallMPI(MPI_Allgatherv(mine, n, MPI_INT64_T, all, counts, displs, MPI_INT64_T, dm->comm));
  PetscCall(PetscMalloc1(dm->nglobal_nodes, &owner_dof));
  int64_t *seen;
  PetscCall(PetscCalloc1(map->nglobal + 1, &seen));
  for (int64_t k = 0; k < nall; k += 2) {
    owner_dof[all[k]] = all[k + 1];
    if (all[k + 1] >= 0) {
      check(all[k + 1] < map->nglobal, "index in range");
      if (all[k + 1] < map->nglobal) seen[all[k + 1]]++;
    }
  }
  for (int64_t d = 0; d < map->nglobal; ++d) check(seen[d] == 1, "every index used exactly once");
  check(nall / 2 == dm->nglobal_nodes, "every node owned once");
  for (int32_t i = 0; i < dm->nfree; ++i) check(map->node_dof[i] == map->first + i, "owned free nodes contiguous");
  for (int32_t i = dm->nowned; i < dm->nlocal; ++i)
    check(map->node_dof[i] == (dm->node_bc[i] >= 0 ? -1 : owner_dof[dm->global_node[i]]), "ghost carries its owner's index");
  PetscCall(PetscFree(seen));
  PetscCall(PetscFree(owner_dof));
  PetscCall(PetscFree(all));
  PetscCall(PetscFree3(counts, displs, mine));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  pbng_dmesh dm;
  pbng_halo halo;
  pbng_bc_list bcs;
  pbng_dof_map map;
  int rank, all_failures;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(build(PETSC_COMM_WORLD, &dm, &halo, &bcs));
  PetscCall(pbng_dof_map_create(&dm, &halo, &map));
  PetscCall(check_numbering(&dm, &map));
  PetscCallMPI(MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (rank == 0) printf("test_dofs: %d checks on rank 0, %d failed on all ranks\n", checks, all_failures);
  PetscCall(pbng_dof_map_destroy(&map));
  PetscCall(pbng_halo_destroy(&halo));
  PetscCall(pbng_dmesh_destroy(&dm));
  PetscCall(PetscFinalize());
  return all_failures != 0;
}
