/* selector_poll.c -- chapter 07: the poll(2) backend.
 *
 * poll() takes an array of struct pollfd {fd, events, revents}, one per
 * watched fd, instead of bit arrays: no FD_SETSIZE, and the cost follows
 * the number of fds watched, not the highest fd.  But the whole array
 * crosses into the kernel at every wait, the kernel polls every entry, and
 * the answer comes back in the same array, which must be scanned again:
 * O(n) per wait, like select, with n the number of fds watched.
 *
 * The array is kept compact: fds[0 .. count-1], in no particular order.
 * index[fd] says where fd is, so removing one moves the last entry into its
 * place (O(1)); modifying one changes its `events` in place.
 */
#define _POSIX_C_SOURCE 200809L
#include "selector.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

struct poll_state {
    struct pollfd *fds; /* the array poll() is given */
    int count, capacity;
    int *index;         /* index[fd]: position of fd in fds, if registered */
    int index_capacity;
};

static int poll_open(selector_t *sel)
{
    struct poll_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return selector_fail(sel, ENOMEM, "out of memory for a poll selector");
    sel->state = s;
    return 0;
}

static void poll_close(selector_t *sel)
{
    struct poll_state *s = sel->state;
    free(s->fds);
    free(s->index);
    free(s);
}

static short to_poll(int events)
{
    return (short)((events & SELECTOR_READ ? POLLIN : 0) |
                   (events & SELECTOR_WRITE ? POLLOUT : 0));
}

static int poll_add(selector_t *sel, int fd, int events)
{
    struct poll_state *s = sel->state;
    if (fd >= s->index_capacity) {
        int capacity = sel->capacity; /* selector.c already grew its own table */
        int *index = realloc(s->index, (size_t)capacity * sizeof *index);
        if (index == NULL)
            return selector_fail(sel, ENOMEM, "out of memory for fd %d", fd);
        s->index = index;
        s->index_capacity = capacity;
    }
    if (s->count == s->capacity) {
        int capacity = s->capacity ? s->capacity * 2 : 16;
        struct pollfd *fds = realloc(s->fds, (size_t)capacity * sizeof *fds);
        if (fds == NULL)
            return selector_fail(sel, ENOMEM, "out of memory for fd %d", fd);
        s->fds = fds;
        s->capacity = capacity;
    }
    s->index[fd] = s->count;
    s->fds[s->count++] = (struct pollfd){.fd = fd, .events = to_poll(events)};
    return 0;
}

static int poll_modify(selector_t *sel, int fd, int old, int events)
{
    struct poll_state *s = sel->state;
    (void)old;
    s->fds[s->index[fd]].events = to_poll(events);
    return 0;
}

static int poll_remove(selector_t *sel, int fd, int old)
{
    struct poll_state *s = sel->state;
    (void)old;
    int i = s->index[fd];
    s->fds[i] = s->fds[--s->count]; /* the last entry fills the hole */
    s->index[s->fds[i].fd] = i;
    return 0;
}

/* @region wait */
static int poll_wait(selector_t *sel, double timeout)
{
    struct poll_state *s = sel->state;
    int n = poll(s->fds, (nfds_t)s->count, selector_timeout_ms(timeout));
    if (n < 0)
        return selector_fail(sel, errno, "poll: %s", strerror(errno));
    /* The answer is in revents, somewhere in the array: scan all of it. */
    int count = 0;
    for (int i = 0; i < s->count && n > 0; i++) {
        short revents = s->fds[i].revents;
        if (revents == 0)
            continue;
        n--;
        if (revents & POLLNVAL) /* the fd is not open: closed while registered */
            return selector_fail(sel, EBADF,
                                 "poll: fd %d is watched but not open "
                                 "(remove its reader and writer before closing it)",
                                 s->fds[i].fd);
        /* As CPython's PollSelector: anything but POLLIN (POLLOUT, POLLERR,
         * POLLHUP) makes a writer ready, anything but POLLOUT a reader --
         * an error or a hang-up must wake whoever waits on the fd, so that
         * its read() or write() can report it.  Then keep only what was
         * asked for. */
        int events = 0;
        if (revents & ~POLLIN)
            events |= SELECTOR_WRITE;
        if (revents & ~POLLOUT)
            events |= SELECTOR_READ;
        events &= sel->events[s->fds[i].fd];
        if (events != 0)
            sel->ready[count++] = (selector_event){s->fds[i].fd, events};
    }
    return count;
}
/* @end wait */

const struct selector_backend selector_poll = {
    .name = "poll",
    .max_fd = -1,
    .open = poll_open,
    .add = poll_add,
    .modify = poll_modify,
    .remove = poll_remove,
    .wait = poll_wait,
    .close = poll_close,
};
