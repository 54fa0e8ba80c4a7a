/* check_deque.c -- the ready deque's contract (chapter 02).
 *
 * Written against chapter 02's deque.h and run against every later stage
 * (tests/suites.mk), so it tests what the deque promises -- FIFO order,
 * len, NULL from an empty pop, growth that keeps the order -- and never
 * its capacity policy (the first size, the growth factor), which a later
 * stage may tune.  The reference is a model: a plain array with a front
 * index, too simple to be wrong.
 *
 * The deque only stores pointers and never dereferences them, so the items
 * are addresses of the slots of a static array: distinct, and checkable.
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/NN-slug tests/unit/check_deque.c build/NN-slug/libloop.a \
 *      $(pkg-config --cflags --libs check) -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include "deque.h"

#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_main.h"
#include "rng.h"

/* ---- items and the model ----------------------------------------------- */

/* item(i), the i-th distinct item, and EXPECT(), which reports only the
 * failures of the model's millions of comparisons. */
#define NSLOTS (1u << 18)
#include "model.h"

/* The model: items model.v[front .. back) are in the deque, front first. */
static struct {
    size_t *v;
    size_t front, back, cap;
} model;

static void model_reset(size_t cap)
{
    free(model.v);
    model.v = malloc(cap * sizeof *model.v);
    EXPECT(model.v != NULL, "out of memory for the model");
    model.front = model.back = 0;
    model.cap = cap;
}

static void model_free(void)
{
    free(model.v);
    model.v = NULL;
}

/* A small deterministic generator (xorshift32), so that every run and every
 * stage sees the same sequences. */
static uint32_t rng_state;
static uint32_t rng(void) { return xorshift32(&rng_state); }

static void push(deque_t *d, size_t i)
{
    EXPECT(deque_push_back(d, item(i)) == 0, "push_back #%zu failed", i);
    EXPECT(model.back < model.cap, "the test's model is too small");
    model.v[model.back++] = i;
    EXPECT(deque_len(d) == model.back - model.front,
           "len is %zu after a push, the model says %zu", deque_len(d),
           model.back - model.front);
}

static void pop(deque_t *d)
{
    handle_t *h = deque_pop_front(d);
    if (model.front == model.back) {
        EXPECT(h == NULL, "pop from an empty deque returned an item");
    } else {
        size_t want = model.v[model.front++];
        EXPECT(h == item(want), "popped the wrong item: wanted #%zu", want);
    }
    EXPECT(deque_len(d) == model.back - model.front,
           "len is %zu after a pop, the model says %zu", deque_len(d),
           model.back - model.front);
}

static void drain_and_check(deque_t *d)
{
    while (model.front < model.back)
        pop(d);
    pop(d); /* and one more: empty */
    EXPECT(deque_len(d) == 0, "len is %zu after draining", deque_len(d));
}

/* ---- tests ------------------------------------------------------------- */

START_TEST(test_empty)
{
    deque_t d;
    deque_init(&d);
    ck_assert_uint_eq(deque_len(&d), 0);
    ck_assert_ptr_null(deque_pop_front(&d));
    ck_assert_ptr_null(deque_pop_front(&d));
    ck_assert_uint_eq(deque_len(&d), 0);
    deque_free(&d);
    deque_free(&d); /* freeing an empty, freed deque is harmless */
}
END_TEST

START_TEST(test_fifo)
{
    deque_t d;
    deque_init(&d);
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_eq(deque_push_back(&d, item(i)), 0);
    ck_assert_uint_eq(deque_len(&d), 3);
    ck_assert_ptr_eq(deque_pop_front(&d), item(0));
    ck_assert_ptr_eq(deque_pop_front(&d), item(1));
    ck_assert_int_eq(deque_push_back(&d, item(3)), 0);
    ck_assert_ptr_eq(deque_pop_front(&d), item(2));
    ck_assert_ptr_eq(deque_pop_front(&d), item(3));
    ck_assert_ptr_null(deque_pop_front(&d));
    deque_free(&d);
}
END_TEST

START_TEST(test_null_refused)
{
    deque_t d;
    deque_init(&d);
    errno = 0;
    ck_assert_int_eq(deque_push_back(&d, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_uint_eq(deque_len(&d), 0);
    ck_assert_ptr_null(deque_pop_front(&d));
    deque_free(&d);
}
END_TEST

/* The same item may be queued more than once: the deque holds pointers. */
START_TEST(test_duplicates)
{
    deque_t d;
    deque_init(&d);
    for (size_t i = 0; i < 100; i++)
        EXPECT(deque_push_back(&d, item(i % 2)) == 0, "push #%zu failed", i);
    for (size_t i = 0; i < 100; i++)
        EXPECT(deque_pop_front(&d) == item(i % 2), "pop #%zu is wrong", i);
    deque_free(&d);
}
END_TEST

/* Fill with n items, empty, fill again, empty. */
static void fill_twice(size_t n)
{
    deque_t d;
    deque_init(&d);
    model_reset(2 * n + 1);
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < n; i++)
            push(&d, model.back);
        drain_and_check(&d);
    }
    deque_free(&d);
}

/* Growth from empty keeps the order, and a grown deque is reused: for n
 * around every power of two up to 4096 (the sizes where a ring buffer of
 * power-of-two capacity grows, whatever its first capacity). */
START_TEST(test_growth)
{
    for (size_t k = 0; k <= 12; k++) {
        size_t p = (size_t)1 << k;
        fill_twice(p - 1);
        fill_twice(p);
        fill_twice(p + 1);
    }
    model_free();
}
END_TEST

/* Keep the front moving, so that the items wrap around the end of the array,
 * then grow while they are wrapped: for every offset of the front and every
 * fill level around it, the order must survive.  Whatever the capacity
 * policy, some of these pushes grow a wrapped deque. */
START_TEST(test_wrap_then_grow)
{
    for (size_t keep = 1; keep <= 40; keep++) {
        for (size_t shift = 0; shift <= 40; shift++) {
            deque_t d;
            deque_init(&d);
            model_reset(keep + 2 * shift + 200);
            for (size_t i = 0; i < keep; i++)
                push(&d, model.back);
            for (size_t i = 0; i < shift; i++) { /* rotate: front moves */
                pop(&d);
                push(&d, model.back);
            }
            for (size_t i = 0; i < shift + 100; i++) /* now grow */
                push(&d, model.back);
            drain_and_check(&d);
            deque_free(&d);
        }
    }
    model_free();
}
END_TEST

/* Random push / pop sequences from fixed seeds, against the model.  Each
 * sequence leans one way (more pushes or more pops) in phases, so the deque
 * both grows large and empties repeatedly, popping when empty included. */
START_TEST(test_random)
{
    static const uint32_t seeds[] = {1, 2, 3, 12345, 0xdeadbeef, 20240601};
    const size_t steps = 200000;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        rng_state = seeds[s];
        deque_t d;
        deque_init(&d);
        model_reset(steps);
        uint32_t push_percent = 50;
        for (size_t step = 0; step < steps; step++) {
            if (step % 5000 == 0)
                push_percent = 20 + rng() % 61; /* a new phase: 20..80 */
            if (rng() % 100 < push_percent)
                push(&d, model.back);
            else
                pop(&d);
        }
        drain_and_check(&d);
        deque_free(&d);
    }
    model_free();
}
END_TEST

/* A large deque: a quarter of a million items in, then out, in order. */
START_TEST(test_large)
{
    deque_t d;
    deque_init(&d);
    model_reset(NSLOTS);
    for (size_t i = 0; i < NSLOTS / 2; i++)
        push(&d, model.back);
    for (size_t i = 0; i < NSLOTS / 4; i++)
        pop(&d);
    for (size_t i = 0; i < NSLOTS / 2; i++) /* wraps, then grows */
        push(&d, model.back);
    drain_and_check(&d);
    deque_free(&d);
    model_free();
}
END_TEST

/* deque_free leaves an empty deque that can be used again. */
START_TEST(test_free_then_reuse)
{
    deque_t d;
    deque_init(&d);
    for (size_t i = 0; i < 100; i++)
        ck_assert_int_eq(deque_push_back(&d, item(i)), 0);
    deque_free(&d);
    ck_assert_uint_eq(deque_len(&d), 0);
    ck_assert_ptr_null(deque_pop_front(&d));
    for (size_t i = 0; i < 10; i++)
        ck_assert_int_eq(deque_push_back(&d, item(i)), 0);
    for (size_t i = 0; i < 10; i++)
        ck_assert_ptr_eq(deque_pop_front(&d), item(i));
    deque_free(&d);
}
END_TEST

static Suite *deque_suite(void)
{
    Suite *s = suite_create("deque");
    TCase *tc = tcase_create("contract");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_fifo);
    tcase_add_test(tc, test_null_refused);
    tcase_add_test(tc, test_duplicates);
    tcase_add_test(tc, test_growth);
    tcase_add_test(tc, test_wrap_then_grow);
    tcase_add_test(tc, test_random);
    tcase_add_test(tc, test_large);
    tcase_add_test(tc, test_free_then_reuse);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(deque_suite());
}
