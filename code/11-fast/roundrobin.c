/* roundrobin.c -- chapter 09: a round-robin scheduler of coroutines (see
 * roundrobin.h).  The queue is a ring: pop at the head, push at the tail.
 */
#include "roundrobin.h"

#include <errno.h>
#include <string.h>

void rr_init(rr_t *rr)
{
    memset(rr, 0, sizeof *rr);
}

int rr_spawn(rr_t *rr, coro_t *c)
{
    if (rr == NULL || c == NULL) {
        errno = EINVAL;
        return -1;
    }
    /* The running coroutine's slot stays free for it: it goes back in the
     * queue when its step ends (asyncio.current_task() is never lost). */
    if (rr->count + (rr->running != NULL) == RR_MAX) {
        errno = ENOSPC;
        return -1;
    }
    rr->ring[(rr->head + rr->count) % RR_MAX] = c;
    rr->count++;
    return 0;
}

static coro_t *pop(rr_t *rr)
{
    coro_t *c = rr->ring[rr->head];
    rr->head = (rr->head + 1) % RR_MAX;
    rr->count--;
    return c;
}

/* A coroutine that awaited a future or called another coroutine wants
 * something only a task can give it.  Task.__step says
 * RuntimeError(f'Task got bad yield: {result!r}') and throws it in; a
 * coroutine here could not catch it anyway, so it simply finishes with it. */
static coro_status bad_yield(coro_t *c)
{
    const char *what = c->awaiting != NULL ? "a future" : "a coroutine";
    c->awaiting = NULL;
    c->inner = NULL;
    c->state = -1;
    return coro_raise(c, "RuntimeError", "%s(): round robin got bad yield: it awaited %s",
                      c->name != NULL ? c->name : "coro", what);
}

/* The coroutine is done with: count its outcome and let it go. */
static void finish(rr_t *rr, coro_t *c, coro_status status)
{
    if (status == CORO_RETURNED) {
        rr->returned++;
    } else if (rr->failed++ == 0) {
        rr->error = c->error;
    }
    if (c->release != NULL)
        c->release(c);
}

/* @region run */
int rr_run(rr_t *rr)
{
    while (rr->count > 0) {
        coro_t *c = rr->running = pop(rr);
        coro_status status = c->step(c); /* coro.send(None): run to the next yield */
        rr->running = NULL;
        rr->steps++;
        if (status == CORO_SUSPENDED && (c->awaiting != NULL || c->inner != NULL))
            status = bad_yield(c);
        if (status == CORO_SUSPENDED)
            rr_spawn(rr, c); /* its turn is over: to the back (its slot was kept) */
        else
            finish(rr, c, status);
    }
    return rr->failed == 0 ? 0 : -1;
}
/* @end run */
