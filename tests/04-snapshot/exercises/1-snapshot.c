/* Exercise 04.1 -- snapshot semantics, by your own hand.
 *
 * Passes when step 6 of run_once runs only the handles that are in the ready
 * deque when it begins: a callback queued by a callback waits for the next
 * tick (after another poll), so a callback that re-schedules itself lets a
 * reader in at once; the I/O handles and the due timers of the tick are part
 * of the snapshot; loop_stop() in a callback ends the run after the rest of
 * the snapshot, and nothing more.
 *
 *   make exercise CH=04            (against your code/04-snapshot/exercises/)
 *   make exercise CH=04 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"

/* virtual_loop() makes a loop on a virtual clock whose wait hook counts the
 * ticks in `ticks` (the loop calls it once per tick) and stops the loop
 * when there is nothing left to wait for; finish(loop) closes and frees it.
 * Each callback adds "name@tick" to the string `ran`, space-separated. */
#include "vloop.h"

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    label_add_at(arg, ticks);
}

/* ---- one tick runs what was there when step 6 began ------------------- */

static void queues_two(loop_t *loop, void *arg)
{
    note(loop, arg);
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "fourth"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "fifth"));
}

START_TEST(test_one_tick_runs_the_snapshot)
{
    loop_t *loop = virtual_loop();
    ck_assert_ptr_nonnull(loop_call_soon(loop, queues_two, "first"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "second"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "third"));
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(strcmp(ran, "first@1 second@1 third@1") == 0,
                  "one tick (stop() before run_forever()) ran \"%s\"; expected "
                  "\"first@1 second@1 third@1\": fourth and fifth were queued by "
                  "first, after the tick's snapshot was taken", ran);
    loop_stop(loop);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(strcmp(ran, "first@1 second@1 third@1 fourth@2 fifth@2") == 0,
                  "the second one-tick run should run fourth and fifth; ran \"%s\"", ran);
    finish(loop);
}
END_TEST

static void queues_inner(loop_t *loop, void *arg)
{
    note(loop, arg);
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "inner"));
}

START_TEST(test_nested_soon_runs_next_tick)
{
    /* tests/04-snapshot/nested-soon.scn, in C. */
    loop_t *loop = virtual_loop();
    ck_assert_ptr_nonnull(loop_call_later(loop, 0, note, "t0"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, queues_inner, "outer"));
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.5, note, "t1"));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(strcmp(ran, "outer@1 t0@1 inner@2 t1@3") == 0,
                  "ran \"%s\"; expected \"outer@1 t0@1 inner@2 t1@3\" (inner is "
                  "queued by outer, so it waits for tick 2)", ran);
    finish(loop);
}
END_TEST

/* ---- the snapshot includes the tick's I/O and due timers --------------- */

static int pair[2];

static void reader(loop_t *loop, void *arg)
{
    char c;
    ck_assert_int_eq(read(pair[0], &c, 1), 1);
    ck_assert_int_eq(loop_remove_reader(loop, pair[0]), 1);
    note(loop, arg);
}

static void make_pair_with_a_byte(void)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    ck_assert_int_eq(write(pair[1], "x", 1), 1);
}

START_TEST(test_io_and_due_timers_are_in_the_snapshot)
{
    loop_t *loop = virtual_loop();
    make_pair_with_a_byte();
    ck_assert_ptr_nonnull(loop_call_later(loop, 0, note, "timer"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "soon"));
    ck_assert_int_eq(loop_add_reader(loop, pair[0], reader, "reader"), 0);
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(strcmp(ran, "soon@1 reader@1 timer@1") == 0,
                  "ran \"%s\"; expected \"soon@1 reader@1 timer@1\": the snapshot "
                  "is taken AFTER the poll queued the reader and step 5 queued "
                  "the due timer, not at the top of run_once", ran);
    finish(loop);
    close(pair[0]);
    close(pair[1]);
}
END_TEST

/* ---- a callback that re-schedules itself no longer starves I/O --------- */

#define SPIN_BOUND 100 /* so that an unsolved loop ends too */
static int spins, spins_when_read, spin_tick[SPIN_BOUND + 1];

static void spin(loop_t *loop, void *arg)
{
    (void)arg;
    spins++;
    spin_tick[spins] = ticks;
    if (spins < SPIN_BOUND)
        ck_assert_ptr_nonnull(loop_call_soon(loop, spin, NULL));
}

static void counting_reader(loop_t *loop, void *arg)
{
    (void)arg;
    char c;
    ck_assert_int_eq(read(pair[0], &c, 1), 1);
    ck_assert_int_eq(loop_remove_reader(loop, pair[0]), 1);
    spins_when_read = spins;
}

/* demo_starve's start: the reader is added during tick 1, after its poll. */
static void start(loop_t *loop, void *arg)
{
    (void)arg;
    ck_assert_int_eq(loop_add_reader(loop, pair[0], counting_reader, NULL), 0);
    ck_assert_ptr_nonnull(loop_call_soon(loop, spin, NULL));
}

START_TEST(test_spin_does_not_starve_a_reader)
{
    loop_t *loop = virtual_loop();
    make_pair_with_a_byte();
    spins = 0;
    spins_when_read = -1;
    ck_assert_ptr_nonnull(loop_call_soon(loop, start, NULL));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(spins_when_read == 1,
                  "the reader ran after %d spins; expected 1 (tick 2 polls, "
                  "queues the reader behind the first spin, and runs both)",
                  spins_when_read);
    ck_assert_int_eq(spins, SPIN_BOUND);
    for (int k = 1; k <= SPIN_BOUND; k++)
        ck_assert_msg(spin_tick[k] == k + 1, "spin %d ran in tick %d, expected tick %d "
                      "(one spin per tick, from tick 2)", k, spin_tick[k], k + 1);
    finish(loop);
    close(pair[0]);
    close(pair[1]);
}
END_TEST

/* ---- loop_stop() in a callback ----------------------------------------- */

static void stopper(loop_t *loop, void *arg)
{
    note(loop, arg);
    loop_stop(loop);
}

static void queues_d(loop_t *loop, void *arg)
{
    note(loop, arg);
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "d"));
}

START_TEST(test_stop_finishes_the_snapshot_only)
{
    /* tests/conformance/scenarios/stop-in-callback.scn, in C. */
    loop_t *loop = virtual_loop();
    ck_assert_ptr_nonnull(loop_call_soon(loop, stopper, "a"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, queues_d, "b"));
    ck_assert_ptr_nonnull(loop_call_soon(loop, note, "c"));
    ck_assert_ptr_nonnull(loop_call_later(loop, 1, note, "never"));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_msg(strcmp(ran, "a@1 b@1 c@1") == 0,
                  "ran \"%s\"; expected \"a@1 b@1 c@1\": stop() lets the rest of "
                  "the snapshot run, and d, queued by b, is not in it", ran);
    finish(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 04.1: snapshot");
    TCase *tc = tcase_create("snapshot");
    tcase_add_test(tc, test_one_tick_runs_the_snapshot);
    tcase_add_test(tc, test_nested_soon_runs_next_tick);
    tcase_add_test(tc, test_io_and_due_timers_are_in_the_snapshot);
    tcase_add_test(tc, test_spin_does_not_starve_a_reader);
    tcase_add_test(tc, test_stop_finishes_the_snapshot_only);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
