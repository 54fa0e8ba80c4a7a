/* heap.c -- the timer heap (see heap.h for its invariants).
 *
 * A line-by-line port of Lib/heapq.py.  Two names there are the opposite
 * of what most textbooks say, and this file keeps them so that the two can
 * be read side by side:
 *   siftdown(start, pos)  moves the entry at pos UP, towards the root,
 *                         while it is smaller than its parent;
 *   siftup(pos)           moves the entry at pos DOWN, and does it in a
 *                         way that matters for ties: it first walks the
 *                         hole all the way to a LEAF, always taking the
 *                         smaller child (the RIGHT one on a tie), and only
 *                         then sifts the entry back up with siftdown.
 * Python's heapq module uses its C twin, _heapq, which makes the same
 * comparisons in the same order (it swaps instead of moving a hole, and for
 * lists over 2500 items it heapifies in a cache-friendly order that, as its
 * comment says, builds exactly the same heap).
 */
#include "heap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define HEAP_MIN_CAP 8

void heap_init(heap_t *h)
{
    h->items = NULL;
    h->len = h->cap = 0;
}

void heap_free(heap_t *h)
{
    free(h->items);
    heap_init(h);
}

size_t heap_len(const heap_t *h)
{
    return h->len;
}

const heap_entry_t *heap_top(const heap_t *h)
{
    return h->len > 0 ? &h->items[0] : NULL;
}

/* @region siftdown */
/* heapq._siftdown: the entry at pos moves up past every parent it is
 * smaller than (strictly: an equal parent stays above it). */
static void siftdown(heap_t *h, size_t startpos, size_t pos)
{
    heap_entry_t newitem = h->items[pos];
    while (pos > startpos) {
        size_t parentpos = (pos - 1) >> 1;
        heap_entry_t parent = h->items[parentpos];
        if (newitem.when < parent.when) {
            h->items[pos] = parent;
            pos = parentpos;
            continue;
        }
        break;
    }
    h->items[pos] = newitem;
}
/* @end siftdown */

/* @region siftup */
/* heapq._siftup: move the hole at pos down to a leaf, pulling up the
 * smaller child each time -- the right one unless the left is strictly
 * smaller -- then put the entry in the hole and sift it back up. */
static void siftup(heap_t *h, size_t pos)
{
    size_t endpos = h->len;
    size_t startpos = pos;
    heap_entry_t newitem = h->items[pos];
    size_t childpos = 2 * pos + 1; /* leftmost child */
    while (childpos < endpos) {
        size_t rightpos = childpos + 1;
        if (rightpos < endpos &&
            !(h->items[childpos].when < h->items[rightpos].when))
            childpos = rightpos;
        h->items[pos] = h->items[childpos];
        pos = childpos;
        childpos = 2 * pos + 1;
    }
    h->items[pos] = newitem;
    siftdown(h, startpos, pos);
}
/* @end siftup */

static int grow(heap_t *h)
{
    size_t cap = h->cap ? 2 * h->cap : HEAP_MIN_CAP;
    if (cap < h->cap || cap > SIZE_MAX / sizeof *h->items) {
        errno = ENOMEM;
        return -1;
    }
    heap_entry_t *items = realloc(h->items, cap * sizeof *items);
    if (items == NULL)
        return -1; /* realloc set errno; the old array is untouched */
    h->items = items;
    h->cap = cap;
    return 0;
}

/* @region push_pop */
/* heapq.heappush: append, then _siftdown(heap, 0, len - 1). */
int heap_push(heap_t *h, double when, handle_t *handle)
{
    if (when != when || handle == NULL) { /* when != when: NaN */
        errno = EINVAL;
        return -1;
    }
    if (h->len == h->cap && grow(h) < 0)
        return -1;
    h->items[h->len] = (heap_entry_t){when, handle};
    h->len++;
    siftdown(h, 0, h->len - 1);
    return 0;
}

/* heapq.heappop: take the last entry off; if entries remain, it replaces
 * the root, which is returned, and is sifted into place. */
bool heap_pop(heap_t *h, heap_entry_t *out)
{
    if (h->len == 0)
        return false;
    heap_entry_t lastelt = h->items[--h->len];
    if (h->len > 0) {
        *out = h->items[0];
        h->items[0] = lastelt;
        siftup(h, 0);
    } else {
        *out = lastelt;
    }
    return true;
}
/* @end push_pop */

/* @region heapify */
/* heapq.heapify: for i in reversed(range(n // 2)): _siftup(x, i).  The
 * nodes from n/2 on are leaves, heaps of one already. */
void heap_heapify(heap_t *h)
{
    for (size_t i = h->len / 2; i-- > 0;)
        siftup(h, i);
}
/* @end heapify */
