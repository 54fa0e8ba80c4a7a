/* demo_cooperative.c -- chapter 09: article 004's 2.3 (事件循环是"协作式"而非
 * "抢占式"): a coroutine that never awaits keeps the loop to itself.
 *
 *     async def bad():                     async def good():
 *         while True:                          while True:
 *             pass    # no await                   await asyncio.sleep(0)
 *
 * Each coroutine here first schedules a callback that sets a flag, then
 * loops until it sees the flag.  bad() never awaits: its step never ends,
 * so the callback, queued behind it, cannot run; it gives up after SPINS
 * turns (the article's would spin forever) and the callback runs only
 * once it has returned.  good() awaits sleep(0) in its loop: its next step
 * is queued behind the callback, and it sees the flag after one turn.
 * Chapter 02's demo_starve showed the same with a callback that
 * re-schedules itself; a task is such a callback.  Virtual clock; Python
 * twin: tests/conformance/runs/cooperative.py.
 */
#include "demo_ticks.h"

#include <stdio.h>

#define SPINS 100000
static int flag;

static void set_flag(loop_t *loop, void *arg)
{
    (void)arg;
    flag = 1;
    say(loop, "callback: flag set");
}

/* @region spinners */
typedef struct spinner {
    coro_t coro;
    long n;         /* the turns so far: a local would not survive sleep(0) */
    sleep_t sleep;
} spinner_t;

static coro_status bad_step(coro_t *c)
{
    spinner_t *s = (spinner_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    flag = 0;
    loop_call_soon(loop, set_flag, NULL);
    say(loop, "bad: call_soon(set_flag), then spins without await");
    for (s->n = 0; !flag && s->n < SPINS; s->n++)   /* while True: pass */
        ;
    say(loop, "bad: gave up after %ld turns; flag is %s", s->n, flag ? "True" : "False");
    CORO_END(c);
}

static coro_status good_step(coro_t *c)
{
    spinner_t *s = (spinner_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    flag = 0;
    loop_call_soon(loop, set_flag, NULL);
    say(loop, "good: call_soon(set_flag), then spins with await asyncio.sleep(0)");
    for (s->n = 0; !flag;) {
        s->n++;
        CORO_CALL(c, sleep_init(&s->sleep, 0)); /* 主动让出控制权 */
    }
    say(loop, "good: saw the flag after %ld turn(s)", s->n);
    CORO_END(c);
}
/* @end spinners */

int main(void)
{
    loop_t *loop = demo_loop();
    /* @region main */
    const char *names[] = {"bad", "good"};
    coro_step_fn steps[] = {bad_step, good_step};
    for (int i = 0; i < 2; i++) {
        printf("-- run_until_complete(%s())\n", names[i]);
        spinner_t spinner;
        task_t *task = loop_create_task(loop, coro_init(&spinner.coro, steps[i], names[i], NULL));
        loop_run_until_complete(loop, task_future(task));
        task_release(task);
    }
    /* @end main */
    loop_close(loop);
    loop_free(loop);
    return 0;
}
