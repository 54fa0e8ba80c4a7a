/* selector_bigselect.c -- chapter 07, exercise 2: select() without FD_SETSIZE.
 *
 * Write a fifth backend, "bigselect": select(2), but for any fd the process
 * may open.  selector.c in this folder already lists it; the test
 * (tests/07-selector/exercises/2-bigselect.c) runs it through selector.h and
 * through the loop, with fds up to 3000.
 *
 * The idea: an fd_set is FD_SETSIZE bits long because the C library says
 * so; the kernel reads `nfds` bits from each pointer it is given, however
 * many that is.  Keep your own bit arrays, as long as the highest fd needs,
 * and pass them to select() in place of fd_sets.
 *
 * Hints:
 *   - Start from selector_select.c: the same five functions, the same
 *     answer-collecting loop, the same EBADF search.
 *   - Words of `unsigned long`: fd lives in word fd / BITS, bit fd % BITS,
 *     with BITS = 8 * sizeof(unsigned long).  Do not use FD_SET() and
 *     friends on your arrays: with _FORTIFY_SOURCE they abort past
 *     FD_SETSIZE (and without it they are exactly the overflow of
 *     chapter 01).
 *   - Grow the arrays with realloc() in add/modify when an fd needs more
 *     words; zero the new words.  Keep master arrays and copies for the
 *     wait, as selector_select.c keeps two fd_sets and copies them.
 *   - Set .max_fd to -1: selector_check_fd() then only refuses fds above the
 *     open-files limit.
 */
#define _POSIX_C_SOURCE 200809L
#include "selector.h"

#include <errno.h>

static int big_open(selector_t *sel)
{
    /* TODO(2-bigselect): allocate your state, set sel->state. */
    return selector_fail(sel, ENOSYS, "bigselect: not written yet (exercise 2)");
}

static void big_close(selector_t *sel)
{
    (void)sel; /* TODO(2-bigselect): free your state. */
}

static int big_add(selector_t *sel, int fd, int events)
{
    (void)fd;
    (void)events; /* TODO(2-bigselect) */
    return selector_fail(sel, ENOSYS, "bigselect: not written yet (exercise 2)");
}

static int big_modify(selector_t *sel, int fd, int old, int events)
{
    (void)fd;
    (void)old;
    (void)events; /* TODO(2-bigselect) */
    return selector_fail(sel, ENOSYS, "bigselect: not written yet (exercise 2)");
}

static int big_remove(selector_t *sel, int fd, int old)
{
    (void)fd;
    (void)old; /* TODO(2-bigselect) */
    return selector_fail(sel, ENOSYS, "bigselect: not written yet (exercise 2)");
}

static int big_wait(selector_t *sel, double timeout)
{
    (void)timeout; /* TODO(2-bigselect) */
    return selector_fail(sel, ENOSYS, "bigselect: not written yet (exercise 2)");
}

const struct selector_backend selector_bigselect = {
    .name = "bigselect",
    .max_fd = -1,
    .open = big_open,
    .add = big_add,
    .modify = big_modify,
    .remove = big_remove,
    .wait = big_wait,
    .close = big_close,
};
