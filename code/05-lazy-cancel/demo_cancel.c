/* demo_cancel.c -- every case of handle_cancel() that loop.h promises is
 * safe, on the virtual clock.  Each line says what was done and what the
 * loop's accounting (loop_scheduled_len, loop_timer_cancelled_count) says
 * right after; the wait hook prints the same at each tick, as step 1 (the
 * cleanup) left it, with the time the tick's callbacks run at.  Run it under valgrind or ASan: the
 * point is also that nothing is touched after it was freed.
 */
#include "loop.h"

#include <stdio.h>

static void show(loop_t *loop, const char *what)
{
    printf("%-52s scheduled=%zu cancelled=%zu\n", what, loop_scheduled_len(loop),
           loop_timer_cancelled_count(loop));
}

static double tick_hook(loop_t *loop, double timeout, void *ctx)
{
    int *ticks = ctx;
    char line[64];
    if (timeout < 0)
        loop_stop(loop); /* nothing left to wait for */
    else
        loop_set_time(loop, loop_time(loop) + timeout);
    snprintf(line, sizeof line, "-- tick %d at %.1f s, after step 1", ++*ticks,
             loop_time(loop));
    show(loop, line);
    return 0;
}

/* @region callbacks */
static void say(loop_t *loop, void *arg)
{
    (void)loop;
    printf("   %s runs\n", (const char *)arg);
}

/* D's callback gets its own handle through this pointer. */
static handle_t *d_handle;

static void cancel_self(loop_t *loop, void *arg)
{
    (void)arg;
    handle_cancel(d_handle); /* valid: the handle is running */
    printf("   D runs and cancels itself: cancelled=%d, a running timer is not counted\n",
           handle_cancelled(d_handle));
    (void)loop;
}

static handle_t *e2_handle;

static void cancel_e2(loop_t *loop, void *arg)
{
    (void)arg;
    handle_cancel(e2_handle); /* valid: E2 is queued, it has not run */
    show(loop, "   E1 runs and cancels E2 (queued in the same tick)");
}
/* @end callbacks */

int main(void)
{
    loop_t *loop = loop_new_virtual();
    int ticks = 0;
    if (loop == NULL)
        return 1;
    loop_set_wait_hook(loop, tick_hook, &ticks);

    /* @region main */
    /* 1. Cancel before it runs: the borrowed pointer is enough. */
    handle_t *a = loop_call_later(loop, 1, say, "A");
    handle_cancel(a);
    show(loop, "A (at 1 s) cancelled before it ran");

    /* 2. Cancel after it ran: only a kept handle may be touched then. */
    handle_t *b = loop_call_later(loop, 0.5, say, "B");
    handle_retain(b);
    show(loop, "B (at 0.5 s) scheduled and kept");

    /* 3. Cancel twice: counted once. */
    handle_t *c = loop_call_later(loop, 3, say, "C");
    handle_cancel(c);
    handle_cancel(c);
    show(loop, "C (at 3 s) cancelled twice");

    /* 4. Cancel from inside its own callback. */
    d_handle = loop_call_later(loop, 2, cancel_self, NULL);

    /* 5. Cancel another callback of the same tick. */
    e2_handle = loop_call_at(loop, 2.5, say, "E2");
    loop_call_at(loop, 2.5, cancel_e2, NULL); /* E1: equal deadlines, heapq's order */
    show(loop, "D (at 2 s), E1 and E2 (at 2.5 s) scheduled");

    loop_run_forever(loop);

    handle_cancel(b); /* it ran at 0.5 s; kept, so still valid */
    printf("B cancelled after it ran: cancelled=%d\n", handle_cancelled(b));
    handle_release(b); /* now the loop may free it: it is freed here */
    show(loop, "B released");
    /* @end main */

    loop_close(loop);
    loop_free(loop);
    return 0;
}
