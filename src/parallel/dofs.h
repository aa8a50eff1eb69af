/* Global numbering of the unknowns for assembled solvers (the Newton baseline, issue 4): every free
 * node (not prescribed, in some element) has one global index; rank r owns the contiguous range
 * [first, first + nowned_free) in local order, and ghosts carry their owner's index. */
#ifndef PBNG_PARALLEL_DOFS_H
#define PBNG_PARALLEL_DOFS_H

#include "parallel/halo.h"

typedef struct {
  int64_t first;      /* global index of this rank's first free node */
  int64_t nglobal;    /* free nodes over all ranks */
  int64_t *node_dof;  /* [nlocal]: global free-node index, or -1 (held) */
} pbng_dof_map;

/* Collective. The halo must be the subdomain's (ghost indices travel like positions). */
PetscErrorCode pbng_dof_map_create(const pbng_dmesh *dm, pbng_halo *halo, pbng_dof_map *map);
PetscErrorCode pbng_dof_map_destroy(pbng_dof_map *map);
/* Frees node_dof (first and nglobal stay): for a level that assembles nothing once its transfer
 * operators are built. */
PetscErrorCode pbng_dof_map_forget_nodes(pbng_dof_map *map);

#endif
