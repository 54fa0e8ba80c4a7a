/* vloop.h -- a loop on the virtual clock for tests that count ticks.
 *
 * virtual_loop() makes one (loop_new_virtual) and installs counting_hook
 * as its wait hook, which the loop calls once per tick: the hook counts the
 * tick in `ticks`, keeps the timeout the loop asked for in
 * timeouts[tick - 1], jumps the clock by that timeout as the default hook
 * does, and with nothing to wait for (timeout -1) stops the loop instead of
 * blocking, so that no test can hang.  It also empties the labels.h log.
 * finish() closes the loop (which must succeed) and frees it. */
#ifndef TESTS_SUPPORT_VLOOP_H
#define TESTS_SUPPORT_VLOOP_H

#include "loop.h"
#include "labels.h"

#include <check.h>

#define VLOOP_MAX_TIMEOUTS 256
static int ticks;
static double timeouts[VLOOP_MAX_TIMEOUTS];

static inline double counting_hook(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    if (ticks < VLOOP_MAX_TIMEOUTS)
        timeouts[ticks] = timeout;
    ticks++;
    if (timeout < 0)
        loop_stop(loop); /* nothing left to wait for: end the run, do not block */
    else
        ck_assert_int_eq(loop_set_time(loop, loop_time(loop) + timeout), 0);
    return 0;
}

static inline loop_t *virtual_loop(void)
{
    loop_t *loop = loop_new_virtual();
    ck_assert_ptr_nonnull(loop);
    loop_set_wait_hook(loop, counting_hook, NULL);
    labels_reset();
    ticks = 0;
    return loop;
}

static inline void finish(loop_t *loop)
{
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}

#endif
