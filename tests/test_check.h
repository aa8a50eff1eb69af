/* The value checks and the random numbers of the C unit tests that compare numbers (included). */
#ifndef PBNG_TESTS_TEST_CHECK_H
#define PBNG_TESTS_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>

static int failures, checks;

/* Counts a check; prints what failed with the two values compared. */
static void check(int ok, const char *what, double a, double b)
{
  ++checks;
  if (!ok) {
    ++failures;
    printf("FAIL: %s (%.12g vs %.12g)\n", what, a, b);
  }
}

/* xorshift64: uniform in [0, 1). */
static double next_random(uint64_t *s)
{
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return (double)(*s >> 11) / 9007199254740992.0;
}

#endif
