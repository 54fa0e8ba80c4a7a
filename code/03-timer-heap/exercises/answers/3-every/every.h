/* every.h (exercise 3) -- a periodic timer, built on loop_call_at.
 *
 * asyncio has no call_every: a periodic task is written as a coroutine,
 * `while True: await asyncio.sleep(interval); work()`, and each sleep
 * starts from the time the last one ended, so the period stretches by
 * whatever the loop was late each time.  This one does not stretch: run k
 * (k = 1, 2, 3, ...) is due at
 *
 *     start + k * interval        (start: loop_time() at every_start)
 *
 * computed from k each time, never by adding interval to the last
 * deadline, so neither late wake-ups nor rounding accumulate.
 *
 * If the loop falls so far behind that some of those times have already
 * passed when a run ends, they are skipped, not run in a burst: the next
 * run is the first k whose time is later than loop_time(), and the number
 * skipped is added to `missed` (a metronome that lost a beat does not
 * play it twice).
 *
 * The caller owns the every_t and must keep it valid until its last run
 * (or until the loop is closed).  No handle is returned: this stage has
 * no handle_cancel (chapter 05 adds it).  To stop early, the callback may
 * lower e->count to e->runs.
 */
#ifndef EVERY_H
#define EVERY_H

#include "loop.h"

typedef struct every {
    loop_t *loop;
    loop_callback callback;
    void *arg;
    double start;    /* loop_time() when every_start was called */
    double interval; /* seconds, > 0 */
    long count;      /* how many runs in all */
    long runs;       /* runs made so far (callbacks called) */
    long k;          /* the next run (or the one in progress) is due at start + k * interval */
    long missed;     /* times skipped because the loop was late by an interval or more */
} every_t;

/* Call callback(loop, arg) `count` times, at start + k * interval.
 * 0, or -1 with errno EINVAL (interval not finite or <= 0, count < 1,
 * a NULL callback or e) or the error of loop_call_at (closed loop, ENOMEM). */
int every_start(every_t *e, loop_t *loop, double interval, long count,
                loop_callback callback, void *arg);

#endif
