/* selector_select.c -- chapter 07: the select(2) backend.
 *
 * The oldest interface, and the one chapters 01 to 06 used inside loop.c:
 * two fd_sets, bit arrays of FD_SETSIZE bits, that say which fds to watch.
 * select() overwrites them with the answer, so each wait works on copies of
 * the two master sets kept here (Redis's ae_select.c keeps rfds and _rfds
 * for the same reason).  A wait costs O(maxfd) twice: the kernel scans
 * maxfd + 1 bits of each set, and so does the loop below that collects the
 * answer -- however few fds are ready.
 */
#define _POSIX_C_SOURCE 200809L
#include "selector.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

struct select_state {
    fd_set readers, writers; /* the master sets: what is registered */
    int maxfd;               /* highest registered fd, -1 if none */
};

static int select_open(selector_t *sel)
{
    struct select_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return selector_fail(sel, ENOMEM, "out of memory for a select selector");
    FD_ZERO(&s->readers);
    FD_ZERO(&s->writers);
    s->maxfd = -1;
    sel->state = s;
    return 0;
}

static void select_close(selector_t *sel)
{
    free(sel->state);
}

/* Nothing to ask the kernel: set or clear two bits.  selector_check_fd()
 * has refused every fd >= FD_SETSIZE, so FD_SET stays inside the set. */
static int select_modify(selector_t *sel, int fd, int old, int events)
{
    struct select_state *s = sel->state;
    (void)old;
    FD_CLR(fd, &s->readers);
    FD_CLR(fd, &s->writers);
    if (events & SELECTOR_READ)
        FD_SET(fd, &s->readers);
    if (events & SELECTOR_WRITE)
        FD_SET(fd, &s->writers);
    if (fd > s->maxfd)
        s->maxfd = fd;
    return 0;
}

static int select_add(selector_t *sel, int fd, int events)
{
    return select_modify(sel, fd, 0, events);
}

static int select_remove(selector_t *sel, int fd, int old)
{
    struct select_state *s = sel->state;
    (void)old;
    FD_CLR(fd, &s->readers);
    FD_CLR(fd, &s->writers);
    while (s->maxfd >= 0 && !FD_ISSET(s->maxfd, &s->readers) &&
           !FD_ISSET(s->maxfd, &s->writers))
        s->maxfd--; /* nfds follows the highest fd still watched */
    return 0;
}

/* select() failed with EBADF: one of the registered fds is closed, but
 * select() does not say which.  Ask about each one (fcntl F_GETFD fails
 * with EBADF on a closed fd) and name the first. */
static int which_fd_is_closed(struct select_state *s)
{
    for (int fd = 0; fd <= s->maxfd; fd++)
        if ((FD_ISSET(fd, &s->readers) || FD_ISSET(fd, &s->writers)) &&
            fcntl(fd, F_GETFD) < 0 && errno == EBADF)
            return fd;
    return -1;
}

/* @region wait */
static int select_wait(selector_t *sel, double timeout)
{
    struct select_state *s = sel->state;
    fd_set readable = s->readers, writable = s->writers;
    struct timeval tv, *tvp = NULL; /* NULL: no limit */
    if (timeout >= 0) {
        /* Up to a whole microsecond: never wake before the deadline. */
        double usec = ceil(timeout * 1e6);
        tv.tv_sec = (time_t)(usec / 1e6);
        tv.tv_usec = (suseconds_t)(usec - (double)tv.tv_sec * 1e6);
        tvp = &tv;
    }
    int nfds = s->maxfd + 1;
    int n = select(nfds, &readable, &writable, NULL, tvp);
    if (n < 0) {
        int err = errno;
        if (err == EBADF) {
            int fd = which_fd_is_closed(s);
            if (fd >= 0)
                return selector_fail(sel, EBADF,
                                     "select: fd %d is watched but not open "
                                     "(remove its reader and writer before closing it)", fd);
        }
        return selector_fail(sel, err, "select: %s", strerror(err));
    }
    /* Collect the answer: a scan of every bit up to maxfd, in fd order. */
    int count = 0;
    for (int fd = 0; fd < nfds && n > 0; fd++) {
        int events = 0;
        if (FD_ISSET(fd, &readable))
            events |= SELECTOR_READ;
        if (FD_ISSET(fd, &writable))
            events |= SELECTOR_WRITE;
        if (events != 0) {
            sel->ready[count++] = (selector_event){fd, events};
            n -= (events & SELECTOR_READ ? 1 : 0) + (events & SELECTOR_WRITE ? 1 : 0);
        }
    }
    return count;
}
/* @end wait */

const struct selector_backend selector_select = {
    .name = "select",
    .max_fd = FD_SETSIZE - 1,
    .open = select_open,
    .add = select_add,
    .modify = select_modify,
    .remove = select_remove,
    .wait = select_wait,
    .close = select_close,
};
