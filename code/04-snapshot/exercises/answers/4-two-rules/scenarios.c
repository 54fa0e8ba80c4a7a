/* scenarios.c -- exercise 04.4 (worked answer): one scenario per difference
 * between asyncio's rules and article 000's MiniLoop rules.  The answers to
 * chapter 04 explain each. */

/* @region reordered */
/* MiniLoop's first wait ignores the ready `a` and sleeps until the timer;
 * the byte at 5 ms cuts it short and queues x behind a, before b. */
const char *const reordered =
    "soon a\n"
    "  soon b\n"
    "later 0.01 t\n"
    "io 0.005 x\n";
/* @end reordered */

/* @region lost */
/* Nothing ready, no timer: MiniLoop.run's `while self._ready or
 * self._scheduled` is false at once, and the byte is never waited for. */
const char *const lost =
    "io 1 x\n";
/* @end lost */

/* @region extra_tick */
/* 0.2 + 0.1 is 0.30000000000000004: within clock_resolution of the wait's
 * end for asyncio (due with `exact`), one ulp late for `when <= now`. */
const char *const extra_tick =
    "at 0.2 p\n"
    "  later 0.1 sum\n"
    "  at 0.3 exact\n";
/* @end extra_tick */
