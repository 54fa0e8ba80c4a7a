/* selector_epoll.c -- chapter 07, exercise 1 (answer): the epoll backend
 * made EDGE-triggered: one flag, in ctl() below.  The rest is the stage's.
 *
 * The epoll(7) backend (Linux).
 *
 * epoll turns the question around.  select and poll hand the kernel the
 * whole list of fds at every wait; with epoll the list lives in the kernel,
 * in an "epoll instance" (an fd of its own): epoll_ctl() adds, changes or
 * removes one entry, once, and epoll_wait() only collects.  Each watched fd
 * has a callback in the kernel that puts its entry on the instance's ready
 * list when the fd becomes ready, so epoll_wait() costs O(ready), not
 * O(watched): it reads the ready list, checks each entry again (level-
 * triggered: an entry still ready goes back on the list for the next wait)
 * and copies out at most maxevents of them.
 *
 * The price: a system call per registration change (select and poll only
 * flip bits in user memory), and epoll's own rules, handled below:
 *   - regular files and directories are refused with EPERM (they are always
 *     ready; select and poll say so at every wait, epoll will not);
 *   - the kernel watches the open file, not the fd number: closing the fd
 *     drops the entry silently (if no dup() of it is open elsewhere), and a
 *     later EPOLL_CTL_DEL fails with EBADF or ENOENT -- ignored here.
 */
#define _GNU_SOURCE
#include "selector.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

struct epoll_state {
    int epfd;                 /* the epoll instance */
    struct epoll_event *buf;  /* what epoll_wait() fills in */
    int capacity;
};

static int ep_open(selector_t *sel)
{
    struct epoll_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return selector_fail(sel, ENOMEM, "out of memory for an epoll selector");
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (s->epfd < 0) {
        int err = errno;
        free(s);
        return selector_fail(sel, err, "epoll_create1: %s", strerror(err));
    }
    sel->state = s;
    return 0;
}

static void ep_close(selector_t *sel)
{
    struct epoll_state *s = sel->state;
    close(s->epfd);
    free(s->buf);
    free(s);
}

static int ctl(struct epoll_state *s, int op, int fd, int events)
{
    /* Edge-triggered (exercise 1): EPOLLET.  The kernel reports an fd when
     * it BECOMES ready -- new bytes arrive, room appears -- and not again
     * until the next such change, however much is left unread.  Every
     * reader must now read until EAGAIN. */
    struct epoll_event ev = {
        .events = (events & SELECTOR_READ ? EPOLLIN : 0u) |
                  (events & SELECTOR_WRITE ? EPOLLOUT : 0u) | EPOLLET,
        .data.fd = fd,
    };
    return epoll_ctl(s->epfd, op, fd, &ev);
}

/* @region register */
static int ep_add(selector_t *sel, int fd, int events)
{
    struct epoll_state *s = sel->state;
    if (ctl(s, EPOLL_CTL_ADD, fd, events) == 0)
        return 0;
    int err = errno;
    if (err == EPERM)
        return selector_fail(sel, EPERM,
                             "epoll cannot watch fd %d: it is a regular file or a "
                             "directory, which is always ready (epoll_ctl: %s)",
                             fd, strerror(err));
    if (err == EBADF)
        return selector_fail(sel, EBADF, "epoll cannot watch fd %d: it is not open", fd);
    return selector_fail(sel, err, "epoll_ctl(EPOLL_CTL_ADD, fd %d): %s", fd, strerror(err));
}

static int ep_modify(selector_t *sel, int fd, int old, int events)
{
    struct epoll_state *s = sel->state;
    (void)old;
    if (ctl(s, EPOLL_CTL_MOD, fd, events) == 0)
        return 0;
    /* ENOENT: the fd was closed while registered (the kernel dropped it)
     * and its number now belongs to a new file.  Watch the new one, as
     * libev's epoll_modify does. */
    if (errno == ENOENT)
        return ep_add(sel, fd, events);
    return selector_fail(sel, errno, "epoll_ctl(EPOLL_CTL_MOD, fd %d): %s", fd, strerror(errno));
}

static int ep_remove(selector_t *sel, int fd, int old)
{
    struct epoll_state *s = sel->state;
    (void)old;
    /* EBADF / ENOENT: closed before it was removed; the kernel has already
     * forgotten it, which is all we asked. */
    if (ctl(s, EPOLL_CTL_DEL, fd, 0) < 0 && errno != EBADF && errno != ENOENT)
        return selector_fail(sel, errno, "epoll_ctl(EPOLL_CTL_DEL, fd %d): %s", fd,
                             strerror(errno));
    return 0;
}
/* @end register */

/* @region wait */
static int ep_wait(selector_t *sel, double timeout)
{
    struct epoll_state *s = sel->state;
    /* Room for every registered fd: one wait reports them all if they are
     * all ready.  (At least 1: epoll_wait refuses maxevents 0.) */
    int maxevents = sel->count > 0 ? sel->count : 1;
    if (maxevents > s->capacity) {
        struct epoll_event *buf = realloc(s->buf, (size_t)maxevents * sizeof *buf);
        if (buf == NULL)
            return selector_fail(sel, ENOMEM, "out of memory for epoll's events");
        s->buf = buf;
        s->capacity = maxevents;
    }
    int n = epoll_wait(s->epfd, s->buf, maxevents, selector_timeout_ms(timeout));
    if (n < 0)
        return selector_fail(sel, errno, "epoll_wait: %s", strerror(errno));
    /* Only the ready fds come back: this loop is O(n ready), not O(watched). */
    int count = 0;
    for (int i = 0; i < n; i++) {
        int fd = s->buf[i].data.fd;
        uint32_t revents = s->buf[i].events;
        int events = 0;
        if (revents & ~(uint32_t)EPOLLIN) /* EPOLLOUT, EPOLLERR, EPOLLHUP: as CPython */
            events |= SELECTOR_WRITE;
        if (revents & ~(uint32_t)EPOLLOUT) /* EPOLLIN, EPOLLERR, EPOLLHUP */
            events |= SELECTOR_READ;
        events &= selector_events_of(sel, fd);
        if (events != 0)
            sel->ready[count++] = (selector_event){fd, events};
    }
    return count;
}
/* @end wait */

const struct selector_backend selector_epoll = {
    .name = "epoll",
    .max_fd = -1,
    .open = ep_open,
    .add = ep_add,
    .modify = ep_modify,
    .remove = ep_remove,
    .wait = ep_wait,
    .close = ep_close,
};
