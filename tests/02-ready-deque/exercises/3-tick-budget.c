/* Exercise 02.3 -- a budget of callbacks per tick.
 *
 * Passes when loop_set_tick_budget(loop, N) makes every tick pop at most N
 * handles, keeps the rest in FIFO order for the next ticks, lets a reader
 * run while a callback keeps re-scheduling itself, and never queues one
 * I/O handle twice.
 *
 *   make exercise CH=02            (against your code/02-ready-deque/exercises/)
 *   make exercise CH=02 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"

static loop_t *new_loop(size_t budget)
{
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    ck_assert_int_eq(loop_set_tick_budget(loop, budget), 0);
    return loop;
}

static void one_tick(loop_t *loop)
{
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
}

static void done(loop_t *loop)
{
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}

/* ---- the budget itself ------------------------------------------------- */

static int ran;
static void count_cb(loop_t *loop, void *arg)
{
    (void)loop;
    int i = (int)(long)arg;
    ck_assert_msg(i == ran, "callback #%d ran when #%d was expected", i, ran);
    ran++;
}

START_TEST(test_at_most_n_per_tick)
{
    loop_t *loop = new_loop(3);
    ran = 0;
    for (long i = 0; i < 10; i++)
        ck_assert_ptr_nonnull(loop_call_soon(loop, count_cb, (void *)i));
    one_tick(loop);
    ck_assert_msg(ran == 3, "the first tick ran %d callbacks, not 3", ran);
    one_tick(loop);
    ck_assert_int_eq(ran, 6);
    one_tick(loop);
    ck_assert_int_eq(ran, 9);
    one_tick(loop);
    ck_assert_int_eq(ran, 10);
    one_tick(loop);
    ck_assert_int_eq(ran, 10);
    done(loop);
}
END_TEST

START_TEST(test_zero_is_no_limit)
{
    loop_t *loop = new_loop(0);
    ran = 0;
    for (long i = 0; i < 10; i++)
        ck_assert_ptr_nonnull(loop_call_soon(loop, count_cb, (void *)i));
    one_tick(loop);
    ck_assert_int_eq(ran, 10);
    done(loop);
}
END_TEST

/* Without stop(): the leftovers must make the next poll non-blocking, or
 * run_forever would sleep in select() with callbacks waiting. */
static void last_cb(loop_t *loop, void *arg)
{
    (void)arg;
    ran++;
    loop_stop(loop);
}

START_TEST(test_leftovers_do_not_block)
{
    loop_t *loop = new_loop(2);
    ran = 0;
    for (long i = 0; i < 7; i++)
        ck_assert_ptr_nonnull(loop_call_soon(loop, count_cb, (void *)i));
    ck_assert_ptr_nonnull(loop_call_soon(loop, last_cb, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(ran, 8);
    done(loop);
}
END_TEST

/* ---- starvation, bounded ----------------------------------------------- */

#define SPIN_BOUND 50
static int sv[2], spins, spins_seen_by_reader;

static void spin(loop_t *loop, void *arg)
{
    if (++spins < SPIN_BOUND)
        ck_assert_ptr_nonnull(loop_call_soon(loop, spin, arg));
}

static void reader(loop_t *loop, void *arg)
{
    (void)arg;
    char byte;
    ck_assert_int_eq(read(sv[1], &byte, 1), 1);
    spins_seen_by_reader = spins;
    loop_remove_reader(loop, sv[1]);
    loop_stop(loop);
}

static void start(loop_t *loop, void *arg)
{
    (void)arg;
    ck_assert_int_eq(loop_add_reader(loop, sv[1], reader, NULL), 0);
    ck_assert_ptr_nonnull(loop_call_soon(loop, spin, NULL));
}

START_TEST(test_reader_not_starved)
{
    const size_t budget = 4;
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(write(sv[0], "x", 1), 1);
    spins = spins_seen_by_reader = 0;
    loop_t *loop = new_loop(budget);
    ck_assert_ptr_nonnull(loop_call_soon(loop, start, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(spins_seen_by_reader > 0 &&
                      spins_seen_by_reader <= (int)budget,
                  "the reader ran after %d spins; with a budget of %zu per "
                  "tick it should run after at most %zu",
                  spins_seen_by_reader, budget, budget);
    done(loop);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

/* ---- an I/O handle is queued once -------------------------------------- */

/* Budget 1, two callbacks queued before the reader: the reader's handle is
 * still waiting in the deque when the next polls report its fd again. */
static int reads, spurious;

static void finish(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

static void byte_reader(loop_t *loop, void *arg)
{
    (void)arg;
    char byte;
    if (read(sv[1], &byte, 1) != 1) {
        spurious++; /* called with nothing to read */
        return;
    }
    if (++reads == 2) {
        loop_remove_reader(loop, sv[1]);
        ck_assert_ptr_nonnull(loop_call_soon(loop, finish, NULL));
    }
}

static void nothing(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

START_TEST(test_io_handle_queued_once)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
    ck_assert_int_eq(write(sv[0], "ab", 2), 2);
    reads = spurious = 0;
    loop_t *loop = new_loop(1);
    ck_assert_int_eq(loop_add_reader(loop, sv[1], byte_reader, NULL), 0);
    ck_assert_ptr_nonnull(loop_call_soon(loop, nothing, NULL));
    ck_assert_ptr_nonnull(loop_call_soon(loop, nothing, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(reads, 2);
    ck_assert_msg(spurious == 0,
                  "the reader was called %d times with nothing to read: its "
                  "handle was queued again while it was still queued",
                  spurious);
    done(loop);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 02.3: a budget per tick");
    TCase *tc = tcase_create("budget");
    tcase_add_test(tc, test_at_most_n_per_tick);
    tcase_add_test(tc, test_zero_is_no_limit);
    tcase_add_test(tc, test_leftovers_do_not_block);
    tcase_add_test(tc, test_reader_not_starved);
    tcase_add_test(tc, test_io_handle_queued_once);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
