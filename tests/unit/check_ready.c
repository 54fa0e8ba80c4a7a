/* check_ready.c -- the rules of call_soon and the ready deque (chapter 02).
 *
 * Written against chapter 02's loop.h and run against every later stage
 * (tests/suites.mk), so it asserts only what asyncio promises in every one
 * of them:
 *   - callbacks run in call_soon order (FIFO);
 *   - a callback scheduled by a callback runs after everything queued
 *     before it -- but NOT "in the same tick": chapter 04's snapshot moves
 *     it to the next tick on purpose, so no test here counts ticks for it;
 *   - the handles queued before the poll run before the I/O handles the
 *     poll queues, and those before what the callbacks queue;
 *   - a reader or writer removed (or replaced) after its handle was queued
 *     in the same tick is not called;
 *   - bad calls are refused; stop() then run_forever() is one tick.
 * The freeing rules are checked by running this suite under ASan and
 * valgrind (make check-sanitize, make check-valgrind).
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/NN-slug tests/unit/check_ready.c build/NN-slug/libloop.a \
 *      $(pkg-config --cflags --libs check) -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"

/* ---- helpers ----------------------------------------------------------- */

/* The order in which callbacks ran, as a string of their one-letter names. */
static char trace[64];

static void record(char name)
{
    size_t n = strlen(trace);
    ck_assert_uint_lt(n, sizeof trace - 1);
    trace[n] = name;
    trace[n + 1] = '\0';
}

/* What one callback is and does when it runs.  Every field but `name` is
 * optional. */
struct step {
    char name;
    int calls;
    int fd;                     /* >= 0: read a byte from it */
    int unwatch_reader;         /* >= 0: remove the reader of this fd */
    int unwatch_writer;         /* >= 0: remove the writer of this fd */
    int rewatch_fd;             /* >= 0: add_reader(rewatch_fd, rewatch) */
    struct step *rewatch;
    struct step *then[2];       /* call_soon these */
    int stop;                   /* call loop_stop() */
};

static void step_cb(loop_t *loop, void *arg);

/* A step that only records its name:  struct step a = STEP('a'); */
#define STEP(c) \
    ((struct step){.name = (c), .fd = -1, .unwatch_reader = -1, .unwatch_writer = -1, \
                   .rewatch_fd = -1})

static void step_cb(loop_t *loop, void *arg)
{
    struct step *s = arg;
    s->calls++;
    record(s->name);
    if (s->fd >= 0) {
        char byte;
        ck_assert_int_eq(read(s->fd, &byte, 1), 1);
    }
    if (s->unwatch_reader >= 0)
        ck_assert_int_eq(loop_remove_reader(loop, s->unwatch_reader), 1);
    if (s->unwatch_writer >= 0)
        ck_assert_int_eq(loop_remove_writer(loop, s->unwatch_writer), 1);
    if (s->rewatch_fd >= 0)
        ck_assert_int_eq(loop_add_reader(loop, s->rewatch_fd, step_cb, s->rewatch), 0);
    for (int i = 0; i < 2; i++)
        if (s->then[i] != NULL)
            ck_assert_ptr_nonnull(loop_call_soon(loop, step_cb, s->then[i]));
    if (s->stop)
        loop_stop(loop);
}

static loop_t *new_loop(void)
{
    trace[0] = '\0';
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    return loop;
}

static void soon(loop_t *loop, struct step *s)
{
    ck_assert_ptr_nonnull(loop_call_soon(loop, step_cb, s));
}

static void run(loop_t *loop)
{
    ck_assert_msg(loop_run_forever(loop) == 0, "run_forever failed: %s",
                  loop_error(loop));
}

static void done(loop_t *loop)
{
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}

/* A socketpair whose sv[1] is readable: one byte waits in it. */
static void readable_pair(int sv[2])
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(write(sv[0], "x", 1), 1);
}

static void close_pair(int sv[2])
{
    close(sv[0]);
    close(sv[1]);
}

/* ---- FIFO -------------------------------------------------------------- */

START_TEST(test_fifo)
{
    loop_t *loop = new_loop();
    struct step a = STEP('a'), b = STEP('b'), c = STEP('c');
    soon(loop, &a);
    soon(loop, &b);
    soon(loop, &c);
    loop_stop(loop);
    run(loop);
    ck_assert_str_eq(trace, "abc");
    done(loop);
}
END_TEST

/* a queues x and y, c queues z, x queues w: each new callback goes behind
 * everything already queued.  The last one stops the loop, however many
 * ticks that takes. */
START_TEST(test_nested_after_queued)
{
    loop_t *loop = new_loop();
    struct step a = STEP('a'), b = STEP('b'), c = STEP('c'), x = STEP('x'), y = STEP('y'),
                z = STEP('z'), w = STEP('w');
    a.then[0] = &x;
    a.then[1] = &y;
    c.then[0] = &z;
    x.then[0] = &w;
    w.stop = 1;
    soon(loop, &a);
    soon(loop, &b);
    soon(loop, &c);
    run(loop);
    ck_assert_str_eq(trace, "abcxyzw");
    done(loop);
}
END_TEST

/* Each callback runs once, and ten thousand keep their order. */
static int next_expected;
static void count_cb(loop_t *loop, void *arg)
{
    (void)loop;
    int i = (int)(long)arg;
    if (i != next_expected)
        ck_abort_msg("callback #%d ran when #%d was expected", i, next_expected);
    next_expected++;
}

START_TEST(test_many_in_order)
{
    loop_t *loop = new_loop();
    next_expected = 0;
    for (long i = 0; i < 10000; i++)
        ck_assert_ptr_nonnull(loop_call_soon(loop, count_cb, (void *)i));
    loop_stop(loop);
    run(loop);
    ck_assert_int_eq(next_expected, 10000);
    loop_stop(loop);
    run(loop); /* nothing is left to run a second time */
    ck_assert_int_eq(next_expected, 10000);
    done(loop);
}
END_TEST

START_TEST(test_distinct_handles)
{
    loop_t *loop = new_loop();
    struct step a = STEP('a');
    handle_t *h1 = loop_call_soon(loop, step_cb, &a);
    handle_t *h2 = loop_call_soon(loop, step_cb, &a);
    ck_assert_ptr_nonnull(h1);
    ck_assert_ptr_nonnull(h2);
    ck_assert_ptr_ne(h1, h2);
    loop_stop(loop);
    run(loop);
    ck_assert_int_eq(a.calls, 2);
    done(loop);
}
END_TEST

/* ---- refusals ---------------------------------------------------------- */

START_TEST(test_null_callback_refused)
{
    loop_t *loop = new_loop();
    errno = 0;
    ck_assert_ptr_null(loop_call_soon(loop, NULL, NULL));
    ck_assert_int_eq(errno, EINVAL);
    /* The message says why: a NULL callback, not some other failure. */
    ck_assert_msg(strstr(loop_error(loop), "NULL") != NULL,
                  "call_soon(NULL): loop_error() says \"%s\"", loop_error(loop));
    /* Nothing was queued: one tick runs nothing. */
    struct step a = STEP('a');
    soon(loop, &a);
    loop_stop(loop);
    run(loop);
    ck_assert_str_eq(trace, "a");
    done(loop);
}
END_TEST

START_TEST(test_closed_loop_refused)
{
    loop_t *loop = new_loop();
    struct step a = STEP('a');
    ck_assert_int_eq(loop_close(loop), 0);
    errno = 0;
    ck_assert_ptr_null(loop_call_soon(loop, step_cb, &a));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_ptr_nonnull(strstr(loop_error(loop), "closed"));
    loop_free(loop);
    ck_assert_int_eq(a.calls, 0);
}
END_TEST

/* close() drops what is still queued, without calling it (and frees it:
 * valgrind and ASan see to that); so does loop_free() on a loop never
 * closed. */
START_TEST(test_close_drops_queued)
{
    loop_t *loop = new_loop();
    struct step a = STEP('a');
    soon(loop, &a);
    soon(loop, &a);
    done(loop);
    ck_assert_int_eq(a.calls, 0);

    loop = new_loop();
    soon(loop, &a);
    loop_free(loop);
    ck_assert_int_eq(a.calls, 0);
}
END_TEST

/* ---- I/O goes through the ready deque ---------------------------------- */

/* a and b are queued before the poll; the poll queues r behind them; a
 * queues c while it runs, behind r.  CPython runs a, b, r, c. */
START_TEST(test_io_after_queued_before_poll)
{
    int sv[2];
    readable_pair(sv);
    loop_t *loop = new_loop();
    struct step a = STEP('a'), b = STEP('b'), r = STEP('r'), c = STEP('c');
    a.then[0] = &c;
    r.fd = sv[1];
    r.unwatch_reader = sv[1];
    c.stop = 1;
    ck_assert_int_eq(loop_add_reader(loop, sv[1], step_cb, &r), 0);
    soon(loop, &a);
    soon(loop, &b);
    run(loop);
    ck_assert_str_eq(trace, "abrc");
    done(loop);
    close_pair(sv);
}
END_TEST

/* A callback that runs after the poll removes a reader whose handle the
 * poll already queued: that reader must not be called (CPython cancels the
 * handle in _remove_reader).  The handle is still in the deque when it is
 * removed, so a loop that freed it there would fail under ASan. */
START_TEST(test_removed_reader_not_called)
{
    int p1[2], p2[2];
    readable_pair(p1);
    readable_pair(p2);
    loop_t *loop = new_loop();
    struct step a = STEP('a'), r1 = STEP('1'), r2 = STEP('2');
    r1.fd = p1[1];
    r1.unwatch_reader = p1[1];
    r2.fd = p2[1];
    a.unwatch_reader = p2[1];
    a.stop = 1;
    ck_assert_int_eq(loop_add_reader(loop, p1[1], step_cb, &r1), 0);
    ck_assert_int_eq(loop_add_reader(loop, p2[1], step_cb, &r2), 0);
    soon(loop, &a); /* queued before the poll: runs first */
    run(loop);
    ck_assert_str_eq(trace, "a1");
    ck_assert_int_eq(r2.calls, 0);
    done(loop);
    close_pair(p1);
    close_pair(p2);
}
END_TEST

/* The same for a writer (a socket is writable at once). */
START_TEST(test_removed_writer_not_called)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    loop_t *loop = new_loop();
    struct step a = STEP('a'), w = STEP('w');
    a.unwatch_writer = sv[0];
    a.stop = 1;
    ck_assert_int_eq(loop_add_writer(loop, sv[0], step_cb, &w), 0);
    soon(loop, &a);
    run(loop);
    ck_assert_str_eq(trace, "a");
    done(loop);
    close_pair(sv);
}
END_TEST

/* A reader replaced after its handle was queued: neither the old reader nor
 * the new one runs in this tick (the new handle was never queued); the new
 * one runs when the loop polls again and finds the fd still readable.
 * Variant 0 replaces with remove + add, variant 1 with add alone. */
START_TEST(test_replaced_reader)
{
    int sv[2];
    readable_pair(sv);
    loop_t *loop = new_loop();
    struct step a = STEP('a'), old = STEP('o'), new = STEP('n');
    if (_i == 0)
        a.unwatch_reader = sv[1];
    a.rewatch_fd = sv[1];
    a.rewatch = &new;
    a.stop = 1;
    new.fd = sv[1];
    new.unwatch_reader = sv[1];
    ck_assert_int_eq(loop_add_reader(loop, sv[1], step_cb, &old), 0);
    soon(loop, &a);
    run(loop);
    ck_assert_str_eq(trace, "a");
    loop_stop(loop);
    run(loop);
    ck_assert_str_eq(trace, "an");
    ck_assert_int_eq(old.calls, 0);
    done(loop);
    close_pair(sv);
}
END_TEST

/* A reader that removes itself from inside its own callback: the loop must
 * not touch the handle after the callback returns (ASan). */
START_TEST(test_reader_removes_itself)
{
    int sv[2];
    readable_pair(sv);
    loop_t *loop = new_loop();
    struct step r = STEP('r'), b = STEP('b');
    r.fd = sv[1];
    r.unwatch_reader = sv[1];
    r.then[0] = &b;
    b.stop = 1;
    ck_assert_int_eq(loop_add_reader(loop, sv[1], step_cb, &r), 0);
    run(loop);
    ck_assert_str_eq(trace, "rb");
    done(loop);
    close_pair(sv);
}
END_TEST

/* ---- stop -------------------------------------------------------------- */

/* stop() then run_forever(): one tick, which does not block, runs what was
 * queued and the I/O that was ready, and returns -- even with a writer that
 * is ready every tick. */
START_TEST(test_stop_then_run_is_one_tick)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    loop_t *loop = new_loop();
    struct step a = STEP('a'), w = STEP('w');
    ck_assert_int_eq(loop_add_writer(loop, sv[0], step_cb, &w), 0);
    soon(loop, &a);
    loop_stop(loop);
    run(loop);
    ck_assert_str_eq(trace, "aw");
    loop_stop(loop);
    run(loop);
    ck_assert_str_eq(trace, "aww");
    done(loop);
    close_pair(sv);
}
END_TEST

/* stop() from a callback ends the run after this tick; the callbacks
 * queued before it in the tick still run. */
START_TEST(test_stop_from_callback)
{
    loop_t *loop = new_loop();
    struct step a = STEP('a'), b = STEP('b');
    a.stop = 1;
    soon(loop, &a);
    soon(loop, &b);
    run(loop);
    ck_assert_str_eq(trace, "ab");
    done(loop);
}
END_TEST

static Suite *ready_suite(void)
{
    Suite *s = suite_create("ready");
    TCase *order = tcase_create("order");
    tcase_add_test(order, test_fifo);
    tcase_add_test(order, test_nested_after_queued);
    tcase_add_test(order, test_many_in_order);
    tcase_add_test(order, test_distinct_handles);
    suite_add_tcase(s, order);

    TCase *refuse = tcase_create("refusals");
    tcase_add_test(refuse, test_null_callback_refused);
    tcase_add_test(refuse, test_closed_loop_refused);
    tcase_add_test(refuse, test_close_drops_queued);
    suite_add_tcase(s, refuse);

    TCase *io = tcase_create("io");
    tcase_add_test(io, test_io_after_queued_before_poll);
    tcase_add_test(io, test_removed_reader_not_called);
    tcase_add_test(io, test_removed_writer_not_called);
    tcase_add_loop_test(io, test_replaced_reader, 0, 2);
    tcase_add_test(io, test_reader_removes_itself);
    suite_add_tcase(s, io);

    TCase *stop = tcase_create("stop");
    tcase_add_test(stop, test_stop_then_run_is_one_tick);
    tcase_add_test(stop, test_stop_from_callback);
    suite_add_tcase(s, stop);
    return s;
}

int main(void)
{
    return run_suite(ready_suite());
}
