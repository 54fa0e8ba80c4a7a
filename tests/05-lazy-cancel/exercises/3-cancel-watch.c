/* Exercise 3 of chapter 05: cancelling an I/O watch's handle.
 *
 * Passes when a reader whose handle was cancelled (handle_cancel on
 * loop_reader_handle) is never called and its watch is ended by the loop at
 * the next poll that reports the fd, as CPython's _process_events does;
 * when a cancelled watch whose fd never becomes ready stays until
 * loop_remove_reader (which then returns 1); and when cancelling a watch
 * leaves timer_cancelled_count alone (it is not a timer).  The watch ends
 * at the poll itself, before anything of that tick runs (ending it when
 * the queued, cancelled handle is skipped passed the rest: a cheat,
 * tests/grade/README.md).
 *
 *   make exercise CH=05            (against your code/05-lazy-cancel/exercises/)
 *   make exercise CH=05 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"

static int calls;
static int ticks;

static void reader(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    calls++;
}

/* Count ticks; stop rather than block; at most 10 ticks. */
static double hook(loop_t *loop, double timeout, void *ctx)
{
    (void)ctx;
    ticks++;
    if (timeout < 0 || ticks >= 10)
        loop_stop(loop);
    return 0;
}

static loop_t *setup(int sv[2])
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    loop_t *loop = loop_new_virtual();
    ck_assert_ptr_nonnull(loop);
    loop_set_wait_hook(loop, hook, NULL);
    calls = ticks = 0;
    return loop;
}

static void teardown(loop_t *loop, int sv[2])
{
    loop_close(loop);
    loop_free(loop);
    close(sv[0]);
    close(sv[1]);
}

START_TEST(a_cancelled_watch_ends_at_the_next_poll)
{
    int sv[2];
    loop_t *loop = setup(sv);
    ck_assert_int_eq(loop_add_reader(loop, sv[0], reader, NULL), 0);
    ck_assert_int_eq(write(sv[1], "x", 1), 1); /* readable, and stays so */
    handle_t *h = loop_reader_handle(loop, sv[0]);
    ck_assert_ptr_nonnull(h);
    handle_cancel(h);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 0); /* not a timer */
    ck_assert_ptr_eq(loop_reader_handle(loop, sv[0]), h);   /* lazily: still there */
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(calls, 0);
    ck_assert_msg(loop_reader_handle(loop, sv[0]) == NULL,
                  "the poll reported the fd of a cancelled watch, but the watch is still there "
                  "(and will be queued and skipped at every tick)");
    ck_assert_int_eq(loop_remove_reader(loop, sv[0]), 0);
    ck_assert_int_eq(ticks, 1);
    teardown(loop, sv);
}
END_TEST

/* A callback queued before the tick runs after its poll: by then the
 * watch has ended, and its handle was not queued. */
static int watched_fd;
static handle_t *seen;

static void look(loop_t *loop, void *arg)
{
    (void)arg;
    seen = loop_reader_handle(loop, watched_fd);
}

START_TEST(the_watch_ends_at_the_poll_before_anything_runs)
{
    int sv[2];
    loop_t *loop = setup(sv);
    ck_assert_int_eq(loop_add_reader(loop, sv[0], reader, NULL), 0);
    ck_assert_int_eq(write(sv[1], "x", 1), 1);
    watched_fd = sv[0];
    seen = (handle_t *)&seen; /* not NULL until look() runs */
    handle_cancel(loop_reader_handle(loop, sv[0]));
    ck_assert_ptr_nonnull(loop_call_soon(loop, look, NULL));
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(seen == NULL, "a callback queued before the tick ran after its poll, "
                  "and still saw the cancelled watch: end it in step 2c, where the poll "
                  "reports its fd (CPython's _process_events), not later in the tick");
    ck_assert_int_eq(calls, 0);
    teardown(loop, sv);
}
END_TEST

START_TEST(a_quiet_cancelled_watch_stays_until_removed)
{
    int sv[2];
    loop_t *loop = setup(sv);
    ck_assert_int_eq(loop_add_reader(loop, sv[0], reader, NULL), 0);
    handle_cancel(loop_reader_handle(loop, sv[0]));
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0); /* nothing to read */
    ck_assert_ptr_nonnull(loop_reader_handle(loop, sv[0]));
    ck_assert_int_eq(loop_remove_reader(loop, sv[0]), 1); /* CPython: True */
    ck_assert_int_eq(calls, 0);
    teardown(loop, sv);
}
END_TEST

START_TEST(a_new_reader_after_the_cancel_runs)
{
    int sv[2];
    loop_t *loop = setup(sv);
    ck_assert_int_eq(loop_add_reader(loop, sv[0], reader, NULL), 0);
    ck_assert_int_eq(write(sv[1], "x", 1), 1);
    handle_cancel(loop_reader_handle(loop, sv[0]));
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0); /* the watch ends here */
    ck_assert_int_eq(calls, 0);
    ck_assert_int_eq(loop_add_reader(loop, sv[0], reader, NULL), 0);
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(calls, 1);
    ck_assert_int_eq(loop_remove_reader(loop, sv[0]), 1);
    teardown(loop, sv);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("3-cancel-watch");
    TCase *tc = tcase_create("cancel_watch");
    tcase_add_test(tc, a_cancelled_watch_ends_at_the_next_poll);
    tcase_add_test(tc, the_watch_ends_at_the_poll_before_anything_runs);
    tcase_add_test(tc, a_quiet_cancelled_watch_stays_until_removed);
    tcase_add_test(tc, a_new_reader_after_the_cancel_runs);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
