/* Large arrays on transparent huge pages: a PBNG sweep reads its element records and positions
 * all over a multi-megabyte range, where 4 KiB pages cost a TLB miss per access (worse in VMs).
 * Anonymous mappings aligned to 2 MiB with MADV_HUGEPAGE (malloc's heap may not honour it: Open MPI
 * disables malloc's own mmap). */
#ifndef PBNG_CORE_HUGEALLOC_H
#define PBNG_CORE_HUGEALLOC_H

#include <stddef.h>

/* size bytes, zero-filled, 2 MiB aligned; NULL when out of memory. Release with pbng_huge_free
 * and the same size. */
void *pbng_huge_alloc(size_t size);
void pbng_huge_free(void *p, size_t size);

#endif
