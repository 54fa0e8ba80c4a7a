/* demo_periodic.c -- chapter 09: article 004's 6.2 (run_forever + stop 模式).
 *
 *     async def periodic():
 *         while True:
 *             print("心跳")
 *             await asyncio.sleep(2)
 *
 *     async def shutdown_after(seconds):
 *         await asyncio.sleep(seconds)
 *         loop = asyncio.get_running_loop()
 *         loop.stop()
 *
 * Two tasks the program does not wait for, a loop that runs forever, and a
 * stop from inside a task.  At 10 s both tasks wake in the same tick,
 * shutdown_after first (its timer was scheduled first): the heartbeat
 * still beats after the stop, because stop() ends the loop only at the end
 * of the tick.  The heartbeat task is still pending when the loop is
 * closed; the article's program then forgets it, and the loop reports it
 * when it is freed ("Task was destroyed but it is pending!"), where
 * CPython reports it when the garbage collector frees it.  Virtual clock;
 * Python twin: tests/conformance/runs/periodic.py.
 */
#include "demo_ticks.h"

#include <stdio.h>

/* @region coroutines */
typedef struct periodic {
    coro_t coro;
    sleep_t sleep;
} periodic_t;

static coro_status periodic_step(coro_t *c)
{
    periodic_t *p = (periodic_t *)c;
    CORO_BEGIN(c);
    for (;;) {
        say(loop_get_running_loop(), "心跳");
        CORO_CALL(c, sleep_init(&p->sleep, 2.0)); /* await asyncio.sleep(2) */
    }
    CORO_END(c);
}

typedef struct shutdown_after {
    coro_t coro;
    double seconds;
    sleep_t sleep;
} shutdown_after_t;

static coro_status shutdown_after_step(coro_t *c)
{
    shutdown_after_t *s = (shutdown_after_t *)c;
    CORO_BEGIN(c);
    CORO_CALL(c, sleep_init(&s->sleep, s->seconds)); /* await asyncio.sleep(seconds) */
    loop_t *loop = loop_get_running_loop();
    say(loop, "shutdown_after: loop.stop()");
    loop_stop(loop);
    CORO_END(c);
}
/* @end coroutines */

int main(void)
{
    /* @region main */
    loop_t *loop = demo_loop();
    loop_set_log(loop, stdout); /* the exception handler's report, in order with the rest */
    /* create the tasks, and do not wait for them: they run in the background */
    periodic_t periodic;
    shutdown_after_t shutdown = {.seconds = 10};
    task_release(loop_create_task(loop, coro_init(&periodic.coro, periodic_step, "periodic", NULL)));
    task_release(loop_create_task(loop, coro_init(&shutdown.coro, shutdown_after_step,
                                                  "shutdown_after", NULL)));
    puts("事件循环启动，10秒后停止");
    loop_run_forever(loop);             /* returns when loop_stop() is called */
    say(loop, "run_forever returned");
    loop_close(loop);
    puts("已停止");
    loop_free(loop);                    /* the heartbeat task goes with the loop */
    puts("the pending task is gone");
    /* @end main */
    return 0;
}
