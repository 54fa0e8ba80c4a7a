/* check_snapshot.c -- snapshot semantics (chapter 04).
 *
 * Written against chapter 04's loop.h and run against every later stage:
 * a tick runs the ntodo = len(ready) handles that are in the ready deque
 * after the poll and the due timers were queued, and no more:
 *   - what a callback queues with call_soon runs in the next tick, after
 *     another poll (with timeout 0, since the deque is not empty);
 *   - the due timers and the I/O handles of the tick are in the snapshot;
 *   - a callback that re-schedules itself forever does not starve a reader;
 *   - loop_stop() in a callback ends the loop after the rest of the
 *     snapshot has run, not before.
 * Ticks are counted by a wait hook on the virtual clock.
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/NN-slug tests/unit/check_snapshot.c build/NN-slug/libloop.a \
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

/* virtual_loop(): ticks counted, timeouts[] recorded; "name@tick" of each
 * callback run, space-separated, in ran. */
#include "vloop.h"

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    label_add_at(arg, ticks);
}

static void queues_inner(loop_t *loop, void *arg)
{
    note(loop, arg);
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "inner"));
}

START_TEST(nested_soon_runs_next_tick)
{
    loop_t *loop = virtual_loop();
    loop_call_later(loop, 0, note, "t0");
    loop_call_soon(loop, queues_inner, "outer");
    loop_call_soon(loop, note, "second");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "outer@1 second@1 t0@1 inner@2");
    ck_assert(timeouts[1] == 0); /* inner was ready: the poll only looked */
    finish(loop);
}
END_TEST

/* Article 000, 6.1.4, tick by tick. */
START_TEST(soon_before_later0_same_tick)
{
    loop_t *loop = virtual_loop();
    loop_call_later(loop, 0, note, "later0");
    loop_call_soon(loop, note, "soon");
    loop_call_soon(loop, note, "soon2");
    loop_call_later(loop, 0, note, "later0_2");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "soon@1 soon2@1 later0@1 later0_2@1");
    finish(loop);
}
END_TEST

/* A chain of call_soon: one link per tick. */
static int links;
static void chain(loop_t *loop, void *arg)
{
    note(loop, arg);
    if (++links < 5)
        loop_call_soon(loop, chain, arg);
}

START_TEST(one_link_per_tick)
{
    loop_t *loop = virtual_loop();
    links = 0;
    loop_call_soon(loop, chain, "c");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "c@1 c@2 c@3 c@4 c@5");
    finish(loop);
}
END_TEST

/* stop() in a callback: the rest of the snapshot still runs. */
static void stops(loop_t *loop, void *arg)
{
    note(loop, arg);
    loop_stop(loop);
    loop_call_soon(loop, note, "queued_after_stop");
}

START_TEST(stop_finishes_the_snapshot)
{
    loop_t *loop = virtual_loop();
    loop_call_soon(loop, stops, "a");
    loop_call_soon(loop, note, "b");
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "a@1 b@1");
    ticks = 0;
    labels_reset();
    loop_stop(loop); /* one more tick runs what was left */
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "queued_after_stop@1");
    finish(loop);
}
END_TEST

/* A callback that re-schedules itself forever; a byte waits on a socket.
 * The reader runs in the second tick, after one spin. */
static int sv[2];
static int spins;

static void spin(loop_t *loop, void *arg)
{
    (void)arg;
    spins++;
    ck_assert_ptr_nonnull(loop_call_soon(loop, spin, NULL));
}

static void reader(loop_t *loop, void *arg)
{
    (void)arg;
    char byte;
    ck_assert_int_eq(read(sv[1], &byte, 1), 1);
    note(loop, "reader");
    loop_remove_reader(loop, sv[1]);
    loop_stop(loop);
}

START_TEST(spin_does_not_starve_io)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(write(sv[0], "x", 1), 1);
    loop_t *loop = virtual_loop();
    spins = 0;
    ck_assert_int_eq(loop_add_reader(loop, sv[1], reader, NULL), 0);
    loop_call_soon(loop, spin, NULL);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_str_eq(ran, "reader@1");
    ck_assert_int_eq(spins, 1);
    finish(loop); /* frees the spin still queued */
    close(sv[0]);
    close(sv[1]);
}
END_TEST

static Suite *snapshot_suite(void)
{
    Suite *s = suite_create("snapshot");
    TCase *tc = tcase_create("snapshot");
    tcase_add_test(tc, nested_soon_runs_next_tick);
    tcase_add_test(tc, soon_before_later0_same_tick);
    tcase_add_test(tc, one_link_per_tick);
    tcase_add_test(tc, stop_finishes_the_snapshot);
    tcase_add_test(tc, spin_does_not_starve_io);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(snapshot_suite());
}
