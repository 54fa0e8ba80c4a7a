/* Exercise 1 (chapter 11): the handle pool.
 *
 * Write pool_get() and pool_put() in loop.c: a handle comes from the
 * loop's pool -- the top of its free list, else the next fresh slot of its
 * newest slab, else a new slab -- and a released handle goes back onto the
 * free list, to be the next one handed out.  What the tests check:
 *   - after a warm-up, queueing and running handles asks malloc for
 *     nothing (the program counts every malloc, calloc and realloc of the
 *     loop's thread: counting.h);
 *   - a cold pool asks malloc once per slab, not once per handle;
 *   - the handle released last is the next one handed out (a stack: the
 *     warmest memory first);
 *   - when malloc fails for a new slab, the call is refused (NULL, ENOMEM)
 *     and every call accepted before it still runs, once, in order;
 *   - a handle kept past loop_free() may still be cancelled and released
 *     (loop.h, "ownership"), and the pool goes with the last one (valgrind
 *     and AddressSanitizer check that nothing leaks or is touched after);
 *   - under AddressSanitizer, or valgrind, a released handle's slot is
 *     poisoned: a use after release is still caught.
 */
#define _GNU_SOURCE 1
#include "counting.h"

#include "loop.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#elif defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define TEST_VALGRIND 1
#endif
#endif

#include "check_main.h"

/* ------------------------------------------------------------ helpers */
static long ran_count;
static long ran_log[20000];

static void record(loop_t *loop, void *arg)
{
    (void)loop;
    if (ran_count < (long)(sizeof ran_log / sizeof ran_log[0]))
        ran_log[ran_count] = (long)(intptr_t)arg;
    ran_count++;
}

static void nothing(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

static void stop(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* Check's assertions talk to the parent process (each one that passes
 * marks a point, which allocates): inside a counted stretch, calls are
 * checked with `refusals` instead, and asserted after it. */
static long refusals;

/* Run one tick: what is queued now, then the stop queued behind it. */
static void run_tick(loop_t *loop)
{
    refusals += loop_call_soon(loop, stop, NULL) == NULL;
    refusals += loop_run_forever(loop) != 0;
}

/* Queue n call_soons and run them: n handles handed out, then released. */
static void cycle(loop_t *loop, int n)
{
    for (int i = 0; i < n; i++)
        refusals += loop_call_soon(loop, nothing, NULL) == NULL;
    run_tick(loop);
}

static loop_t *new_loop(void)
{
    refusals = 0;
    loop_t *loop = loop_new();
    ck_assert_ptr_nonnull(loop);
    return loop;
}

static void end_loop(loop_t *loop)
{
    ck_assert_msg(refusals == 0, "%ld calls refused", refusals);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
}

/* -------------------------------------------------------------- tests */
START_TEST(a_steady_state_asks_malloc_for_nothing)
{
    if (!counting_mallocs()) {
        puts("skipped: valgrind or a sanitizer brings its own malloc, which this test cannot count");
        return;
    }
    loop_t *loop = new_loop();
    for (int r = 0; r < 3; r++) /* warm-up: the pool and the deque grow */
        cycle(loop, 1000);
    long before = counted_mallocs;
    for (int r = 0; r < 50; r++)
        cycle(loop, 1000);
    long soon = counted_mallocs - before;
    /* Timers too: a timer's handle comes from the same pool. */
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < 1000; i++)
            refusals += loop_call_later(loop, 0, nothing, NULL) == NULL;
        run_tick(loop);
    }
    before = counted_mallocs;
    for (int r = 0; r < 20; r++) {
        for (int i = 0; i < 1000; i++) {
            handle_t *h = loop_call_later(loop, 10 + i, nothing, NULL);
            refusals += h == NULL;
            handle_cancel(h);
        }
        run_tick(loop); /* the heap is rebuilt: every handle released */
    }
    long later = counted_mallocs - before;
    ck_assert_int_eq(refusals, 0);
    ck_assert_msg(soon == 0,
                  "%ld mallocs for 50,000 call_soons queued and run after a warm-up of 1,000 "
                  "at a time: a released handle should go back to the pool, and the next "
                  "one come from there, not from malloc",
                  soon);
    ck_assert_msg(later == 0,
                  "%ld mallocs for 20,000 timers scheduled and cancelled after a warm-up: "
                  "timers' handles come from the pool too",
                  later);
    end_loop(loop);
}
END_TEST

START_TEST(a_cold_pool_asks_malloc_once_per_slab)
{
    if (!counting_mallocs()) {
        puts("skipped: valgrind or a sanitizer brings its own malloc, which this test cannot count");
        return;
    }
    loop_t *loop = new_loop();
    long before = counted_mallocs;
    for (int i = 0; i < 4000; i++)
        refusals += loop_call_soon(loop, nothing, NULL) == NULL;
    long n = counted_mallocs - before;
    ck_assert_int_eq(refusals, 0);
    /* 4,000 handles: a few slabs, and the ready deque's doublings. */
    ck_assert_msg(n <= 4000 / 16,
                  "%ld mallocs to queue 4,000 call_soons on a new loop: a slab holds many "
                  "handles, and one malloc should make room for all of them",
                  n);
    run_tick(loop);
    end_loop(loop);
}
END_TEST

START_TEST(the_handle_released_last_is_handed_out_first)
{
    loop_t *loop = new_loop();
    cycle(loop, 1000);
    /* One handle: queued, run (released), and its slot is the next one. */
    handle_t *first = loop_call_soon(loop, nothing, NULL);
    ck_assert_ptr_nonnull(first);
    run_tick(loop); /* releases `first`, then the stop's handle */
    handle_t *stop_slot = loop_call_soon(loop, nothing, NULL);
    handle_t *next = loop_call_soon(loop, nothing, NULL);
    /* The stop's handle was released after `first`: it comes back first. */
    ck_assert_msg(next == first,
                  "a handle ran and was released, then the stop's: the next two handed out "
                  "should be the stop's and that one (%p), but the second is %p: the free "
                  "list is a stack, the last released first",
                  (void *)first, (void *)next);
    (void)stop_slot;
    run_tick(loop);
    /* Three at once: released a, b, c (and the stop), handed out stop, c, b, a. */
    handle_t *abc[3];
    for (int i = 0; i < 3; i++)
        abc[i] = loop_call_soon(loop, nothing, NULL);
    run_tick(loop);
    ck_assert_ptr_nonnull(loop_call_soon(loop, nothing, NULL)); /* the stop's slot */
    for (int i = 2; i >= 0; i--) {
        handle_t *h = loop_call_soon(loop, nothing, NULL);
        ck_assert_msg(h == abc[i],
                      "after a, b, c ran, the next handles should be c, b, a: the %s one "
                      "is %p, not %p",
                      i == 2 ? "first" : i == 1 ? "second" : "third", (void *)h,
                      (void *)abc[i]);
    }
    run_tick(loop);
    end_loop(loop);
}
END_TEST

START_TEST(a_failed_slab_refuses_the_call_and_loses_nothing)
{
    if (!counting_mallocs()) {
        puts("skipped: valgrind or a sanitizer brings its own malloc, which this test cannot make fail");
        return;
    }
    loop_t *loop = new_loop();
    cycle(loop, 3000); /* 3,000 released slots, and a ready deque for 4,096 */
    ran_count = 0;
    long accepted = 0;
    handle_t *refused = NULL;
    int err = 0;
    counting_fail(1); /* from now on every malloc of this thread fails */
    for (long i = 0; i < 100000; i++) {
        handle_t *h = loop_call_soon(loop, record, (void *)(intptr_t)i);
        if (h == NULL) {
            err = errno;
            refused = h;
            break;
        }
        accepted++;
    }
    counting_fail(0);
    ck_assert_msg(accepted < 100000,
                  "100,000 call_soons accepted while malloc failed: where did their "
                  "handles come from?");
    ck_assert_ptr_null(refused);
    ck_assert_msg(err == ENOMEM, "refused with errno %d (%s), not ENOMEM", err, strerror(err));
    ck_assert_msg(accepted >= 3000,
                  "only %ld call_soons accepted while malloc failed, with 3,000 released "
                  "handles in the pool: they should be handed out again without malloc",
                  accepted);
    run_tick(loop);
    ck_assert_msg(ran_count == accepted, "%ld calls accepted, %ld ran", accepted, ran_count);
    for (long i = 0; i < accepted && i < 20000; i++)
        ck_assert_msg(ran_log[i] == i, "the %ld-th callback to run was call %ld", i, ran_log[i]);
    /* malloc works again: so does the pool. */
    ran_count = 0;
    for (long i = 0; i < 1000; i++)
        ck_assert_ptr_nonnull(loop_call_soon(loop, record, (void *)(intptr_t)i));
    run_tick(loop);
    ck_assert_int_eq(ran_count, 1000);
    end_loop(loop);
}
END_TEST

static void cancel_other(loop_t *loop, void *arg)
{
    (void)loop;
    handle_cancel(arg);
}

START_TEST(a_kept_handle_outlives_its_loop)
{
    loop_t *loop = new_loop();
    cycle(loop, 300);
    /* One that ran, one never run (dropped by loop_close), one timer. */
    handle_t *ran = loop_call_soon(loop, record, NULL);
    handle_retain(ran);
    handle_t *timer = loop_call_later(loop, 3600, nothing, NULL);
    handle_retain(timer);
    ck_assert_ptr_nonnull(loop_call_soon(loop, cancel_other, ran)); /* after it ran: a no-op */
    run_tick(loop);
    handle_t *queued = loop_call_soon(loop, nothing, NULL);
    handle_retain(queued);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    /* The loop is gone; its handles' pool stays while one is kept. */
    handle_cancel(ran);
    handle_cancel(timer);
    handle_cancel(queued);
    ck_assert_int_eq(handle_cancelled(ran), 1);
    ck_assert_int_eq(handle_cancelled(timer), 1);
    ck_assert_int_eq(handle_cancelled(queued), 1);
    handle_release(ran);
    handle_release(queued);
    handle_cancel(timer); /* twice: still safe */
    handle_release(timer); /* the last one: the pool goes with it */
}
END_TEST

START_TEST(a_released_handle_is_poisoned)
{
    loop_t *loop = new_loop();
    cycle(loop, 10);
    handle_t *h = loop_call_soon(loop, nothing, NULL);
    ck_assert_ptr_nonnull(h);
#if defined(TEST_ASAN)
    ck_assert_msg(!__asan_address_is_poisoned(h), "a handle handed out is poisoned");
    run_tick(loop);
    ck_assert_msg(__asan_address_is_poisoned(h),
                  "a released handle's slot is not poisoned: AddressSanitizer would miss "
                  "a use after release (SLOT_FREED)");
#elif defined(TEST_VALGRIND)
    if (RUNNING_ON_VALGRIND) {
        unsigned char bits[1];
        ck_assert_int_eq(VALGRIND_GET_VBITS(h, bits, 1), 1); /* addressable */
        run_tick(loop);
        ck_assert_msg(VALGRIND_GET_VBITS(h, bits, 1) == 3,
                      "a released handle's slot is still addressable: valgrind would "
                      "miss a use after release (SLOT_FREED)");
    } else {
        puts("skipped: run under AddressSanitizer or valgrind");
        run_tick(loop);
    }
#else
    puts("skipped: run under AddressSanitizer or valgrind");
    run_tick(loop);
#endif
    end_loop(loop);
}
END_TEST

static Suite *pool_suite(void)
{
    Suite *s = suite_create("exercise 1: the handle pool");
    TCase *tc = tcase_create("pool");
    tcase_add_test(tc, a_steady_state_asks_malloc_for_nothing);
    tcase_add_test(tc, a_cold_pool_asks_malloc_once_per_slab);
    tcase_add_test(tc, the_handle_released_last_is_handed_out_first);
    tcase_add_test(tc, a_failed_slab_refuses_the_call_and_loses_nothing);
    tcase_add_test(tc, a_kept_handle_outlives_its_loop);
    tcase_add_test(tc, a_released_handle_is_poisoned);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(pool_suite());
}
