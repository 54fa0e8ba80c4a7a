/* demo_q5.c -- chapter 09: article 004's exercise 5 (题目5), loop.stop()
 * inside the coroutine that asyncio.run runs.
 *
 *     async def main():
 *         print("开始")
 *         loop = asyncio.get_running_loop()
 *         loop.stop()
 *         print("结束")
 *
 *     asyncio.run(main())
 *
 * 1. As printed: stop() only asks the loop to stop at the end of this
 *    tick.  main() goes on, prints 结束 and returns in the same tick, so
 *    run_until_complete finds its task done: no error at all.
 * 2. With an await after stop() (what "less than 2 seconds" suggests): the
 *    tick ends with main() suspended, the loop stops, run_until_complete
 *    fails with "Event loop stopped before Future completed.", and
 *    asyncio.run's cleanup cancels the main task: 结束 is never printed.
 * 3. The fix: no stop(); main() returns when it is done.
 * Each runs through loop_run_main_on() on a virtual loop.  Python twin:
 * tests/conformance/runs/q5.py (and stop-in-main.py, on the real clock).
 */
#include "demo_ticks.h"

#include <stdio.h>
#include <string.h>

typedef struct main_frame {
    coro_t coro;
    sleep_t sleep;
} main_t;

/* @region main */
static coro_status main_step(coro_t *c) /* the exercise's program, as printed */
{
    CORO_BEGIN(c);
    say(loop_get_running_loop(), "开始");
    loop_t *loop = loop_get_running_loop();
    loop_stop(loop);
    say(loop, "结束");
    CORO_END(c);
}
/* @end main */

/* @region main_with_await */
static coro_status main_with_await_step(coro_t *c) /* the same, awaiting after stop() */
{
    main_t *m = (main_t *)c;
    CORO_BEGIN(c);
    say(loop_get_running_loop(), "开始");
    loop_stop(loop_get_running_loop());
    CORO_TRY_CALL(c, sleep_init(&m->sleep, 2)); /* try: await asyncio.sleep(2) */
    if (c->failed && strcmp(c->error.type, "CancelledError") == 0)
        say(loop_get_running_loop(), "main_with_await: CancelledError (asyncio.run's cleanup)");
    if (c->failed)
        return CORO_RAISED;                     /*   raise */
    say(loop_get_running_loop(), "结束");
    CORO_END(c);
}
/* @end main_with_await */

/* @region main_fixed */
static coro_status main_fixed_step(coro_t *c) /* the fix: no stop(), main returns */
{
    main_t *m = (main_t *)c;
    CORO_BEGIN(c);
    say(loop_get_running_loop(), "开始");
    CORO_CALL(c, sleep_init(&m->sleep, 2));
    say(loop_get_running_loop(), "结束");
    CORO_END(c);
}
/* @end main_fixed */

int main(void)
{
    const char *names[] = {"main", "main_with_await", "main_fixed"};
    coro_step_fn steps[] = {main_step, main_with_await_step, main_fixed_step};
    for (int i = 0; i < 3; i++) {
        printf("-- asyncio.run(%s())\n", names[i]);
        loop_t *loop = demo_loop();
        main_t frame;
        void *result;
        loop_exception_t error;
        if (loop_run_main_on(loop, coro_init(&frame.coro, steps[i], names[i], NULL), &result,
                             &error) == 0)
            puts("asyncio.run returned");
        else
            printf("asyncio.run raised %s: %s\n", error.type, error.message);
        loop_free(loop); /* loop_run_main_on closed it */
    }
    return 0;
}
