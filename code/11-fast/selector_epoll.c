/* selector_epoll.c -- chapter 07: the epoll(7) backend (Linux).
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
 *   - the kernel watches the open file, not the fd number.  Closing the
 *     fd drops the entry only if no dup() of it is open elsewhere (in this
 *     process, or in a fork()ed child).  If one is, the entry stays,
 *     reported under the old number, and no call can remove it any more:
 *     EPOLL_CTL_DEL of the closed number fails with EBADF (or ENOENT if
 *     the number now holds another file).  Such an entry, if its file is
 *     ready, makes every epoll_wait() return at once.  So when a DEL fails
 *     that way, or a wait reports an fd that is not registered, the
 *     selector is marked stale, and the next wait first replaces the epoll
 *     instance by a new one that holds only what is registered
 *     (ep_rebuild).  libev does the same: when an event comes for an fd
 *     it no longer wants and EPOLL_CTL_MOD/DEL fails ("a child has the fd
 *     but we closed it"), it sets `postfork`, and before its next poll
 *     epoll_fork() makes a new instance and re-arms every fd.  CPython's
 *     EpollSelector ignores the failed DEL, and its loop spins.
 */
#define _GNU_SOURCE
#include "selector.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

struct epoll_state {
    int epfd;                 /* the epoll instance */
    struct epoll_event *buf;  /* what epoll_wait() fills in */
    int capacity;
    bool stale;               /* the instance may hold an entry we cannot remove */
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

static int ep_fileno(const selector_t *sel)
{
    const struct epoll_state *s = sel->state;
    return s->epfd;
}

static int ctl_on(int epfd, int op, int fd, int events)
{
    /* Level-triggered: no EPOLLET.  (Exercise 1 adds it, and the bug it
     * invites.) */
    struct epoll_event ev = {
        .events = (events & SELECTOR_READ ? EPOLLIN : 0u) |
                  (events & SELECTOR_WRITE ? EPOLLOUT : 0u),
        .data.fd = fd,
    };
    return epoll_ctl(epfd, op, fd, &ev);
}

static int ctl(struct epoll_state *s, int op, int fd, int events)
{
    return ctl_on(s->epfd, op, fd, events);
}

/* @region rebuild */
/* Replace the epoll instance by a new one that holds exactly the fds
 * registered (sel->events), so that an entry left by a closed fd is gone.
 * The new instance takes the old one's number (dup3 closes the old one),
 * so selector_fileno() does not change.  A registered fd that is closed
 * now (EBADF), or whose number now holds a regular file (EPERM), is the
 * caller's bug (closed before it was unregistered): the new instance does
 * not watch it, as epoll forgets a closed fd whose file is gone.  Any other
 * failure (ENOMEM, EMFILE, ENOSPC: max_user_watches) keeps the old
 * instance and the stale mark, and the wait fails with a message. */
static int ep_rebuild(selector_t *sel)
{
    struct epoll_state *s = sel->state;
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0)
        return selector_fail(sel, errno, "epoll: cannot replace the instance that holds "
                             "a closed fd: epoll_create1: %s", strerror(errno));
    for (int fd = 0; fd < sel->capacity; fd++) {
        if (sel->events[fd] == 0 || ctl_on(epfd, EPOLL_CTL_ADD, fd, sel->events[fd]) == 0 ||
            errno == EBADF || errno == EPERM)
            continue;
        int err = errno;
        close(epfd);
        return selector_fail(sel, err, "epoll: cannot replace the instance that holds a "
                             "closed fd: epoll_ctl(EPOLL_CTL_ADD, fd %d): %s", fd, strerror(err));
    }
    if (dup3(epfd, s->epfd, O_CLOEXEC) < 0) {
        close(s->epfd); /* cannot keep the number: take the new one */
        s->epfd = epfd;
    } else {
        close(epfd);
    }
    s->stale = false;
    return 0;
}
/* @end rebuild */

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
    /* ENOENT: the fd was closed while registered and its number now
     * belongs to a new file.  Watch the new one, as libev's epoll_modify
     * does; and if a dup() kept the old file, its entry is still in the
     * instance: replace the instance at the next wait. */
    if (errno == ENOENT) {
        if (ep_add(sel, fd, events) < 0)
            return -1;
        s->stale = true;
        return 0;
    }
    return selector_fail(sel, errno, "epoll_ctl(EPOLL_CTL_MOD, fd %d): %s", fd, strerror(errno));
}

static int ep_remove(selector_t *sel, int fd, int old)
{
    struct epoll_state *s = sel->state;
    (void)old;
    if (ctl(s, EPOLL_CTL_DEL, fd, 0) == 0)
        return 0;
    /* EBADF / ENOENT: closed before it was removed.  The kernel has
     * forgotten it -- unless a dup() keeps its file open, and then nothing
     * can remove its entry but a new instance: at the next wait. */
    if (errno == EBADF || errno == ENOENT) {
        s->stale = true;
        return 0;
    }
    return selector_fail(sel, errno, "epoll_ctl(EPOLL_CTL_DEL, fd %d): %s", fd,
                         strerror(errno));
}
/* @end register */

/* @region wait */
static int ep_wait(selector_t *sel, double timeout)
{
    struct epoll_state *s = sel->state;
    if (s->stale && ep_rebuild(sel) < 0)
        return -1;
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
        if (selector_events_of(sel, fd) == 0) {
            s->stale = true; /* an entry we cannot remove: see ep_rebuild */
            continue;
        }
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
    .fileno = ep_fileno,
};
