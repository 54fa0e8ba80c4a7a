/* Exercise 02.1 -- deque_push_front.
 *
 * Passes when deque_push_front() puts an item in front of all the others,
 * keeps working when the front has to wrap backwards past slot 0 and when
 * the deque has to grow, and refuses NULL as push_back does.  The model is
 * an array with room on both sides of the middle.  And that it is the O(1)
 * move deque.h's invariants allow: unless the array grew, the front moves
 * back one slot and no other item moves (emptying the deque and pushing
 * everything back behind h gives the same order: a cheat,
 * tests/grade/README.md).
 *
 *   make exercise CH=02            (against your code/02-ready-deque/exercises/)
 *   make exercise CH=02 ANSWERS=1  (against the worked answers)
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

/* item(i): the i-th distinct item (a handle_t * the deque stores but never
 * reads); EXPECT(cond, message): fail with the message unless cond. */
#define NSLOTS 100000
#include "model.h"

/* Model: items m[lo .. hi), front first, starting from the middle. */
#define MID 300000
static size_t m[2 * MID];
static size_t lo, hi, next_item;

static void model_reset(void) { lo = hi = MID; next_item = 0; }

static void front(deque_t *d)
{
    size_t i = next_item++;
    handle_t **items = d->items;
    size_t head = d->head, cap = d->cap;
    int rc = deque_push_front(d, item(i));
    EXPECT(rc == 0, "deque_push_front failed (returned %d)", rc);
    if (cap > 0 && d->cap == cap)
        EXPECT(d->items == items && d->head == ((head - 1) & (cap - 1)) &&
                   d->items[d->head] == item(i),
               "push_front with room to spare (head %zu, cap %zu) left head at %zu: "
               "the new front goes in the slot before head, and nothing else moves",
               head, cap, d->head);
    m[--lo] = i;
    EXPECT(deque_len(d) == hi - lo, "len %zu after push_front, expected %zu",
           deque_len(d), hi - lo);
}

static void back(deque_t *d)
{
    size_t i = next_item++;
    EXPECT(deque_push_back(d, item(i)) == 0, "deque_push_back failed");
    m[hi++] = i;
}

static void pop(deque_t *d)
{
    handle_t *h = deque_pop_front(d);
    if (lo == hi) {
        EXPECT(h == NULL, "pop from an empty deque returned an item");
        return;
    }
    size_t want = m[lo++];
    EXPECT(h == item(want), "popped the wrong item: expected item #%zu", want);
}

static void drain(deque_t *d)
{
    while (lo < hi)
        pop(d);
    pop(d);
}

START_TEST(test_front_of_empty)
{
    deque_t d;
    deque_init(&d);
    model_reset();
    front(&d);
    drain(&d);
    deque_free(&d);
}
END_TEST

START_TEST(test_front_goes_first)
{
    deque_t d;
    deque_init(&d);
    model_reset();
    back(&d);
    back(&d);
    front(&d); /* now first */
    front(&d); /* now first, before the one above */
    drain(&d);
    deque_free(&d);
}
END_TEST

/* Only push_front: the front wraps backwards past slot 0 at once, then the
 * deque grows several times, every time with a wrapped front. */
START_TEST(test_front_only_grows)
{
    deque_t d;
    deque_init(&d);
    model_reset();
    for (int i = 0; i < 1000; i++)
        front(&d);
    drain(&d);
    deque_free(&d);
}
END_TEST

/* Random mixes of push_front, push_back and pop (fixed seeds). */
START_TEST(test_random_mix)
{
    uint32_t x = 2024u + (uint32_t)_i;
    deque_t d;
    deque_init(&d);
    model_reset();
    for (int step = 0; step < 100000; step++) {
        switch (xorshift32(&x) % 5) {
        case 0: case 1: front(&d); break;
        case 2: back(&d); break;
        default: pop(&d); break;
        }
    }
    drain(&d);
    deque_free(&d);
}
END_TEST

START_TEST(test_null_refused)
{
    deque_t d;
    deque_init(&d);
    errno = 0;
    ck_assert_int_eq(deque_push_front(&d, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_uint_eq(deque_len(&d), 0);
    deque_free(&d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exercise 02.1: deque_push_front");
    TCase *tc = tcase_create("push_front");
    tcase_add_test(tc, test_front_of_empty);
    tcase_add_test(tc, test_front_goes_first);
    tcase_add_test(tc, test_front_only_grows);
    tcase_add_loop_test(tc, test_random_mix, 0, 3);
    tcase_add_test(tc, test_null_refused);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
