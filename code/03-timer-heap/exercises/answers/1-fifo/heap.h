/* @exercise begin */
/* heap.h (exercise 1) -- the timer heap, with a FIFO tie-break.
 *
 * Chapter 03's heap orders entries by `when` alone, as CPython's heapq
 * orders TimerHandles, so timers with equal deadlines leave in whatever
 * order heapq's moves leave them: not first in, first out.  This version
 * gives every entry a second key, start_id, a number that grows with each
 * timer scheduled (libuv's uv_timer_start takes it from
 * loop->timer_counter), and orders entries by the pair (when, start_id).
 * No two entries are then equal, and equal deadlines leave in the order
 * they were scheduled.  The moves are still heapq's (push, pop, heapify);
 * only the comparison changes.
 * @exercise end
 */
#ifndef HEAP_H
#define HEAP_H

#include <stdbool.h>
#include <stddef.h>
/* @exercise begin */
#include <stdint.h>
/* @exercise end */

#include "loop.h"

/* @region struct */
/* @exercise begin */
/* Invariants (heapq's, with `<` on the pair (when, start_id)):
 *   0 <= len <= cap; items[0 .. len) are live;
 *   for every k > 0:  !(items[k] < items[(k - 1) / 2]), where a < b means
 *   a.when < b.when, or a.when == b.when and a.start_id < b.start_id;
 *   i.e. no child is smaller than its parent, so items[0] is the smallest;
 *   no two entries have the same start_id, so no two entries tie;
 * @exercise end
 *   no item's when is NaN (NaN compares false both ways and would break
 *   the invariant silently; loop.c refuses it before it gets here).
 * The children of k are 2k + 1 and 2k + 2.  The array doubles when full.
 * Entries are stored by value: the deadline sits next to its neighbours
 * in memory, and the comparisons never chase a pointer.
 */
typedef struct heap_entry {
    /* @exercise begin */
    double when;       /* the deadline, loop_time() seconds */
    uint64_t start_id; /* the order of scheduling: the tie-break */
    handle_t *handle;  /* the timer's handle (never dereferenced here) */
    /* @exercise end */
} heap_entry_t;

typedef struct heap {
    heap_entry_t *items;
    size_t len;
    size_t cap;
} heap_t;
/* @end struct */

/* An empty heap that owns no memory yet. */
void heap_init(heap_t *h);

/* Free the array (not the handles) and leave the heap empty and reusable. */
void heap_free(heap_t *h);

/* The number of entries. */
size_t heap_len(const heap_t *h);

/* The smallest entry (heap[0]), or NULL if the heap is empty.  The pointer
 * is valid until the next push, pop or heapify. */
const heap_entry_t *heap_top(const heap_t *h);

/* heapq.heappush: append, then sift the new entry up towards the root.
 * @exercise begin
 * start_id must differ from every other entry's, and be larger for a timer
 * scheduled later (the loop counts timers: loop->timer_counter).
 * 0, or -1 with errno set: EINVAL for a NaN when or a NULL handle, ENOMEM
 * (the heap is then unchanged). */
int heap_push(heap_t *h, double when, uint64_t start_id, handle_t *handle);
/* @exercise end */

/* heapq.heappop: remove the smallest entry into *out.  false if empty. */
bool heap_pop(heap_t *h, heap_entry_t *out);

/* heapq.heapify: make items[0 .. len) a heap, whatever their order.  The
 * caller may rewrite items[] and len (never beyond cap) before calling it,
 * as asyncio's rebuild filters the list and then heapifies it. */
void heap_heapify(heap_t *h);

#endif
