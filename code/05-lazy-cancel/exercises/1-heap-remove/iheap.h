/* iheap.h -- a timer heap whose entries know where they are (libuv style),
 * so that a cancelled timer is removed at once, from the middle, in
 * O(log n): the other way to cancel (exercise 1 of chapter 05).
 *
 * The loop's heap (heap.h) stores (when, handle) by value and never looks
 * inside a handle; this one stores pointers to timers, and every move of a
 * timer writes its new position into it.  That is what removal needs: to
 * find the timer in the array without searching it.  libuv's heap-inl.h
 * does the same with a tree of pointers; an array is simpler.
 *
 * Invariants:
 *   0 <= len <= cap; items[0 .. len) are the timers in the heap;
 *   items[i]->index == i for every i < len (each timer knows its slot);
 *   a timer not in the heap has index == IHEAP_NONE;
 *   no child is earlier than its parent: items[0] is an earliest timer.
 * Equal deadlines leave in no promised order.
 */
#ifndef IHEAP_H
#define IHEAP_H

#include <stddef.h>

#define IHEAP_NONE ((size_t)-1)

typedef struct itimer {
    double when;
    size_t index; /* its slot in the heap, or IHEAP_NONE */
    void *data;   /* the caller's */
} itimer_t;

typedef struct iheap {
    itimer_t **items;
    size_t len;
    size_t cap;
} iheap_t;

void iheap_init(iheap_t *h);
void iheap_free(iheap_t *h); /* the array, not the timers */
size_t iheap_len(const iheap_t *h);

/* The earliest timer, or NULL if the heap is empty. */
itimer_t *iheap_top(const iheap_t *h);

/* Put t in the heap (t->when set by the caller).  0, or -1 with errno:
 * EINVAL if t is already in a heap or its when is NaN, ENOMEM. */
int iheap_push(iheap_t *h, itimer_t *t);

/* Take the earliest timer out (its index becomes IHEAP_NONE); NULL if
 * the heap is empty. */
itimer_t *iheap_pop(iheap_t *h);

/* Take t out of the heap, wherever it is, in O(log n): 1 if it was in the
 * heap, 0 if it was not (already popped or removed). */
int iheap_remove(iheap_t *h, itimer_t *t);

#endif
