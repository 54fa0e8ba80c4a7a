/* roundrobin.h -- chapter 09: coroutines taking turns, with no event loop.
 *
 * Article 004's exercise 1 (题目1) asks for a TinyEventLoop: add_task(coro)
 * and run_until_complete(), generator "tasks" that yield to let the others
 * run.  Take away its clock and what is left is the heart of every
 * scheduler of coroutines: a queue of the ones ready to go on, and a loop
 * that resumes the first one until it yields, then puts it at the back.
 * This is that heart, over coro.h's coroutines, and nothing else: no
 * futures, no timers, no selector.  A coroutine here may only CORO_YIELD
 * (asyncio.sleep(0)); awaiting a future or another coroutine needs a
 * task (task.h), and is refused as Task refuses a bad yield.
 *
 *     rr_t rr;
 *     rr_init(&rr);
 *     rr_spawn(&rr, coro_init(&a.coro, counter_step, "A", NULL));
 *     rr_spawn(&rr, coro_init(&b.coro, counter_step, "B", NULL));
 *     rr_run(&rr);    // A, B, A, B, ... until both have returned
 *
 * A coroutine may spawn another from inside its step; the new one goes to
 * the back of the queue, behind everything already waiting and in front
 * of the coroutine that spawned it (which is queued again only when its
 * step ends), as a task created by a task runs in asyncio.
 */
#ifndef ROUNDROBIN_H
#define ROUNDROBIN_H

#include "coro.h"

/* How many coroutines may wait at once: a fixed ring keeps this file on
 * one screen (chapter 2's deque grows; this one refuses). */
#define RR_MAX 64

typedef struct rr {
    coro_t *ring[RR_MAX];   /* the ready queue: ring[head], ring[head + 1], ... */
    size_t head;            /* index of the first waiting coroutine */
    size_t count;           /* how many are waiting */
    coro_t *running;        /* the one whose step runs now, or NULL */
    unsigned long steps;    /* steps run so far, every coroutine's */
    unsigned returned;      /* coroutines that returned */
    unsigned failed;        /* coroutines that raised (or were refused) */
    loop_exception_t error; /* the first one's error, when failed > 0 */
} rr_t;

void rr_init(rr_t *rr);

/* add_task(coro): queue c (not started, or suspended at a yield) behind
 * the others.  The scheduler owns c from now on: c->release (if any) is
 * called once c has finished.  -1 with EINVAL (NULL) or ENOSPC (RR_MAX
 * coroutines, the running one included, are there already; c is not
 * queued and still the caller's). */
int rr_spawn(rr_t *rr, coro_t *c);

/* run_until_complete(): step the coroutines in turn until none is left.
 * 0 if each returned; -1 if any raised (rr->failed of them, rr->error the
 * first error), the others having run to their end all the same. */
int rr_run(rr_t *rr);

#endif
