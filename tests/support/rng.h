/* rng.h -- small fixed pseudo-random generators for the randomized tests:
 * the same seed makes the same moves on every run and every machine, so a
 * failure can be replayed.  Each takes a pointer to its state (seed it with
 * a nonzero value) and returns the next number. */
#ifndef TESTS_SUPPORT_RNG_H
#define TESTS_SUPPORT_RNG_H

#include <stdint.h>

/* Marsaglia's xorshift32: returns the new state. */
static inline uint32_t xorshift32(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

/* xorshift64*: a 64-bit xorshift whose output is scrambled by a multiply. */
static inline uint64_t xorshift64star(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}

#endif
