#include "mesh/slice.h"
#include <string.h>

PetscErrorCode pbng_mesh_slice_name_sets(pbng_mesh_slice *s, int nsets, const char (*names)[64])
{
  PetscFunctionBeginUser;
  PetscCheck(s->nsets == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s: the slice's node sets are named already", s->source);
  s->nsets = nsets, s->set_words = (nsets + 63) / 64;
  PetscCall(PetscMalloc1(nsets + 1, &s->set_name));
  if (nsets > 0) memcpy(s->set_name, names, sizeof(*s->set_name) * (size_t)nsets);
  PetscCall(PetscCalloc1((size_t)(s->node_end - s->node_begin) * (size_t)s->set_words + 1, &s->set_mask));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_slice_weak_rows(const pbng_mesh_slice *s, int32_t **rows)
{
  const int64_t n = s->weak_end - s->weak_begin;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(n * PBNG_WC_MAX_NODES + 1, rows));
  pbng_weak_constraint_node_rows(n, s->weak, *rows);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_slice_destroy(pbng_mesh_slice *s)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(s->weak));
  PetscCall(PetscFree(s->X));
  PetscCall(PetscFree(s->elems));
  PetscCall(PetscFree(s->set_name));
  PetscCall(PetscFree(s->set_mask));
  memset(s, 0, sizeof(*s));
  PetscFunctionReturn(0);
}
