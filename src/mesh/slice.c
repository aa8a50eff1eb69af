#include "mesh/slice.h"
#include <string.h>

PetscErrorCode pbng_mesh_slice_destroy(pbng_mesh_slice *s)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(s->X));
  PetscCall(PetscFree(s->elems));
  memset(s, 0, sizeof(*s));
  PetscFunctionReturn(0);
}
