/* deque.c -- the ready deque (see deque.h for its invariants). */
#include "deque.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
/* Double the array.  Chapter 11: with realloc(), which for a big block
 * moves pages instead of copying bytes (glibc: mremap), so a deque that
 * grows to a million items neither copies them at each doubling nor
 * touches fresh memory twice.  The items may wrap around the end of the
 * old array (head > 0): realloc keeps them at their old indexes, and the
 * wrapped part -- items[0 .. head + len - old cap) -- must then move to
 * just after the old end, where the new mask puts them. */
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
        return -1; /* realloc set errno; the old array is untouched */
    if (d->head + d->len > old) /* wrapped: at most old items, into the new half */
        memcpy(items + old, items, (d->head + d->len - old) * sizeof *items);
    d->items = items;
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
