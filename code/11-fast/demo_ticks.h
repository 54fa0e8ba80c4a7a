/* demo_ticks.h -- chapter 09's demos: a virtual loop that counts its
 * ticks, and print() with the time and the tick in front.
 *
 * Where order matters, a demo prints each line as
 *     " 1.000  tick  3  World"
 * the loop's virtual time and the number of ticks so far.  The ticks are
 * counted where the loop waits, once per tick -- the wait hook of
 * loop_new_virtual (loop.h), which this hook replaces and imitates: it
 * moves the clock by the timeout, as the default hook would.  The Python
 * twins (tests/conformance/runs/virtual_loop.py) count in the same place,
 * their selector's select(), so "tick 3" means the same thing on both
 * sides and the outputs can be compared line for line.  One counter for
 * the program: demo_loop() starts it again at 0 for each new loop.
 */
#ifndef DEMO_TICKS_H
#define DEMO_TICKS_H

#include "task.h"

#include <stdarg.h>
#include <stdio.h>

static int ticks;

static inline double count_tick(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    ticks++;
    if (timeout > 0)
        loop_set_time(loop, loop_time(loop) + timeout);
    else if (timeout < 0)
        loop_stop(loop); /* nothing could ever wake it: a bug in the demo */
    return 0;
}

/* loop_new_virtual(), its ticks counted from 0. */
static inline loop_t *demo_loop(void)
{
    loop_t *loop = loop_new_virtual();
    if (loop != NULL)
        loop_set_wait_hook(loop, count_tick, NULL);
    ticks = 0;
    return loop;
}

/* print(...), with the loop's time and tick in front. */
static inline void say(loop_t *loop, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void say(loop_t *loop, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%6.3f  tick %2d  ", loop_time(loop), ticks);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
}

#endif
