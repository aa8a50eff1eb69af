#include "parallel/dofs.h"
#include <string.h>

PetscErrorCode pbng_dof_map_create(const pbng_dmesh *dm, pbng_halo *halo, pbng_dof_map *map)
{
  int64_t mine = dm->nfree;
  double *carrier; /* three doubles per local node, the first holding the index (exact below 2^53) */

  PetscFunctionBeginUser;
  memset(map, 0, sizeof(*map));
  PetscCallMPI(MPI_Exscan(&mine, &map->first, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  if (dm->rank == 0) map->first = 0;
  PetscCallMPI(MPI_Allreduce(&mine, &map->nglobal, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  PetscCall(PetscMalloc1(dm->nlocal + 1, &map->node_dof));
  PetscCall(PetscCalloc1(3 * (int64_t)dm->nlocal + 1, &carrier));
  for (int32_t i = 0; i < dm->nlocal; ++i) carrier[3 * i] = -1.0;
  for (int32_t i = 0; i < dm->nfree; ++i) carrier[3 * i] = (double)(map->first + i); /* owned free nodes come first */
  PetscCall(pbng_halo_exchange(halo, -1, carrier)); /* free ghosts receive their owners' indices */
  for (int32_t i = 0; i < dm->nlocal; ++i) map->node_dof[i] = (int64_t)carrier[3 * i];
  PetscCall(PetscFree(carrier));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_dof_map_destroy(pbng_dof_map *map)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(map->node_dof));
  memset(map, 0, sizeof(*map));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_dof_map_forget_nodes(pbng_dof_map *map)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(map->node_dof));
  PetscFunctionReturn(0);
}
