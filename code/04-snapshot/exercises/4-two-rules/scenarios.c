/* scenarios.c -- exercise 04.4 (starter): scenarios that tell the two rule
 * sets apart.
 *
 * Write three scenarios (appendix C's language, one C string each; "\n"
 * ends a line, two spaces indent a child) for the stage's trace program,
 * each of which shows one difference between asyncio's rules and article
 * 000's MiniLoop rules (trace --rules=miniloop; loop_set_rules in loop.h):
 *
 *   reordered:   both run the same callbacks, but not in the same order;
 *   lost:        a callback runs under asyncio's rules and never under
 *                MiniLoop's;
 *   extra_tick:  both print the same labels in the same order at the same
 *                times, but not in the same ticks.
 *
 * Try each one with build/04-snapshot/trace (both ways) before running the
 * tests.  TODO(4-two-rules): write the three scenarios.
 */
const char *const reordered =
    "";

const char *const lost =
    "";

const char *const extra_tick =
    "";
