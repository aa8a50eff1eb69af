#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MADV_HUGEPAGE */
#include "core/hugealloc.h"
#include <stdint.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

static size_t round_up(size_t size) { return (size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE; }

void *pbng_huge_alloc(size_t size)
{
  const size_t len = round_up(size > 0 ? size : 1);
  char *raw = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  char *p = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
  if (p > raw) munmap(raw, (size_t)(p - raw)); /* trim to an aligned mapping of len bytes */
  if (raw + len + HUGE_PAGE > p + len) munmap(p + len, (size_t)(raw + len + HUGE_PAGE - (p + len)));
#ifdef MADV_HUGEPAGE
  madvise(p, len, MADV_HUGEPAGE); /* advice only: without it the memory is still valid */
#endif
  return p;
}

void pbng_huge_free(void *p, size_t size)
{
  if (p) munmap(p, round_up(size > 0 ? size : 1));
}
