/* deque.h -- the ready deque: a FIFO of handles in a growable ring buffer.
 *
 * asyncio keeps its ready callbacks in a collections.deque and uses three
 * of its operations: append (call_soon, I/O, due timers), popleft (run_once)
 * and len (the poll timeout, and later the snapshot).  This is those three,
 * in C, and nothing else.
 */
#ifndef DEQUE_H
#define DEQUE_H

#include <stddef.h>

#include "loop.h"

/* @region struct */
/* Invariants:
 *   cap is 0 (nothing allocated yet) or a power of two, and 0 <= len <= cap;
 *   the i-th handle from the front (0 <= i < len) is
 *       items[(head + i) & (cap - 1)]
 *   so the items may wrap around the end of the array;
 *   head < cap whenever cap > 0;
 *   no item is NULL (deque_push_back refuses it), so a NULL from
 *   deque_pop_front means "empty".
 * Masking with cap - 1 is the modulo that a power of two makes cheap.  When
 * the array is full, push_back doubles it and copies the items in order to
 * the start of the new array (head = 0), unwrapping them.
 */
typedef struct deque {
    handle_t **items; /* cap slots; only the len slots from head are live */
    size_t head;      /* index of the front item */
    size_t len;       /* number of items */
    size_t cap;       /* number of slots: 0 or a power of two */
} deque_t;
/* @end struct */

/* An empty deque that owns no memory yet. */
void deque_init(deque_t *d);

/* Free the array (not the handles: the deque only points at them) and leave
 * the deque empty, ready to be used again. */
void deque_free(deque_t *d);

/* Append h at the back.  0, or -1 with errno set: EINVAL for a NULL h,
 * ENOMEM if the array could not grow (the deque is then unchanged). */
int deque_push_back(deque_t *d, handle_t *h);

/* Remove and return the front item; NULL if the deque is empty. */
handle_t *deque_pop_front(deque_t *d);

/* Chapter 11: the front item, left where it is; NULL if the deque is empty. */
handle_t *deque_front(const deque_t *d);

/* The number of items. */
size_t deque_len(const deque_t *d);

#endif
