/* demo_coro.c -- chapter 09: a coroutine in C, and what an await costs.
 *
 *     async def ticker(n):
 *         loop = asyncio.get_running_loop()
 *         for i in range(1, n + 1):
 *             fut = loop.create_future()
 *             loop.call_later(1, fut.set_result, 10 * i)
 *             value = await fut
 *             print("ticker: got %d" % value)
 *         return n
 *
 * 1. ticker() written twice: first by hand, a switch on the resume point
 *    with a case label inside the for loop, then with coro.h's macros,
 *    which are nothing but that switch with the bookkeeping folded in.
 *    The task drives both the same way and they print the same lines.
 * 2. What each kind of await costs, in ticks: a coroutine awaited directly
 *    (CORO_CALL) runs inside the caller's step, no tick; asyncio.sleep(0)
 *    gives the loop one turn; a new task runs in a step of its own, and
 *    its caller's wakeup is one more; a task already done is not waited
 *    for at all (Future.__await__ yields only a pending future).
 * Virtual clock; Python twin: tests/conformance/runs/coro.py.
 */
#include "demo_ticks.h"

#include <stdint.h>
#include <stdio.h>

/* @region frame */
/* ticker's frame: its argument and every local that lives across an await. */
typedef struct ticker {
    coro_t coro;    /* first: a ticker_t * is a coro_t * */
    int n;          /* the argument */
    int i;          /* the loop variable */
    future_t *fut;  /* the future it awaits now */
} ticker_t;

/* The timer's callback, fut.set_result(10 * i).  The timer holds the
 * future (in Python the bound method fut.set_result does): it is given the
 * coroutine's reference, and drops it once it has set the result. */
static void set_result_later(loop_t *loop, void *arg)
{
    (void)loop;
    ticker_t *t = arg;
    future_set_result(t->fut, (void *)(intptr_t)(10 * t->i));
    future_release(t->fut);
}
/* @end frame */

/* @region by_hand */
static coro_status ticker_by_hand(coro_t *c)
{
    ticker_t *t = (ticker_t *)c;
    loop_t *loop = loop_get_running_loop();
    switch (c->state) {
    case 0:                                   /* the first step starts at the top */
        for (t->i = 1; t->i <= t->n; t->i++) {
            t->fut = loop_create_future(loop);
            loop_call_later(loop, 1, set_result_later, t);
            say(loop, "ticker: await a future a timer sets in 1 s");
            c->state = 1;                     /* where the next step resumes: */
            c->awaiting = t->fut;             /* the task adds its wakeup to fut */
            return CORO_SUSPENDED;
    case 1:                                   /*   here, inside the for loop */
            coro_resume_from(c, c->awaiting); /* value = fut.result(), or its error */
            if (c->failed)
                return CORO_RAISED;           /* the error propagates */
            say(loop, "ticker: got %d", (int)(intptr_t)c->value);
        }
    }
    c->value = (void *)(intptr_t)t->n;        /* return n */
    c->state = -1;
    return CORO_RETURNED;
}
/* @end by_hand */

/* @region with_macros */
static coro_status ticker_step(coro_t *c)
{
    ticker_t *t = (ticker_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    for (t->i = 1; t->i <= t->n; t->i++) {
        t->fut = loop_create_future(loop);
        loop_call_later(loop, 1, set_result_later, t);
        say(loop, "ticker: await a future a timer sets in 1 s");
        CORO_AWAIT(c, t->fut);
        say(loop, "ticker: got %d", (int)(intptr_t)c->value);
    }
    CORO_RETURN(c, (void *)(intptr_t)t->n);
    CORO_END(c);
}
/* @end with_macros */

/* @region costs */
static coro_status child_step(coro_t *c)
{
    CORO_BEGIN(c);
    say(loop_get_running_loop(), "child: runs, returns 42");
    CORO_RETURN(c, (void *)(intptr_t)42);
    CORO_END(c);
}

typedef struct parent {
    coro_t coro;
    coro_t child;   /* the frame of the child() it awaits directly */
    coro_t child2;  /* the frame of the child() that runs as a task */
    sleep_t sleep;
    task_t *task;   /* the frame's reference, dropped by parent_release */
} parent_t;

static coro_status parent_step(coro_t *c)
{
    parent_t *p = (parent_t *)c;
    loop_t *loop = loop_get_running_loop();
    CORO_BEGIN(c);
    say(loop, "parent: await child()");
    CORO_CALL(c, coro_init(&p->child, child_step, "child", NULL));
    say(loop, "parent: got %d", (int)(intptr_t)c->value);

    say(loop, "parent: await asyncio.sleep(0)");
    CORO_CALL(c, sleep_init(&p->sleep, 0));
    say(loop, "parent: back");

    say(loop, "parent: await create_task(child())");
    p->task = loop_create_task(loop, coro_init(&p->child2, child_step, "child", NULL));
    CORO_AWAIT(c, task_future(p->task));
    say(loop, "parent: got %d", (int)(intptr_t)c->value);

    say(loop, "parent: await the same task again (it is done)");
    CORO_AWAIT(c, task_future(p->task));
    say(loop, "parent: got %d", (int)(intptr_t)c->value);
    CORO_END(c);
}

static void parent_release(coro_t *c)
{
    task_release(((parent_t *)c)->task);
}
/* @end costs */

int main(void)
{
    loop_t *loop = demo_loop();

    /* @region main */
    const char *how[] = {"by hand", "with the macros"};
    coro_step_fn step[] = {ticker_by_hand, ticker_step};
    for (int i = 0; i < 2; i++) {
        printf("-- ticker(2), written %s\n", how[i]);
        ticker_t ticker = {.n = 2};
        task_t *task = loop_create_task(loop, coro_init(&ticker.coro, step[i], "ticker", NULL));
        void *result;
        loop_exception_t error;
        if (loop_run_until_complete(loop, task_future(task)) == 0 &&
            future_result(task_future(task), &result, &error) == 0)
            printf("run_until_complete: %d\n", (int)(intptr_t)result);
        task_release(task);
    }
    /* @end main */

    puts("-- what an await costs");
    parent_t parent = {0};
    task_t *task = loop_create_task(loop, coro_init(&parent.coro, parent_step, "parent",
                                                    parent_release));
    loop_run_until_complete(loop, task_future(task));
    task_release(task);
    loop_close(loop);
    loop_free(loop);
    return 0;
}
