/* check_heap.c -- the timer heap's contract (chapter 03).
 *
 * Two references:
 *   - a brute-force model: the multiset of entries in the heap, kept in a
 *     plain array.  Every pop must return an entry the model holds whose
 *     deadline is the model's smallest; after every operation the heap
 *     invariant is checked over the whole array;
 *   - CPython itself: heap_orders.h holds, for a set of operation lists
 *     with many equal deadlines, WHICH entry each heapq.heappop returned
 *     (gen_heap_orders.py ran the real heapq on TimerHandle-like objects).
 *     heap.c must return the same entries in the same order: ties included,
 *     which is what makes traces equal CPython's.
 *
 * Written against chapter 03's heap.h and run against every later stage.
 * The heap never dereferences handles, so the handles are addresses of the
 * slots of a static array: distinct, and the index is the entry's identity.
 *
 * Build (from the top of the repository):
 *   cc -std=c11 -I code/NN-slug tests/unit/check_heap.c build/NN-slug/libloop.a \
 *      $(pkg-config --cflags --libs check) -lpthread -lm
 */
#define _POSIX_C_SOURCE 200809L
#include "heap.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "heap_orders.h"
#include "check_main.h"
#include "rng.h"

/* item(i) and id_of(), and EXPECT(), which reports only the failures of the
 * model's millions of comparisons. */
#define NSLOTS 8192
#include "model.h"

/* A small fixed PRNG, so every run makes the same moves. */
static uint64_t rng_state;
static uint64_t rng(void) { return xorshift64star(&rng_state); }

static void check_invariant(const heap_t *h)
{
    for (size_t k = 1; k < h->len; k++)
        EXPECT(!(h->items[k].when < h->items[(k - 1) / 2].when),
               "heap invariant broken at %zu: %g < parent %g", k,
               h->items[k].when, h->items[(k - 1) / 2].when);
}

/* ---- the model ---------------------------------------------------------- */

static struct {
    heap_entry_t v[NSLOTS];
    size_t len;
} model;

/* Remove the popped entry from the model, after checking it was the
 * model's and had a smallest deadline. */
static void model_pop(heap_entry_t got)
{
    size_t at = model.len;
    double min = INFINITY;
    for (size_t i = 0; i < model.len; i++) {
        if (model.v[i].when < min)
            min = model.v[i].when;
        if (model.v[i].handle == got.handle)
            at = i;
    }
    EXPECT(at < model.len, "popped entry %zu is not in the heap", id_of(got.handle));
    EXPECT(model.v[at].when == got.when, "entry %zu came back with when %g, pushed %g",
           id_of(got.handle), got.when, model.v[at].when);
    EXPECT(got.when == min, "popped when %g, but %g is smaller", got.when, min);
    model.v[at] = model.v[--model.len];
}

/* ---- tests -------------------------------------------------------------- */

START_TEST(empty_heap)
{
    heap_t h;
    heap_init(&h);
    heap_entry_t e;
    ck_assert_uint_eq(heap_len(&h), 0);
    ck_assert_ptr_null(heap_top(&h));
    ck_assert(!heap_pop(&h, &e));
    heap_heapify(&h); /* of nothing: nothing happens */
    ck_assert_uint_eq(heap_len(&h), 0);
    heap_free(&h);
    heap_free(&h); /* freeing an empty heap again is harmless */
}
END_TEST

START_TEST(refuses_nan_and_null)
{
    heap_t h;
    heap_init(&h);
    errno = 0;
    ck_assert_int_eq(heap_push(&h, NAN, item(0)), -1);
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_int_eq(heap_push(&h, 1.0, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_uint_eq(heap_len(&h), 0);
    /* Infinities order like any other double. */
    ck_assert_int_eq(heap_push(&h, INFINITY, item(1)), 0);
    ck_assert_int_eq(heap_push(&h, -INFINITY, item(2)), 0);
    ck_assert_int_eq(heap_push(&h, 0.0, item(3)), 0);
    heap_entry_t e;
    ck_assert(heap_pop(&h, &e) && e.handle == item(2));
    ck_assert(heap_pop(&h, &e) && e.handle == item(3));
    ck_assert(heap_pop(&h, &e) && e.handle == item(1));
    heap_free(&h);
}
END_TEST

START_TEST(top_is_next_pop)
{
    heap_t h;
    heap_init(&h);
    double whens[] = {3, 1, 4, 1, 5, 9, 2, 6};
    for (size_t i = 0; i < 8; i++)
        ck_assert_int_eq(heap_push(&h, whens[i], item(i)), 0);
    while (heap_len(&h) > 0) {
        heap_entry_t top = *heap_top(&h), e;
        ck_assert(heap_pop(&h, &e));
        ck_assert(e.handle == top.handle && e.when == top.when);
    }
    heap_free(&h);
}
END_TEST

/* Random pushes and pops against the model, from fixed seeds; _i picks the
 * seed and how many distinct deadlines there are (few: many ties). */
START_TEST(random_against_model)
{
    static const unsigned distinct[] = {1, 2, 3, 10, 1000, 1u << 30};
    rng_state = 0x9E3779B97F4A7C15ULL * (uint64_t)(_i + 1);
    unsigned nwhen = distinct[_i % 6];
    heap_t h;
    heap_init(&h);
    model.len = 0;
    size_t next = 0;
    for (int step = 0; step < 20000; step++) {
        /* Grow for a while, then shrink, then grow again. */
        int phase = (step / 2500) % 2;
        bool pop = model.len > 0 &&
                   (model.len == NSLOTS - 1 || rng() % 100 < (phase ? 65u : 35u));
        if (pop) {
            heap_entry_t e;
            EXPECT(heap_pop(&h, &e), "pop from a heap of %zu failed", model.len);
            model_pop(e);
        } else {
            /* a slot not in the model: ids are reused only after a pop */
            handle_t *hd = item(next++);
            for (size_t i = 0; i < model.len; i++)
                if (model.v[i].handle == hd)
                    hd = item(next++), i = (size_t)-1;
            double when = (double)(rng() % nwhen) * 0.25 - 1.0;
            EXPECT(heap_push(&h, when, hd) == 0, "push failed");
            model.v[model.len++] = (heap_entry_t){when, hd};
        }
        EXPECT(heap_len(&h) == model.len, "len %zu, model %zu", heap_len(&h), model.len);
        if (step % 97 == 0)
            check_invariant(&h);
    }
    /* Drain: the deadlines come out sorted. */
    double last = -INFINITY;
    heap_entry_t e;
    while (heap_pop(&h, &e)) {
        EXPECT(!(e.when < last), "popped %g after %g", e.when, last);
        last = e.when;
        model_pop(e);
    }
    ck_assert_uint_eq(model.len, 0);
    heap_free(&h);
}
END_TEST

/* heapify of arbitrary arrays (sizes 0..300 and one large) makes a heap
 * that then pops every entry in deadline order. */
START_TEST(heapify_against_model)
{
    rng_state = 12345;
    heap_t h;
    heap_init(&h);
    for (size_t n = 0; n <= 300; n++) {
        for (size_t i = 0; i < n; i++)
            EXPECT(heap_push(&h, 0, item(i)) == 0, "push failed");
        model.len = 0;
        for (size_t i = 0; i < n; i++) {
            double when = (double)(rng() % (n / 4 + 1));
            h.items[i] = (heap_entry_t){when, item(i)}; /* any order */
            model.v[model.len++] = h.items[i];
        }
        heap_heapify(&h);
        check_invariant(&h);
        heap_entry_t e;
        while (heap_pop(&h, &e))
            model_pop(e);
        EXPECT(model.len == 0, "heapify lost %zu entries", model.len);
    }
    heap_free(&h);
}
END_TEST

/* Replay the operations of one recorded case; pops must return the same
 * entries as CPython's heapq did. */
START_TEST(same_order_as_cpython)
{
    const struct heap_order_case *c = &heap_order_cases[_i];
    heap_t h;
    heap_init(&h);
    size_t id = 0, npopped = 0;
    for (size_t i = 0; i < c->ninitial; i++, id++)
        EXPECT(heap_push(&h, 0, item(id)) == 0, "%s: push failed", c->name);
    for (size_t i = 0; i < c->ninitial; i++)
        h.items[i] = (heap_entry_t){(double)c->initial[i], item(i)};
    heap_heapify(&h);
    for (size_t i = 0; i < c->nops; i++) {
        if (c->ops[i] == HEAP_POP) {
            heap_entry_t e;
            EXPECT(heap_pop(&h, &e), "%s: pop %zu: heap empty", c->name, npopped);
            EXPECT(npopped < c->npopped, "%s: more pops than recorded", c->name);
            EXPECT(id_of(e.handle) == (size_t)c->popped[npopped],
                   "%s: pop %zu returned entry %zu (when %g); CPython's heapq returned %d",
                   c->name, npopped, id_of(e.handle), e.when, c->popped[npopped]);
            npopped++;
        } else {
            EXPECT(heap_push(&h, (double)c->ops[i], item(id++)) == 0, "%s: push failed",
                   c->name);
        }
    }
    ck_assert_uint_eq(npopped, c->npopped);
    ck_assert_uint_eq(heap_len(&h), 0);
    heap_free(&h);
}
END_TEST

/* The DESIGN's example, spelled out: 20 timers at one deadline and then a
 * later one do not fire in FIFO order. */
START_TEST(twenty_ties_not_fifo)
{
    static const size_t cpython[] = {0, 2, 6, 14, 13, 19, 18, 17, 16, 15, 5,
                                     11, 12, 10, 9, 8, 7, 1, 3, 4, 20};
    heap_t h;
    heap_init(&h);
    for (size_t i = 0; i < 20; i++)
        ck_assert_int_eq(heap_push(&h, 5.0, item(i)), 0);
    ck_assert_int_eq(heap_push(&h, 6.0, item(20)), 0);
    for (size_t k = 0; k < 21; k++) {
        heap_entry_t e;
        ck_assert(heap_pop(&h, &e));
        ck_assert_uint_eq(id_of(e.handle), cpython[k]);
    }
    heap_free(&h);
}
END_TEST

static Suite *heap_suite(void)
{
    Suite *s = suite_create("heap");
    TCase *tc = tcase_create("heap");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, empty_heap);
    tcase_add_test(tc, refuses_nan_and_null);
    tcase_add_test(tc, top_is_next_pop);
    tcase_add_loop_test(tc, random_against_model, 0, 12);
    tcase_add_test(tc, heapify_against_model);
    tcase_add_loop_test(tc, same_order_as_cpython, 0,
                        (int)(sizeof heap_order_cases / sizeof heap_order_cases[0]));
    tcase_add_test(tc, twenty_ties_not_fifo);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(heap_suite());
}
