/* demo_hello.c -- chapter 09: article 004's first task program (6.1, 基本流程).
 *
 *     async def main():
 *         print("Hello")
 *         await asyncio.sleep(1)
 *         print("World")
 *
 * run twice: by hand, as 6.1 writes it (a new loop, run_until_complete,
 * close), and through asyncio.run, which is loop_run_main_on() here (the
 * virtual loop is ours; loop_run_main would make a real one).  Each line
 * says the virtual time and the tick it was printed in: World comes two
 * ticks after Hello (the timer's tick sets sleep's future; the next tick
 * runs the task's wakeup).  Python twin: tests/conformance/runs/hello.py.
 */
#include "demo_ticks.h"

#include <stdio.h>

/* @region main */
typedef struct hello {
    coro_t coro;    /* first: a hello_t * is a coro_t * */
    sleep_t sleep;  /* the frame of the asyncio.sleep(1) it awaits */
} hello_t;

static coro_status main_step(coro_t *c)
{
    hello_t *h = (hello_t *)c;
    CORO_BEGIN(c);
    say(loop_get_running_loop(), "Hello");
    CORO_CALL(c, sleep_init(&h->sleep, 1.0)); /* await asyncio.sleep(1) */
    say(loop_get_running_loop(), "World");
    CORO_END(c);
}
/* @end main */

int main(void)
{
    /* @region by_hand */
    puts("-- by hand: new loop, run_until_complete(main()), close()");
    loop_t *loop = demo_loop();                                  /* 1. new_event_loop() */
    /* 2. set_event_loop(loop): optional, and C has none; the running loop
     *    is what loop_get_running_loop() returns */
    hello_t hello;
    task_t *task = loop_create_task(loop, coro_init(&hello.coro, main_step, "main", NULL));
    if (task == NULL || loop_run_until_complete(loop, task_future(task)) < 0) { /* 3. */
        printf("failed: %s\n", loop_error(loop));
        return 1;
    }
    void *result;
    loop_exception_t error;
    if (future_result(task_future(task), &result, &error) == 0)
        printf("run_until_complete returned %s after %d ticks\n",
               result == NULL ? "None" : "a value", ticks);
    task_release(task);
    loop_close(loop);                                            /* 4. close() */
    loop_free(loop);
    /* @end by_hand */

    /* @region run */
    puts("-- asyncio.run(main())");
    hello_t hello2;
    loop = demo_loop();
    if (loop_run_main_on(loop, coro_init(&hello2.coro, main_step, "main", NULL), &result,
                         &error) == 0)   /* runs main, then closes the loop */
        printf("asyncio.run returned %s\n", result == NULL ? "None" : "a value");
    else
        printf("asyncio.run raised %s: %s\n", error.type, error.message);
    loop_free(loop);
    /* @end run */
    return 0;
}
