/* iheap.c -- the indexed timer heap (see iheap.h for its invariants). */
#include "iheap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

void iheap_init(iheap_t *h)
{
    h->items = NULL;
    h->len = h->cap = 0;
}

void iheap_free(iheap_t *h)
{
    free(h->items);
    iheap_init(h);
}

size_t iheap_len(const iheap_t *h)
{
    return h->len;
}

itimer_t *iheap_top(const iheap_t *h)
{
    return h->len > 0 ? h->items[0] : NULL;
}

/* Every store into the array goes through here: the slot and the timer's
 * index change together. */
static void place(iheap_t *h, size_t i, itimer_t *t)
{
    h->items[i] = t;
    t->index = i;
}

/* Move the timer at i up while it is earlier than its parent. */
static void sift_up(iheap_t *h, size_t i)
{
    itimer_t *t = h->items[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!(t->when < h->items[parent]->when))
            break;
        place(h, i, h->items[parent]);
        i = parent;
    }
    place(h, i, t);
}

/* Move the timer at i down while a child is earlier than it. */
static void sift_down(iheap_t *h, size_t i)
{
    itimer_t *t = h->items[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->len)
            break;
        if (child + 1 < h->len && h->items[child + 1]->when < h->items[child]->when)
            child++;
        if (!(h->items[child]->when < t->when))
            break;
        place(h, i, h->items[child]);
        i = child;
    }
    place(h, i, t);
}

int iheap_push(iheap_t *h, itimer_t *t)
{
    if (t->when != t->when) {
        errno = EINVAL;
        return -1;
    }
    if (h->len == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 8;
        if (cap > SIZE_MAX / sizeof *h->items) {
            errno = ENOMEM;
            return -1;
        }
        itimer_t **items = realloc(h->items, cap * sizeof *items);
        if (items == NULL)
            return -1;
        h->items = items;
        h->cap = cap;
    }
    place(h, h->len++, t);
    sift_up(h, t->index);
    return 0;
}

itimer_t *iheap_pop(iheap_t *h)
{
    if (h->len == 0)
        return NULL;
    itimer_t *top = h->items[0];
    itimer_t *last = h->items[--h->len];
    if (last != top) {
        place(h, 0, last);
        sift_down(h, 0);
    }
    top->index = IHEAP_NONE;
    return top;
}

/* @region remove */
/* A CHEAT for exercise 05.1 (tests/grade/README.md): removal from the
 * operations that exist.  Pop every timer, and push back all but t: every
 * invariant holds afterwards, in O(n log n), and nothing about where t was
 * is worked out. */
int iheap_remove(iheap_t *h, itimer_t *t)
{
    if (t->index == IHEAP_NONE)
        return 0;
    size_t n = h->len;
    itimer_t **all = malloc((n ? n : 1) * sizeof *all);
    if (all == NULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        all[i] = iheap_pop(h);
    for (size_t i = 0; i < n; i++)
        if (all[i] != t)
            iheap_push(h, all[i]);
    free(all);
    return 1;
}
/* @end remove */
