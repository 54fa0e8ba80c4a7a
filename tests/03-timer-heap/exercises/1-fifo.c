/* Exercise 03.1 -- a FIFO tie-break for the timer heap.
 *
 * Passes when timers with equal deadlines run in the order they were
 * scheduled (first in, first out), as libuv's start_id makes them, while
 * deadlines still come first: the loop must run timers in the order of a
 * stable sort by `when`.  Checked on the heap alone (heap_push with
 * start_id) and through the loop (loop_call_at / loop_call_later).  On the
 * heap alone, the array must also be heapq's, slot for slot, with `<` on
 * the pair: the chapter's heap with the tie-break, not another structure
 * that pops in the same order (a sorted array, with no start_id from the
 * loop, passed the order checks: a cheat, tests/grade/README.md).
 *
 *   make exercise CH=03            (against your code/03-timer-heap/exercises/)
 *   make exercise CH=03 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L
#include "heap.h"
#include "loop.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "rng.h"

/* The heap never dereferences handles: use the addresses of array slots,
 * whose index is the entry's identity. */
#define NSLOTS 4096
#include "model.h" /* item(i), the i-th handle, and id_of(item(i)) == i */

/* A small fixed PRNG, so every run makes the same moves. */
static uint64_t rng_state;
static uint64_t rng(void) { return xorshift64star(&rng_state); }

/* ---- the heap alone ------------------------------------------------------ */

START_TEST(heap_pops_ties_in_start_id_order)
{
    heap_t h;
    heap_init(&h);
    for (size_t i = 0; i < 100; i++)
        ck_assert_int_eq(heap_push(&h, 1.0, i, item(i)), 0);
    heap_entry_t e;
    for (size_t i = 0; i < 100; i++) {
        ck_assert(heap_pop(&h, &e));
        ck_assert_msg(id_of(e.handle) == i,
                      "pop %zu of 100 entries with one deadline returned the entry "
                      "pushed as #%zu: ties must leave in start_id order", i, id_of(e.handle));
        ck_assert_uint_eq(e.start_id, i);
    }
    ck_assert(!heap_pop(&h, &e));
    heap_free(&h);
}
END_TEST

/* heapq's own moves (Lib/heapq.py: heappush, heappop, _siftdown, _siftup)
 * on (when, start_id) pairs, the model the heap's array must equal. */
static struct pair { double when; size_t id; } model_heap[NSLOTS];
static size_t model_len;

static bool pair_less(struct pair a, struct pair b)
{
    return a.when < b.when || (a.when == b.when && a.id < b.id);
}

static void model_siftdown(size_t startpos, size_t pos)
{
    struct pair newitem = model_heap[pos];
    while (pos > startpos) {
        size_t parentpos = (pos - 1) >> 1;
        if (!pair_less(newitem, model_heap[parentpos]))
            break;
        model_heap[pos] = model_heap[parentpos];
        pos = parentpos;
    }
    model_heap[pos] = newitem;
}

static void model_siftup(size_t pos)
{
    size_t startpos = pos, childpos = 2 * pos + 1;
    struct pair newitem = model_heap[pos];
    while (childpos < model_len) {
        size_t rightpos = childpos + 1;
        if (rightpos < model_len && !pair_less(model_heap[childpos], model_heap[rightpos]))
            childpos = rightpos;
        model_heap[pos] = model_heap[childpos];
        pos = childpos;
        childpos = 2 * pos + 1;
    }
    model_heap[pos] = newitem;
    model_siftdown(startpos, pos);
}

static void model_push(double when, size_t id)
{
    model_heap[model_len++] = (struct pair){when, id};
    model_siftdown(0, model_len - 1);
}

static void model_pop(void)
{
    struct pair last = model_heap[--model_len];
    if (model_len > 0) {
        model_heap[0] = last;
        model_siftup(0);
    }
}

static void expect_heapq_layout(const heap_t *h, int step)
{
    /* Check's assertions cost a system call each: test first. */
    if (h->len != model_len)
        ck_abort_msg("step %d: %zu entries in the heap, expected %zu", step, h->len, model_len);
    for (size_t i = 0; i < model_len; i++)
        if (id_of(h->items[i].handle) != model_heap[i].id || h->items[i].start_id != model_heap[i].id)
            ck_abort_msg("step %d: slot %zu of the heap holds #%zu (when %g); heapq's "
                         "moves with `<` on (when, start_id) put #%zu (when %g) there: "
                         "keep heap.c's heap, and change only how it compares",
                         step, i, id_of(h->items[i].handle), h->items[i].when,
                         model_heap[i].id, model_heap[i].when);
}

/* Random deadlines from a small set (many ties), pushes and pops mixed:
 * every pop returns the smallest (when, start_id) of what is left, and the
 * array is heapq's. */
START_TEST(heap_random_against_sorted_model)
{
    static double model_when[NSLOTS];
    static bool live[NSLOTS];
    heap_t h;
    heap_init(&h);
    rng_state = 0x9e3779b97f4a7c15ULL;
    size_t next = 0, nlive = 0;
    memset(live, 0, sizeof live);
    model_len = 0;
    for (int step = 0; step < 20000 && next < NSLOTS; step++) {
        if (nlive == 0 || rng() % 3 != 0) {
            double when = (double)(rng() % 5) * 0.5;
            ck_assert_int_eq(heap_push(&h, when, next, item(next)), 0);
            model_when[next] = when;
            model_push(when, next);
            live[next] = true;
            next++, nlive++;
        } else {
            size_t best = SIZE_MAX;
            for (size_t i = 0; i < next; i++)
                if (live[i] && (best == SIZE_MAX || model_when[i] < model_when[best]))
                    best = i; /* the first (smallest start_id) of the smallest */
            heap_entry_t e;
            ck_assert(heap_pop(&h, &e));
            ck_assert_msg(id_of(e.handle) == best,
                          "step %d: popped #%zu (when %g), but #%zu (when %g) was "
                          "scheduled earlier and is not later", step, id_of(e.handle),
                          e.when, best, model_when[best]);
            live[best] = false;
            nlive--;
            model_pop();
        }
        expect_heapq_layout(&h, step);
    }
    heap_free(&h);
}
END_TEST

/* Heapify (chapter 05's rebuild) must use the same order. */
START_TEST(heapify_keeps_fifo)
{
    heap_t h;
    heap_init(&h);
    for (size_t i = 0; i < 64; i++) /* pushed in order: already a heap */
        ck_assert_int_eq(heap_push(&h, (i % 2) ? 2.0 : 1.0, i, item(i)), 0);
    /* Reverse the array, as a rebuild might leave it, then heapify. */
    for (size_t i = 0, j = h.len - 1; i < j; i++, j--) {
        heap_entry_t t = h.items[i];
        h.items[i] = h.items[j];
        h.items[j] = t;
    }
    heap_heapify(&h);
    heap_entry_t e;
    for (size_t k = 0; k < 64; k++) {
        size_t want = k < 32 ? 2 * k : 2 * (k - 32) + 1;
        ck_assert(heap_pop(&h, &e));
        ck_assert_msg(id_of(e.handle) == want, "pop %zu after heapify: #%zu, expected #%zu",
                      k, id_of(e.handle), want);
    }
    heap_free(&h);
}
END_TEST

/* ---- through the loop ------------------------------------------------------ */

/* virtual_loop() makes a loop on a virtual clock whose wait hook jumps the
 * clock like the default one, but stops the loop when there is nothing left
 * to wait for, so no test can block; finish(loop) closes and frees it.
 * Each timer's callback adds its number to the string `ran` (space-
 * separated) and to order[]; nran counts them. */
#include "vloop.h"

static int order[1024];

static void note(loop_t *loop, void *arg)
{
    (void)loop;
    char num[16];
    snprintf(num, sizeof num, "%d", (int)(intptr_t)arg);
    if (nran < 1024)
        order[nran] = (int)(intptr_t)arg;
    label_add(num); /* and nran++ */
}

static void expect_ran(const char *want)
{
    ck_assert_msg(strcmp(ran, want) == 0, "the timers ran as\n    %s\nexpected\n    %s", ran, want);
}

/* The test the issue asks for: 20 timers with one deadline, now. */
START_TEST(twenty_timers_due_now_run_fifo)
{
    loop_t *loop = virtual_loop();
    double now = loop_time(loop);
    for (intptr_t i = 0; i < 20; i++)
        ck_assert_ptr_nonnull(loop_call_at(loop, now, note, (void *)i));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    expect_ran("0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19");
    finish(loop);
}
END_TEST

/* CPython pops this one as 0 2 6 14 13 19 18 ... (chapter 03). */
START_TEST(equal_deadlines_scenario_runs_fifo)
{
    loop_t *loop = virtual_loop();
    for (intptr_t i = 0; i < 20; i++)
        ck_assert_ptr_nonnull(loop_call_at(loop, 1.0, note, (void *)i));
    ck_assert_ptr_nonnull(loop_call_at(loop, 2.0, note, (void *)20));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    expect_ran("0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20");
    finish(loop);
}
END_TEST

/* Deadlines first, then scheduling order: call_later(0) timers are FIFO,
 * call_later(-1) still runs before them, a later deadline after them. */
START_TEST(deadline_still_first)
{
    loop_t *loop = virtual_loop();
    for (intptr_t i = 0; i < 8; i++)
        ck_assert_ptr_nonnull(loop_call_later(loop, 0, note, (void *)i));
    ck_assert_ptr_nonnull(loop_call_later(loop, 0.5, note, (void *)8));
    ck_assert_ptr_nonnull(loop_call_later(loop, -1, note, (void *)9));
    for (intptr_t i = 10; i < 14; i++)
        ck_assert_ptr_nonnull(loop_call_later(loop, 0, note, (void *)i));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    expect_ran("9 0 1 2 3 4 5 6 7 10 11 12 13 8");
    finish(loop);
}
END_TEST

/* A timer scheduled by a callback, with the deadline of timers already
 * waiting, runs after all of them: it was scheduled last. */
static void schedules_a_tie(loop_t *loop, void *arg)
{
    note(loop, arg);
    ck_assert_ptr_nonnull(loop_call_at(loop, 2.0, note, (void *)99));
}

START_TEST(tie_scheduled_from_a_callback_goes_last)
{
    loop_t *loop = virtual_loop();
    ck_assert_ptr_nonnull(loop_call_at(loop, 1.0, schedules_a_tie, (void *)0));
    for (intptr_t i = 1; i <= 6; i++)
        ck_assert_ptr_nonnull(loop_call_at(loop, 2.0, note, (void *)i));
    ck_assert_int_eq(loop_run_forever(loop), 0);
    expect_ran("0 1 2 3 4 5 6 99");
    finish(loop);
}
END_TEST

/* Many timers, deadlines with many ties, through the loop: the order must
 * be a stable sort by deadline. */
START_TEST(loop_order_is_a_stable_sort)
{
    enum { N = 300 };
    static double when[N];
    loop_t *loop = virtual_loop();
    rng_state = 0x2545f4914f6cdd1dULL;
    for (intptr_t i = 0; i < N; i++) {
        when[i] = 0.25 * (double)(rng() % 7);
        ck_assert_ptr_nonnull(loop_call_at(loop, when[i], note, (void *)i));
    }
    ck_assert_int_eq(loop_run_forever(loop), 0);
    ck_assert_int_eq(nran, N);
    /* The model: a stable sort by deadline (7 distinct deadlines). */
    int want[N], k = 0;
    for (int w = 0; w < 7; w++)
        for (int i = 0; i < N; i++)
            if (when[i] == 0.25 * w)
                want[k++] = i;
    for (k = 0; k < N; k++)
        ck_assert_msg(order[k] == want[k],
                      "timer %d to run was #%d (when %g); expected #%d (when %g), "
                      "scheduled before it", k + 1, order[k], when[order[k]], want[k],
                      when[want[k]]);
    finish(loop);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 03.1: FIFO tie-break");
    TCase *tc = tcase_create("fifo");
    tcase_add_test(tc, heap_pops_ties_in_start_id_order);
    tcase_add_test(tc, heap_random_against_sorted_model);
    tcase_add_test(tc, heapify_keeps_fifo);
    tcase_add_test(tc, twenty_timers_due_now_run_fifo);
    tcase_add_test(tc, equal_deadlines_scenario_runs_fifo);
    tcase_add_test(tc, deadline_still_first);
    tcase_add_test(tc, tie_scheduled_from_a_callback_goes_last);
    tcase_add_test(tc, loop_order_is_a_stable_sort);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
