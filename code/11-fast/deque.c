/* deque.c -- the ready deque (see deque.h for its invariants). */
#include "deque.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

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

/* @region grow */
/* Double the array.  The items may wrap around the end of the old array
 * (head > 0): copy them in order, front first, to the start of the new one.
 * A plain realloc() would keep the wrapped part at the old indexes, which
 * mean something else once cap - 1, the mask, has changed. */
static int grow(deque_t *d)
{
    size_t cap = d->cap ? 2 * d->cap : DEQUE_MIN_CAP;
    if (cap < d->cap || cap > SIZE_MAX / sizeof *d->items) {
        errno = ENOMEM;
        return -1;
    }
    handle_t **items = malloc(cap * sizeof *items);
    if (items == NULL)
        return -1; /* malloc set errno to ENOMEM */
    for (size_t i = 0; i < d->len; i++)
        items[i] = d->items[(d->head + i) & (d->cap - 1)];
    free(d->items);
    d->items = items;
    d->head = 0;
    d->cap = cap;
    return 0;
}
/* @end grow */

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

handle_t *deque_front(const deque_t *d)
{
    return d->len > 0 ? d->items[d->head] : NULL;
}
