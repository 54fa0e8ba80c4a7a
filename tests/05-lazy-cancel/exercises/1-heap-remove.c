/* Exercise 1 of chapter 05: iheap_remove, removal from the middle of a heap
 * whose timers know their index (libuv style).
 *
 * Checks, after every operation, every invariant of iheap.h (the heap
 * property and items[i]->index == i), against a model (the set of timers
 * that should be in the heap): removing the root, the last slot, a middle
 * slot that must move up and one that must move down, removing twice,
 * removing a popped timer, and 20,000 random pushes, pops and removes.
 * And that a removal is O(log n): it moves at most the timers on one path
 * from the hole, as iheap.h promises (popping everything and pushing back
 * all but the timer keeps every invariant too: a cheat,
 * tests/grade/README.md). */
#include "iheap.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check_main.h"

#define N 512

static itimer_t timers[N];
static bool in_model[N];

/* Check's assertions each cost a system call (they mark the point reached
 * through a pipe to the runner), so the hot loops below test first and only
 * call into Check to report a failure. */
static void check_invariants(const iheap_t *h)
{
    size_t live = 0;
    for (size_t i = 0; i < N; i++)
        live += in_model[i];
    ck_assert_uint_eq(iheap_len(h), live);
    for (size_t i = 0; i < h->len; i++) {
        itimer_t *t = h->items[i];
        if (t->index != i)
            ck_abort_msg("items[%zu]->index is %zu", i, t->index);
        if (!in_model[t - timers])
            ck_abort_msg("timer %td is in the heap but was removed", t - timers);
        if (i > 0 && t->when < h->items[(i - 1) / 2]->when)
            ck_abort_msg("items[%zu] (%g) is earlier than its parent (%g)", i, t->when,
                         h->items[(i - 1) / 2]->when);
    }
    for (size_t i = 0; i < N; i++)
        if (!in_model[i] && timers[i].index != IHEAP_NONE)
            ck_abort_msg("timer %zu is not in the heap; its index should be IHEAP_NONE", i);
}

/* iheap_remove(h, t), which must return 1, moving few timers: the last
 * one into the hole, then those on one path up or down from it (or, done
 * as t->when = -inf, sift up, pop: two paths), so at most 2 + 2 log2(len)
 * timers change slots. */
static void remove_one(iheap_t *h, itimer_t *t)
{
    static size_t before[N];
    for (size_t i = 0; i < N; i++)
        before[i] = timers[i].index;
    size_t len = h->len, depth = 0;
    while ((len >> depth) > 1)
        depth++;
    ck_assert_int_eq(iheap_remove(h, t), 1);
    size_t moved = 0;
    for (size_t i = 0; i < N; i++)
        moved += &timers[i] != t && timers[i].index != before[i];
    if (moved > 2 + 2 * depth)
        ck_abort_msg("removing one timer of %zu moved %zu others: a removal takes the last "
                     "timer into the hole and moves only the timers on a path or two from there "
                     "(at most %zu), in O(log n)", len, moved, 2 + 2 * depth);
}

static void push(iheap_t *h, size_t k, double when)
{
    timers[k] = (itimer_t){.when = when, .index = IHEAP_NONE};
    ck_assert_int_eq(iheap_push(h, &timers[k]), 0);
    in_model[k] = true;
}

static void fresh(iheap_t *h)
{
    iheap_init(h);
    for (size_t i = 0; i < N; i++) {
        in_model[i] = false;
        timers[i].index = IHEAP_NONE;
    }
}

START_TEST(remove_each_position)
{
    /* 15 timers: 0..14 pushed in order make items[i] == &timers[i]. */
    for (size_t victim = 0; victim < 15; victim++) {
        iheap_t h;
        fresh(&h);
        for (size_t k = 0; k < 15; k++)
            push(&h, k, (double)k);
        remove_one(&h, &timers[victim]);
        in_model[victim] = false;
        check_invariants(&h);
        ck_assert_int_eq(iheap_remove(&h, &timers[victim]), 0); /* twice */
        check_invariants(&h);
        double last = -1;
        while (iheap_len(&h) > 0) {
            itimer_t *t = iheap_pop(&h);
            ck_assert(t != &timers[victim]);
            ck_assert(t->when >= last);
            last = t->when;
            in_model[t - timers] = false;
            check_invariants(&h);
        }
        iheap_free(&h);
    }
}
END_TEST

START_TEST(the_last_timer_moves_up)
{
    /* Remove a deep timer of the left branch; the last timer (right branch)
     * fills its slot and is earlier than its new parent: it must go up. */
    iheap_t h;
    fresh(&h);
    double whens[] = {0, 10, 1, 11, 12, 2, 3, 13, 14, 15, 16, 4, 5, 6, 7};
    for (size_t k = 0; k < 15; k++)
        push(&h, k, whens[k]);
    check_invariants(&h);
    itimer_t *deep = h.items[7];
    remove_one(&h, deep);
    in_model[deep - timers] = false;
    check_invariants(&h);
    iheap_free(&h);
}
END_TEST

START_TEST(removing_a_popped_timer)
{
    iheap_t h;
    fresh(&h);
    push(&h, 0, 1.0);
    push(&h, 1, 2.0);
    itimer_t *t = iheap_pop(&h);
    in_model[t - timers] = false;
    ck_assert_ptr_eq(t, &timers[0]);
    ck_assert_int_eq(iheap_remove(&h, t), 0);
    remove_one(&h, &timers[1]);
    in_model[1] = false;
    check_invariants(&h);
    ck_assert_ptr_null(iheap_pop(&h));
    iheap_free(&h);
}
END_TEST

START_TEST(random_against_a_model)
{
    iheap_t h;
    fresh(&h);
    srand(5);
    for (int step = 0; step < 20000; step++) {
        size_t k = (size_t)rand() % N;
        int op = rand() % 3;
        if (!in_model[k] && op != 2) {
            push(&h, k, (double)(rand() % 50)); /* many ties */
        } else if (op == 2) {
            itimer_t *t = iheap_pop(&h);
            if (t != NULL) {
                for (size_t i = 0; i < N; i++) /* it was the earliest */
                    if (in_model[i] && timers[i].when < t->when)
                        ck_abort_msg("popped %g, but timer %zu (%g) is earlier", t->when,
                                     i, timers[i].when);
                in_model[t - timers] = false;
            }
        } else {
            remove_one(&h, &timers[k]);
            in_model[k] = false;
        }
        if (step % 97 == 0 || h.len < 40)
            check_invariants(&h);
    }
    check_invariants(&h);
    iheap_free(&h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("1-heap-remove");
    TCase *tc = tcase_create("iheap_remove");
    tcase_add_test(tc, remove_each_position);
    tcase_add_test(tc, the_last_timer_moves_up);
    tcase_add_test(tc, removing_a_popped_timer);
    tcase_add_test(tc, random_against_a_model);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
