/* Growable arrays: the one way pbng grows an array it fills item by item (PETSc's allocator, so PetscFree frees
 * them; no MPI calls). */
#ifndef PBNG_CORE_GROW_H
#define PBNG_CORE_GROW_H

#include <petscsys.h>
#include <stdint.h>

/* The capacity that holds `need` items, from `cap`: cap itself when it does, else at least twice it (16 at first). */
static inline int64_t pbng_grown_capacity(int64_t need, int64_t cap)
{
  if (need <= cap) return cap;
  int64_t c = cap < 8 ? 16 : 2 * cap;
  while (c < need) c *= 2;
  return c;
}

/* Room for `need` items of `size` bytes in the array whose pointer is at `items` (capacity *cap items, grown by
 * pbng_grown_capacity): the items kept, new ones not initialised. A NULL array starts one. */
static inline PetscErrorCode pbng_grow(void *items, size_t size, int64_t need, int64_t *cap)
{
  const int64_t c = pbng_grown_capacity(need, *cap);

  PetscFunctionBegin;
  if (c == *cap) PetscFunctionReturn(0);
  PetscCall(PetscRealloc(size * (size_t)c, items));
  *cap = c;
  PetscFunctionReturn(0);
}

#endif
