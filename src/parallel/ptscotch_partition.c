#include "parallel/ptscotch_partition.h"
#include <petscmat.h>
#include <scotch/ptscotch.h>
#include <stdlib.h>

/* The graph as a MATMPIADJ matrix, which takes g's rows and adjacency. */
static PetscErrorCode adjacency_matrix(pbng_dist_graph *g, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreateMPIAdj(g->comm, (PetscInt)g->nrows, (PetscInt)g->nglobal, g->start, g->adj, NULL, A));
  g->start = NULL, g->adj = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_partition_ptscotch(pbng_dist_graph *g, int nparts, int32_t *part)
{
  Mat A;
  MatPartitioning mp;
  IS is;
  const PetscInt *where;

  PetscFunctionBeginUser;
  PetscCheck(nparts >= 1 && nparts <= g->nglobal, g->comm, PETSC_ERR_ARG_OUTOFRANGE, "%" PRId64 " nodes cannot be split into %d parts", g->nglobal,
             nparts);
  if (nparts == 1) {
    for (int64_t i = 0; i < g->nrows; ++i) part[i] = 0;
    PetscCall(PetscFree(g->start));
    PetscCall(PetscFree(g->adj));
    PetscCall(PetscFree(g->weight));
    PetscFunctionReturn(0);
  }
  PetscCall(adjacency_matrix(g, &A));
  PetscCall(MatPartitioningCreate(g->comm, &mp));
  PetscCall(MatPartitioningSetAdjacency(mp, A));
  PetscCall(MatPartitioningSetType(mp, MATPARTITIONINGPTSCOTCH));
  PetscCall(MatPartitioningSetNParts(mp, nparts));
  PetscCall(MatPartitioningSetVertexWeights(mp, g->weight)); /* PETSc frees them */
  g->weight = NULL;
  PetscCall(MatPartitioningPTScotchSetStrategy(mp, MP_PTSCOTCH_QUALITY));
  PetscCall(MatPartitioningPTScotchSetImbalance(mp, 0.01));
  /* Scotch's own threads (one per core by default) make its partitions differ from run to run: one thread (its
   * documented variable, read when its context starts), and the random generator reset, the same partition
   * whatever ran before in this process */
  PetscCheck(setenv("SCOTCH_PTHREAD_NUMBER", "1", 1) == 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "cannot set SCOTCH_PTHREAD_NUMBER");
  SCOTCH_randomReset();
  PetscCall(MatPartitioningApply(mp, &is));
  PetscCall(ISGetIndices(is, &where));
  for (int64_t i = 0; i < g->nrows; ++i) part[i] = (int32_t)where[i];
  PetscCall(ISRestoreIndices(is, &where));
  PetscCall(ISDestroy(&is));
  PetscCall(MatPartitioningDestroy(&mp));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}
