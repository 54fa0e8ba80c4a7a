/* Exercise 04.2 -- cooperative tasks that yield like asyncio.sleep().
 *
 * Passes when a task runs one step per callback: two tasks that yield with
 * sleep(0) interleave step by step, one step each per tick, as two asyncio
 * tasks doing `await asyncio.sleep(0)` do; a reader added by a task runs
 * between its steps; and the step after a sleep(d) runs at d, one tick
 * after the sleep's timer fired, as after asyncio.sleep(d) (checked
 * against CPython 3.11: the timer completes a future, and the future queues
 * the task's wake-up with call_soon); and each sleep lasts what the task
 * asked for (two sleeps of other lengths than 0.1 s).
 *
 *   make exercise CH=04            (against your code/04-snapshot/exercises/)
 *   make exercise CH=04 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"
#include "task.h"

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"

/* virtual_loop() makes a loop on a virtual clock whose wait hook counts the
 * ticks in `ticks` (the loop calls it once per tick) and stops the loop
 * when there is nothing left to wait for; finish(loop) closes and frees it.
 * Each step adds "what@tick" to the string `ran`, space-separated. */
#include "vloop.h"

static void note(const char *what)
{
    label_add_at(what, ticks);
}

/* A task of three steps that yields after the first two: in Python,
 *     async def t(): step(); await asyncio.sleep(0); step(); await asyncio.sleep(0); step() */
static double three_steps(task_t *task, void *arg)
{
    char what[16];
    snprintf(what, sizeof what, "%s%d", (const char *)arg, task->steps + 1);
    note(what);
    return task->steps + 1 < 3 ? 0 : TASK_DONE;
}

START_TEST(test_two_tasks_interleave)
{
    loop_t *loop = virtual_loop();
    task_t a, b;
    ck_assert_int_eq(task_start(&a, loop, three_steps, "A"), 0);
    ck_assert_int_eq(task_start(&b, loop, three_steps, "B"), 0);
    ck_assert_msg(ran[0] == '\0', "task_start ran a step itself (\"%s\"): "
                  "the first step must only be queued", ran);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(strcmp(ran, "A1@1 B1@1 A2@2 B2@2 A3@3 B3@3") == 0,
                  "ran \"%s\"; expected \"A1@1 B1@1 A2@2 B2@2 A3@3 B3@3\": each "
                  "sleep(0) puts the task's next step at the back of the ready "
                  "deque, so it runs in the next tick, after the other task's step", ran);
    ck_assert(a.done && b.done);
    ck_assert_int_eq(a.steps, 3);
    ck_assert_int_eq(b.steps, 3);
    finish(loop);
}
END_TEST

/* A task that yields 50 times; its first step adds a reader for a socket
 * that holds a byte (as demo_starve's start does). */
static int pair[2];
static int steps_when_read;

static void reader(loop_t *loop, void *arg)
{
    task_t *task = arg;
    char c;
    ck_assert_int_eq(read(pair[0], &c, 1), 1);
    ck_assert_int_eq(loop_remove_reader(loop, pair[0]), 1);
    steps_when_read = task->steps;
}

static double busy(task_t *task, void *arg)
{
    (void)arg;
    if (task->steps == 0)
        ck_assert_int_eq(loop_add_reader(task->loop, pair[0], reader, task), 0);
    return task->steps + 1 < 50 ? 0 : TASK_DONE;
}

START_TEST(test_a_reader_runs_between_steps)
{
    loop_t *loop = virtual_loop();
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    ck_assert_int_eq(write(pair[1], "x", 1), 1);
    steps_when_read = -1;
    task_t t;
    ck_assert_int_eq(task_start(&t, loop, busy, NULL), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(steps_when_read == 2,
                  "the reader ran after %d steps of the task; expected 2 (the "
                  "poll of tick 2 queues it behind the task's second step)",
                  steps_when_read);
    ck_assert(t.done);
    ck_assert_int_eq(t.steps, 50);
    ck_assert_int_eq(ticks, 51); /* 50 steps, and one last wait that finds nothing */
    finish(loop);
    close(pair[0]);
    close(pair[1]);
}
END_TEST

/* async def c(): step(); await asyncio.sleep(0.1); step() */
static double sleeps(task_t *task, void *arg)
{
    char what[32];
    snprintf(what, sizeof what, "%s%d/%.3f", (const char *)arg, task->steps + 1,
             loop_time(task->loop));
    note(what);
    return task->steps == 0 ? 0.1 : TASK_DONE;
}

static void timer(loop_t *loop, void *arg)
{
    char what[32];
    snprintf(what, sizeof what, "%s/%.3f", (const char *)arg, loop_time(loop));
    note(what);
}

START_TEST(test_sleep_resumes_a_tick_after_its_timer)
{
    loop_t *loop = virtual_loop();
    task_t c;
    ck_assert_int_eq(task_start(&c, loop, sleeps, "C"), 0);
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.1, timer, "timer"));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(strcmp(ran, "C1/0.000@1 timer/0.100@2 C2/0.100@3") == 0,
                  "ran \"%s\"; expected \"C1/0.000@1 timer/0.100@2 C2/0.100@3\": "
                  "the sleep's timer fires in tick 2 with the other 0.1 s timer, "
                  "and, as asyncio's, it only queues the task's next step with "
                  "call_soon, which runs in tick 3", ran);
    ck_assert(c.done);
    finish(loop);
}
END_TEST

/* async def d(): step(); await asyncio.sleep(0.25); step(); await asyncio.sleep(0.5); step() */
static double sleeps_twice(task_t *task, void *arg)
{
    static const double delay[] = {0.25, 0.5, TASK_DONE};
    char what[32];
    snprintf(what, sizeof what, "%s%d/%.3f", (const char *)arg, task->steps + 1,
             loop_time(task->loop));
    note(what);
    return delay[task->steps];
}

START_TEST(test_a_sleep_lasts_what_it_asks)
{
    loop_t *loop = virtual_loop();
    task_t d;
    ck_assert_int_eq(task_start(&d, loop, sleeps_twice, "D"), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(strcmp(ran, "D1/0.000@1 D2/0.250@3 D3/0.750@5") == 0,
                  "ran \"%s\"; expected \"D1/0.000@1 D2/0.250@3 D3/0.750@5\": "
                  "sleep(0.25), then sleep(0.5), each resumed one tick after "
                  "its timer", ran);
    ck_assert(d.done);
    finish(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 04.2: tasks");
    TCase *tc = tcase_create("tasks");
    tcase_add_test(tc, test_two_tasks_interleave);
    tcase_add_test(tc, test_a_reader_runs_between_steps);
    tcase_add_test(tc, test_sleep_resumes_a_tick_after_its_timer);
    tcase_add_test(tc, test_a_sleep_lasts_what_it_asks);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
