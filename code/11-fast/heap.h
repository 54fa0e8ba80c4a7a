/* heap.h -- the timer heap: a binary min-heap of (when, handle), ported
 * operation for operation from CPython's heapq.
 *
 * asyncio keeps its timers in a plain list, loop._scheduled, and uses
 * heapq.heappush (call_at), heapq.heappop (due timers, cancelled timers at
 * the head) and heapq.heapify (the rebuild of chapter 05).  TimerHandle's
 * `<` compares `_when` and nothing else, so two timers with the same
 * deadline are "equal" and come out in whatever order heapq's moves leave
 * them: not FIFO.  To print the same traces as CPython, this heap makes the
 * same moves: the same comparisons, in the same order, with the same ties.
 */
#ifndef HEAP_H
#define HEAP_H

#include <stdbool.h>
#include <stddef.h>

#include "loop.h"

/* @region struct */
/* Invariants (heapq's, with `<` on `when` alone):
 *   0 <= len <= cap; items[0 .. len) are live;
 *   for every k > 0:  !(items[k].when < items[(k - 1) / 2].when),
 *   i.e. no child is smaller than its parent, so items[0] is a smallest;
 *   no item's when is NaN (NaN compares false both ways and would break
 *   the invariant silently; loop.c refuses it before it gets here).
 * The children of k are 2k + 1 and 2k + 2.  The array doubles when full.
 * Entries are stored by value: the deadline sits next to its neighbours
 * in memory, and the comparisons never chase a pointer.
 */
typedef struct heap_entry {
    double when;      /* the deadline, loop_time() seconds */
    handle_t *handle; /* the timer's handle (never dereferenced here) */
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
 * 0, or -1 with errno set: EINVAL for a NaN when or a NULL handle, ENOMEM
 * (the heap is then unchanged). */
int heap_push(heap_t *h, double when, handle_t *handle);

/* heapq.heappop: remove the smallest entry into *out.  false if empty. */
bool heap_pop(heap_t *h, heap_entry_t *out);

/* heapq.heapify: make items[0 .. len) a heap, whatever their order.  The
 * caller may rewrite items[] and len (never beyond cap) before calling it,
 * as asyncio's rebuild filters the list and then heapifies it. */
void heap_heapify(heap_t *h);

#endif
