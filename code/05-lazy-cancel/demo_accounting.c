/* demo_accounting.c -- CPython's accounting over a cancel-heavy workload,
 * tick by tick, on the virtual clock.
 *
 * Every 0.1 s a driver schedules 20 timeouts 5 s ahead and cancels 18 of
 * the 20 it scheduled one tick before (their replies came).  The wait hook
 * prints, at each tick, the time the tick runs at and, as step 1 left
 * them, how many timers the heap holds and
 * how many of them are counted as cancelled: the heap grows by 20 and the
 * count by 18 per tick until, at the top of a tick, more than 100 are
 * scheduled and more than half are cancelled; step 1 then rebuilds the heap
 * with the live ones only, and the count starts again from 0.
 */
#include "loop.h"

#include <stdio.h>

#define PER_TICK 20
#define TICKS 16

static handle_t *previous[PER_TICK]; /* the last tick's timeouts */
static size_t before;                /* heap length before this tick's step 1 */

static void timeout(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

/* @region driver */
static void driver(loop_t *loop, void *arg)
{
    int *n = arg;
    for (int i = 0; i < PER_TICK; i++) {
        if (previous[i] != NULL && i >= 2) /* 18 replies: cancel their timeouts */
            handle_cancel(previous[i]);
        previous[i] = loop_call_later(loop, 5, timeout, NULL);
    }
    if (++*n < TICKS)
        loop_call_later(loop, 0.1, driver, n);
    before = loop_scheduled_len(loop);
}
/* @end driver */

static double hook(loop_t *loop, double timeout, void *ctx)
{
    int *ticks = ctx;
    size_t len = loop_scheduled_len(loop), count = loop_timer_cancelled_count(loop);
    if (timeout > 0)
        loop_set_time(loop, loop_time(loop) + timeout);
    printf("tick %2d  t=%.1f  scheduled=%3zu  cancelled=%3zu%s\n", ++*ticks, loop_time(loop),
           len, count, len + 1 < before ? "   <- step 1 rebuilt the heap" : "");
    if (*ticks == TICKS + 1 || timeout < 0)
        loop_stop(loop);
    return 0;
}

int main(void)
{
    loop_t *loop = loop_new_virtual();
    int n = 0, ticks = 0;
    if (loop == NULL)
        return 1;
    loop_set_wait_hook(loop, hook, &ticks);
    loop_call_soon(loop, driver, &n);
    loop_run_forever(loop);
    loop_close(loop);
    loop_free(loop);
    return 0;
}
