/* demo_policy.c -- chapter 10: the loop of a thread (article 004 §4.3,
 * §9.1-9.4), one rule or message at a time, as CPython 3.11.2 has them.
 *
 * Each line says what was asked, in which thread, and what came back: a
 * loop, named by the order it was made in (<loop 1>, <loop 2>...), or the
 * RuntimeError CPython raises there, in its words.  What it shows:
 *   - the main thread that never called set_event_loop() gets a loop made
 *     for it, once, without a warning (§4.3 says 3.10 deprecated this;
 *     3.11.2 still does it, silently);
 *   - after set_event_loop(NULL), even the main thread gets an error;
 *   - any other thread with no loop set gets "There is no current event
 *     loop in thread 'NAME'." (§9.2), an error and not §9.4's warning;
 *   - inside a running loop, get_event_loop() is that loop (§9.3's three
 *     refusals are tried from there);
 *   - after asyncio.run(), the main thread has no current loop: §9.1's
 *     "错误示例" fails with "There is no current event loop", not with
 *     "Event loop is closed", which comes from a closed loop left current.
 * Python twin: tests/conformance/runs/policy.py (the same bytes). */
#define _GNU_SOURCE /* pthread_setname_np */
#include "policy.h"
#include "task.h"

#include <pthread.h>
#include <stdio.h>

/* Loops by order of first sight, as the twin's `names` dict. */
static loop_t *names[8];
static char name_buf[8][16];

static const char *name(loop_t *loop)
{
    if (loop == NULL)
        return "None";
    size_t i = 0;
    while (i < 8 && names[i] != NULL && names[i] != loop)
        i++;
    if (i == 8)
        return "<loop ?>";
    if (names[i] == NULL) {
        names[i] = loop;
        snprintf(name_buf[i], sizeof name_buf[i], "<loop %zu>", i + 1);
    }
    return name_buf[i];
}

static const char *here(void)
{
    static _Thread_local char buf[64];
    return loop_thread_name(buf, sizeof buf);
}

/* Print "WHAT in THREAD -> <loop N>", or the refusal. */
static void ask(const char *what, loop_t *(*call)(void))
{
    loop_t *loop = call();
    if (loop != NULL)
        printf("%s in %s -> %s\n", what, here(), name(loop));
    else
        printf("%s in %s -> RuntimeError: %s\n", what, here(), loop_policy_error());
}

/* A thread named as threading.Thread(name=...) names it, or unnamed
 * (thread_name NULL: Python's Thread-N); run body in it and wait. */
typedef struct thread_job {
    const char *thread_name;
    void (*body)(void);
} thread_job_t;

static void *thread_main(void *arg)
{
    thread_job_t *job = arg;
    if (job->thread_name != NULL)
        pthread_setname_np(pthread_self(), job->thread_name);
    job->body();
    return NULL;
}

static void in_thread(const char *thread_name, void (*body)(void))
{
    thread_job_t job = {thread_name, body};
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, &job) == 0)
        pthread_join(t, NULL);
}

static void asks_for_its_loop(void)
{
    ask("get_event_loop()", loop_get_event_loop);
}

/* Freed at the end, not in the thread: the twin's `names` dict keeps every
 * loop alive, and a loop freed here could give its address to the next
 * one, which name() would then call by the old name. */
static loop_t *loop3;

static void worker_sets_its_own(void)
{
    loop_t *loop = loop3 = loop_new_event_loop();
    printf("new_event_loop() in %s -> %s\n", here(), name(loop));
    loop_set_event_loop(loop);
    printf("set_event_loop(%s) in %s\n", name(loop), here());
    ask("get_event_loop()", loop_get_event_loop);
    loop_close(loop);
    loop_set_event_loop(NULL); /* Python's thread-local goes with the thread */
}

/* async def main(): return None */
static coro_status main_step(coro_t *c)
{
    CORO_BEGIN(c);
    CORO_END(c);
}

/* @region inside */
static loop_t *loop2, *loop4;

/* A callback of <loop 4>: what get_event_loop() sees from inside, and
 * §9.3's three ways of starting a loop where one runs. */
static void inside(loop_t *loop, void *arg)
{
    (void)arg;
    ask("  get_event_loop()", loop_get_event_loop);
    ask("  get_running_loop()", loop_running_loop);
    if (loop_run_forever(loop2) < 0)
        printf("  %s.run_forever() -> RuntimeError: %s\n", name(loop2), loop_error(loop2));
    if (loop_run_forever(loop4) < 0)
        printf("  %s.run_forever() -> RuntimeError: %s\n", name(loop4), loop_error(loop4));
    coro_t main;
    loop_exception_t error;
    if (loop_run_main(coro_init(&main, main_step, "main", NULL), NULL, &error) < 0)
        printf("  asyncio.run(main()) -> %s: %s\n", error.type, error.message);
    loop_stop(loop);
}
/* @end inside */

int main(void)
{
    puts("(warnings are errors here: a DeprecationWarning would print as one)");

    puts("-- 4.3: the main thread, set_event_loop() never called");
    ask("get_event_loop()", loop_get_event_loop);
    ask("get_event_loop()", loop_get_event_loop);
    ask("get_running_loop()", loop_running_loop);
    loop_t *loop1 = loop_get_event_loop();

    puts("-- 4.3: new_event_loop(), then set_event_loop()");
    loop2 = loop_new_event_loop();
    printf("new_event_loop() -> %s, not current:\n", name(loop2));
    ask("get_event_loop()", loop_get_event_loop);
    loop_set_event_loop(loop2);
    printf("set_event_loop(%s) in %s\n", name(loop2), here());
    ask("get_event_loop()", loop_get_event_loop);

    puts("-- set_event_loop(None): the main thread gets no loop made any more");
    loop_set_event_loop(NULL);
    printf("set_event_loop(None) in %s\n", here());
    ask("get_event_loop()", loop_get_event_loop);

    puts("-- 9.2, 9.4: a thread that set no loop");
    in_thread("worker", asks_for_its_loop);
    in_thread(NULL, asks_for_its_loop);
    in_thread("worker", worker_sets_its_own);
    ask("get_event_loop()", loop_get_event_loop); /* the worker's loop is its own */

    puts("-- inside a running loop: the running loop, whatever is current");
    loop_set_event_loop(loop2);
    printf("set_event_loop(%s) in %s\n", name(loop2), here());
    loop4 = loop_new_event_loop();
    printf("new_event_loop() -> %s; %s.run_forever(), and in a callback:\n", name(loop4),
           name(loop4));
    loop_call_soon(loop4, inside, NULL);
    loop_run_forever(loop4);
    ask("get_event_loop()", loop_get_event_loop);
    loop_close(loop4);

    /* @region run_then_get */
    puts("-- 9.1: asyncio.run(), then get_event_loop()");
    coro_t main;
    if (loop_run_main(coro_init(&main, main_step, "main", NULL), NULL, NULL) == 0)
        puts("asyncio.run(main()) returned");
    ask("get_event_loop()", loop_get_event_loop);
    /* @end run_then_get */

    puts("-- 9.1: where 'Event loop is closed' does come from: a closed loop left current");
    loop_set_event_loop(loop2);
    printf("set_event_loop(%s) in %s\n", name(loop2), here());
    loop_close(loop2);
    printf("%s.close()\n", name(loop2));
    loop_t *current = loop_get_event_loop();
    if (loop_run_forever(current) < 0)
        printf("get_event_loop().run_forever() in %s -> RuntimeError: %s\n", here(),
               loop_error(current));
    loop_set_event_loop(NULL);
    loop_close(loop1);
    loop_free(loop1);
    loop_free(loop2);
    loop_free(loop3);
    loop_free(loop4);
    puts("done");
    return 0;
}
