/* model.h -- for the tests that compare a container (the ready deque, the
 * timer heap) with a simple model, over many operations.
 *
 * The containers store handle_t pointers and never dereference them, so the
 * items are the addresses of the slots of a static array: item(i) is the
 * i-th distinct item, and id_of() gives its number back.  Include deque.h or
 * heap.h (for handle_t) and define NSLOTS, the number of distinct items,
 * before this file.
 *
 * EXPECT(cond, fmt, ...) fails the test with the message when cond is false.
 * Check's ck_assert_* logs every assertion that passes, a write each time;
 * a model makes millions of comparisons, so it reports only the failures. */
#ifndef TESTS_SUPPORT_MODEL_H
#define TESTS_SUPPORT_MODEL_H

#include <check.h>
#include <stddef.h>

#ifndef NSLOTS
#error "define NSLOTS (how many distinct items) before including model.h"
#endif

#define EXPECT(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond))                                                           \
            ck_abort_msg(__VA_ARGS__);                                         \
    } while (0)

static max_align_t slots[NSLOTS];

/* The i-th distinct item (i is taken modulo NSLOTS). */
static inline handle_t *item(size_t i)
{
    return (handle_t *)(void *)&slots[i % NSLOTS];
}

/* The number of an item: id_of(item(i)) == i % NSLOTS. */
static inline size_t id_of(const handle_t *h)
{
    return (size_t)((const max_align_t *)(const void *)h - slots);
}

#endif
