#include "problem/hierarchy.h"
#include <string.h>

PetscErrorCode pbng_hierarchy_destroy(pbng_hierarchy *h)
{
  PetscFunctionBeginUser;
  for (int l = 0; h->coarse && l < h->nlevels - 1; ++l) {
    PetscCall(pbng_problem_destroy(&h->coarse[l].pb));
    PetscCall(pbng_halo_destroy(&h->coarse[l].halo));
    PetscCall(pbng_dmesh_destroy(&h->coarse[l].dm));
  }
  PetscCall(PetscFree(h->coarse));
  memset(h, 0, sizeof(*h));
  PetscFunctionReturn(0);
}
