/* Exercise 02.2 -- growing the ring buffer with realloc().
 *
 * Passes when the deque keeps FIFO order through every growth, in
 * particular when it grows while its items wrap around the end of the
 * array (head > 0) -- the case a bare realloc() gets wrong.  And that it
 * grows in place: the items from head to the old end keep their slots, so
 * head stays (or moves up by the old capacity, when the repair moves that
 * part instead of the wrapped one).  The chapter's own grow, a second array
 * with every item copied to its start (head 0), passes the order checks: a
 * cheat (tests/grade/README.md).
 *
 *   make exercise CH=02            (against your code/02-ready-deque/exercises/)
 *   make exercise CH=02 ANSWERS=1  (against the worked answers)
 */
#define _POSIX_C_SOURCE 200809L
#include "deque.h"

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_main.h"
#include "rng.h"

/* item(i): the i-th distinct item (a handle_t * the deque stores but never
 * reads); EXPECT(cond, message): fail with the message unless cond. */
#define NSLOTS 100000
#include "model.h"

/* Model: item #i is the i-th pushed; items #lo .. #hi-1 are queued. */
static size_t lo, hi;

static void push(deque_t *d)
{
    size_t head = d->head, cap = d->cap;
    EXPECT(deque_push_back(d, item(hi)) == 0, "push_back failed");
    hi++;
    if (cap > 0 && d->cap != cap)
        EXPECT(d->head == head || d->head == head + cap,
               "growing from %zu to %zu slots moved head from %zu to %zu: with "
               "realloc() the items from head to the old end keep their slots "
               "(no second array, no copy of every item)", cap, d->cap, head, d->head);
}

static void pop(deque_t *d)
{
    handle_t *h = deque_pop_front(d);
    if (lo == hi) {
        EXPECT(h == NULL, "pop from an empty deque returned an item");
        return;
    }
    size_t want = lo++;
    EXPECT(h == item(want),
           "popped the wrong item: expected #%zu (%zu items were queued)",
           want, hi - lo + 1);
}

/* Pop everything, in order, then once more from the empty deque. */
static void drain(deque_t *d)
{
    while (lo < hi)
        pop(d);
    pop(d);
}

/* Unwrapped growth: pushes only.  This passes before the repair, too. */
START_TEST(test_grow_without_wrap)
{
    deque_t d;
    deque_init(&d);
    lo = hi = 0;
    for (int i = 0; i < 5000; i++)
        push(&d);
    drain(&d);
    deque_free(&d);
}
END_TEST

/* keep items, rotate the front by `shift` slots, then grow. */
START_TEST(test_grow_while_wrapped)
{
    for (size_t keep = 1; keep <= 40; keep++) {
        for (size_t shift = 1; shift <= 40; shift++) {
            deque_t d;
            deque_init(&d);
            lo = hi = 0;
            for (size_t i = 0; i < keep; i++)
                push(&d);
            for (size_t i = 0; i < shift; i++) {
                pop(&d);
                push(&d);
            }
            for (size_t i = 0; i < 100; i++)
                push(&d);
            drain(&d);
            deque_free(&d);
        }
    }
}
END_TEST

/* The shape of a busy loop: the queue never empties, and grows. */
START_TEST(test_random)
{
    uint32_t x = 7;
    deque_t d;
    deque_init(&d);
    lo = hi = 0;
    for (int step = 0; step < 300000; step++) {
        if (xorshift32(&x) % 100 < 55)
            push(&d);
        else
            pop(&d);
    }
    drain(&d);
    deque_free(&d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 02.2: grow with realloc");
    TCase *tc = tcase_create("grow");
    tcase_add_test(tc, test_grow_without_wrap);
    tcase_add_test(tc, test_grow_while_wrapped);
    tcase_add_test(tc, test_random);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
