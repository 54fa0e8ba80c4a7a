/* demo_safe_close.c -- chapter 09: article 004's 6.3 (关闭事件循环的注意事项).
 *
 *     def safe_close(loop):
 *         tasks = asyncio.all_tasks(loop)
 *         for task in tasks:
 *             task.cancel()
 *         loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
 *         loop.close()
 *
 * Five tasks; the loop runs until 3 s.  By then e-quick has finished, so
 * all_tasks() lists the other four.  Each cancel() cancels the sleep the
 * task waits in, and each task sees its CancelledError in the next tick:
 * two let it through, c-cleaner first awaits one more second of cleanup
 * (the gather waits for it), d-stubborn swallows it and returns a value.
 * gather's list says what became of each, in the order they were given.
 * Virtual clock; Python twin: tests/conformance/runs/safe-close.py.
 */
#include "demo_ticks.h"

#include <stdio.h>
#include <string.h>

static int is_cancelled_error(const coro_t *c)
{
    return c->failed && strcmp(c->error.type, "CancelledError") == 0;
}

/* @region workers */
/* One frame type for the three kinds of worker; each has its own step. */
typedef struct worker {
    coro_t coro;
    double delay;
    sleep_t sleep;
    loop_exception_t cancelled; /* `except CancelledError as e:` keeps e here */
} worker_t;

static char woke_up[] = "woke up", finished[] = "d-stubborn finished anyway";

/* try: await asyncio.sleep(delay); return "NAME woke up"
 * except CancelledError: raise */
static coro_status sleeper_step(coro_t *c)
{
    worker_t *w = (worker_t *)c;
    const char *name = task_get_name(c->task);
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, sleep_init(&w->sleep, w->delay));
    if (is_cancelled_error(c))
        say(loop_get_running_loop(), "%s: CancelledError, lets it through", name);
    if (c->failed)
        return CORO_RAISED;
    say(loop_get_running_loop(), "%s: woke up, returns", name);
    CORO_RETURN(c, woke_up);
    CORO_END(c);
}

/* try: await asyncio.sleep(100)
 * except CancelledError: await asyncio.sleep(1); raise */
static coro_status cleaner_step(coro_t *c)
{
    worker_t *w = (worker_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, sleep_init(&w->sleep, 100));
    if (is_cancelled_error(c)) {
        say(loop_get_running_loop(), "c-cleaner: CancelledError, cleans up for 1 s first");
        w->cancelled = c->error; /* the error being handled, kept across the await */
        coro_clear_error(c);
        CORO_CALL(c, sleep_init(&w->sleep, 1));
        say(loop_get_running_loop(), "c-cleaner: clean, lets it through");
        CORO_RAISE(c, w->cancelled.type, "%s", w->cancelled.message); /* raise */
    }
    if (c->failed)
        return CORO_RAISED;
    CORO_END(c);
}

/* try: await asyncio.sleep(100)
 * except CancelledError: pass
 * return "d-stubborn finished anyway" */
static coro_status stubborn_step(coro_t *c)
{
    worker_t *w = (worker_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, sleep_init(&w->sleep, 100));
    if (is_cancelled_error(c)) {
        say(loop_get_running_loop(), "d-stubborn: CancelledError, swallows it and returns");
        coro_clear_error(c);
    }
    if (c->failed)
        return CORO_RAISED;
    CORO_RETURN(c, finished);
    CORO_END(c);
}
/* @end workers */

/* Append a gather item to buf as Python's repr prints it: 'value' or
 * Error('message'), or Error() without a message. */
static void show(const gather_item_t *item, const char *sep, char *buf, size_t size)
{
    size_t len = strlen(buf);
    if (!item->failed)
        snprintf(buf + len, size - len, "%s'%s'", sep, (const char *)item->value);
    else if (item->error.message[0] != '\0')
        snprintf(buf + len, size - len, "%s%s('%s')", sep, item->error.type, item->error.message);
    else
        snprintf(buf + len, size - len, "%s%s()", sep, item->error.type);
}

/* @region safe_close */
static void safe_close(loop_t *loop)
{
    /* every task not yet done (CPython returns a set; this loop, a list in
     * the order of creation) */
    task_t *tasks[8];
    size_t n = loop_all_tasks(loop, tasks, 8);
    future_t *children[8];
    char names[128] = "";
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", task_get_name(tasks[i]));
    }
    say(loop, "safe_close: all_tasks() = [%s]", names);
    for (size_t i = 0; i < n; i++) {
        task_cancel(tasks[i], NULL);
        children[i] = task_future(tasks[i]);
    }
    /* wait until every cancellation has arrived */
    future_t *all = loop_gather(loop, children, n, 1);
    loop_run_until_complete(loop, all);
    void *value;
    loop_exception_t error;
    if (future_result(all, &value, &error) == 0) {
        gather_result_t *results = value;
        char list[256] = "";
        for (size_t i = 0; i < results->n; i++)
            show(&results->items[i], i ? ", " : "", list, sizeof list);
        say(loop, "gather: [%s]", list);
    }
    future_release(all);
    loop_close(loop);
}
/* @end safe_close */

static void stop(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

int main(void)
{
    loop_t *loop = demo_loop();
    /* @region main */
    worker_t a = {.delay = 5}, b = {.delay = 50}, cl = {0}, d = {0}, e = {.delay = 1};
    task_t *tasks[] = {
        task_new(loop, coro_init(&a.coro, sleeper_step, "sleeper", NULL), "a-sleeper"),
        task_new(loop, coro_init(&b.coro, sleeper_step, "sleeper", NULL), "b-sleeper"),
        task_new(loop, coro_init(&cl.coro, cleaner_step, "cleaner", NULL), "c-cleaner"),
        task_new(loop, coro_init(&d.coro, stubborn_step, "stubborn", NULL), "d-stubborn"),
        task_new(loop, coro_init(&e.coro, sleeper_step, "sleeper", NULL), "e-quick"),
    };
    loop_call_later(loop, 3, stop, NULL);
    loop_run_forever(loop);
    say(loop, "run_forever returned");
    safe_close(loop);
    puts("closed");
    /* @end main */
    for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
        task_release(tasks[i]);
    loop_free(loop);
    return 0;
}
