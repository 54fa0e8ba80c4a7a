/* demo_never_retrieved.c -- chapter 09: what the loop says when the last
 * reference to a future goes, and what retrieving the error changes.
 *
 * CPython says it in Future.__del__ and Task.__del__, through the loop's
 * exception handler:
 *   - a future (or task) that finished with an error nobody looked at:
 *     "Future exception was never retrieved" / "Task exception ...";
 *   - a task that never finished: "Task was destroyed but it is pending!".
 * Looking at the error once -- result(), exception(), or awaiting the
 * future, which calls result() -- is enough to silence the first.  Here a
 * reference count reaching zero is __del__; in the Python twin
 * (tests/conformance/runs/never-retrieved.py) `del` and gc.collect() make
 * the moment the same on every run.  The default handler writes to stdout,
 * so its lines come in order with the others.
 */
#include "demo_ticks.h"

#include <stdio.h>
#include <string.h>

/* @region coroutines */
static coro_status boom_step(coro_t *c)
{
    CORO_BEGIN(c);
    say(loop_get_running_loop(), "boom: raise RuntimeError('boom')");
    CORO_RAISE(c, "RuntimeError", "boom");
    CORO_END(c);
}

typedef struct awaiter {
    coro_t coro;
    task_t *task; /* the task it awaits (the caller's reference) */
} awaiter_t;

/* try: await task / except RuntimeError as e: print(...) */
static coro_status awaiter_step(coro_t *c)
{
    awaiter_t *a = (awaiter_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_AWAIT(c, task_future(a->task));
    if (c->failed && strcmp(c->error.type, "RuntimeError") == 0) {
        say(loop_get_running_loop(), "awaiter: caught RuntimeError('%s')", c->error.message);
        coro_clear_error(c);
    }
    if (c->failed)
        return CORO_RAISED;
    CORO_END(c);
}

typedef struct wait_forever {
    coro_t coro;
    future_t *future; /* the frame's own reference: released with the frame */
} wait_forever_t;

/* await asyncio.get_running_loop().create_future() */
static coro_status wait_forever_step(coro_t *c)
{
    wait_forever_t *w = (wait_forever_t *)c;
    CORO_BEGIN(c);
    say(loop_get_running_loop(), "wait_forever: awaits a future nobody will set");
    w->future = loop_create_future(loop_get_running_loop());
    CORO_AWAIT(c, w->future);
    CORO_END(c);
}

/* The task is done with the frame (finished or not): drop what it holds. */
static void wait_forever_release(coro_t *c)
{
    future_release(((wait_forever_t *)c)->future);
}
/* @end coroutines */

static void stop(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

static void run_one_tick(loop_t *loop)
{
    loop_call_soon(loop, stop, NULL);
    loop_run_forever(loop);
}

int main(void)
{
    loop_t *loop = demo_loop();
    loop_set_log(loop, stdout);
    coro_t boom;
    loop_exception_t error;
    void *value;

    /* @region task_lost */
    puts("== 1. a task fails; nobody asks");
    task_t *t = loop_create_task(loop, coro_init(&boom, boom_step, "boom", NULL));
    run_one_tick(loop);
    puts("-- the last reference goes");
    task_release(t);
    /* @end task_lost */

    /* @region task_retrieved */
    puts("== 2. a task fails; exception() retrieves it");
    t = loop_create_task(loop, coro_init(&boom, boom_step, "boom", NULL));
    run_one_tick(loop);
    if (future_exception(task_future(t), &error) == 1)
        printf("t.exception() is %s('%s')\n", error.type, error.message);
    puts("-- the last reference goes");
    task_release(t);
    /* @end task_retrieved */

    /* @region task_awaited */
    puts("== 3. a task fails; another task awaits it");
    t = loop_create_task(loop, coro_init(&boom, boom_step, "boom", NULL));
    awaiter_t awaiter = {.task = t};
    task_t *a = loop_create_task(loop, coro_init(&awaiter.coro, awaiter_step, "awaiter", NULL));
    loop_run_until_complete(loop, task_future(a));
    task_release(a);
    puts("-- the last reference goes");
    task_release(t);
    /* @end task_awaited */

    /* @region future_lost */
    puts("== 4. a future gets an error; nobody asks");
    future_t *f = loop_create_future(loop);
    future_fail(f, "RuntimeError", "lost");
    puts("-- the last reference goes");
    future_release(f);
    /* @end future_lost */

    /* @region future_retrieved */
    puts("== 5. a future gets an error; result() raises it");
    f = loop_create_future(loop);
    future_fail(f, "RuntimeError", "lost");
    if (future_result(f, &value, &error) < 0)
        printf("f.result() raised %s('%s')\n", error.type, error.message);
    puts("-- the last reference goes");
    future_release(f);
    /* @end future_retrieved */

    /* @region pending */
    puts("== 6. a task still waits when the loop is closed");
    wait_forever_t forever = {0};
    t = loop_create_task(loop, coro_init(&forever.coro, wait_forever_step, "wait_forever",
                                         wait_forever_release));
    run_one_tick(loop);
    loop_close(loop);
    puts("loop closed");
    puts("-- the last reference goes");
    task_release(t);
    loop_free(loop); /* the loop's own reference to the task, too */
    puts("done");
    /* @end pending */
    return 0;
}
