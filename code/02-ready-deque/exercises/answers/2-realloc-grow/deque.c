/* @exercise begin */
/* deque.c (exercise 2) -- the ready deque, growing with realloc(). */
/* @exercise end */
#include "deque.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
/* @exercise begin */
#include <string.h>
/* @exercise end */

#define DEQUE_MIN_CAP 8 /* the first allocation; any power of two works */

void deque_init(deque_t *d)
{
    d->items = NULL;
    d->head = d->len = d->cap = 0;
}

void deque_free(deque_t *d)
{
    free(d->items);
    deque_init(d);
}

size_t deque_len(const deque_t *d)
{
    return d->len;
}

/* @exercise begin */
/* @region grow */
/* realloc() keeps the old slots at the same indexes, and the items from
 * head to the old end are still in order.  The ones that had wrapped, in
 * slots [0, head + len - old cap), are now in the wrong place: with the new
 * mask they belong right after the old end.  Doubling guarantees the room:
 * fewer than old cap items wrapped, and old cap new slots follow the old
 * end.  So one memcpy moves them there, and head does not change. */
static int grow(deque_t *d)
{
    size_t old = d->cap;
    size_t cap = old ? 2 * old : DEQUE_MIN_CAP;
    if (cap < old || cap > SIZE_MAX / sizeof *d->items) {
        errno = ENOMEM;
        return -1;
    }
    handle_t **items = realloc(d->items, cap * sizeof *items);
    if (items == NULL)
        return -1; /* realloc set errno; the old array is still ours */
    if (d->head + d->len > old) { /* wrapped: move the wrapped prefix */
        size_t wrapped = d->head + d->len - old;
        memcpy(items + old, items, wrapped * sizeof *items);
    }
    d->items = items;
    d->cap = cap;
    return 0;
}
/* @end grow */
/* @exercise end */

/* @region push_back */
int deque_push_back(deque_t *d, handle_t *h)
{
    if (h == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (d->len == d->cap && grow(d) < 0)
        return -1;
    d->items[(d->head + d->len) & (d->cap - 1)] = h;
    d->len++;
    return 0;
}
/* @end push_back */

/* @region pop_front */
handle_t *deque_pop_front(deque_t *d)
{
    if (d->len == 0)
        return NULL;
    handle_t *h = d->items[d->head];
    d->head = (d->head + 1) & (d->cap - 1);
    d->len--;
    return h;
}
/* @end pop_front */
