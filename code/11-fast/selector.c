/* selector.c -- chapter 07: what every backend shares.
 *
 * The list of backends, the fd -> events table that tells a backend what
 * changes, the checks on every argument, and the timeout rules.  Python's
 * selectors.py splits the same way: _BaseSelectorImpl keeps _fd_to_key and
 * checks, SelectSelector, PollSelector, EpollSelector and KqueueSelector
 * only talk to the kernel.
 */
#define _POSIX_C_SOURCE 200809L
#include "selector.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* @region backends */
/* The backends this platform has, best first: the first is the default, as
 * selectors.DefaultSelector picks epoll, kqueue, devpoll, poll, select in
 * that order.  The stage's Makefile builds selector_epoll.c on Linux only
 * and selector_kqueue.c everywhere else; these conditions must say the same. */
#if defined(__linux__)
#define HAVE_EPOLL 1
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || \
    defined(__NetBSD__) || defined(__DragonFly__)
#define HAVE_KQUEUE 1
#endif

extern const struct selector_backend selector_select, selector_poll;
#ifdef HAVE_EPOLL
extern const struct selector_backend selector_epoll;
#endif
#ifdef HAVE_KQUEUE
extern const struct selector_backend selector_kqueue;
#endif

static const struct selector_backend *const backends[] = {
#ifdef HAVE_EPOLL
    &selector_epoll,
#endif
#ifdef HAVE_KQUEUE
    &selector_kqueue,
#endif
    &selector_poll,
    &selector_select,
};
#define NBACKENDS (sizeof backends / sizeof backends[0])
/* @end backends */

const char *selector_backends(void)
{
#if defined(HAVE_EPOLL)
    return "epoll poll select";
#elif defined(HAVE_KQUEUE)
    return "kqueue poll select";
#else
    return "poll select";
#endif
}

int selector_fail(selector_t *sel, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sel->error, sizeof sel->error, fmt, ap);
    va_end(ap);
    errno = err;
    return -1;
}

const char *selector_error(const selector_t *sel)
{
    return sel->error;
}

const char *selector_name(const selector_t *sel)
{
    return sel->backend->name;
}

/* @region open */
selector_t *selector_open(const char *name, char *err, size_t errlen)
{
    const struct selector_backend *backend = NULL;
    if (name == NULL || name[0] == '\0')
        backend = backends[0];
    for (size_t i = 0; backend == NULL && i < NBACKENDS; i++)
        if (strcmp(backends[i]->name, name) == 0)
            backend = backends[i];
    if (backend == NULL) {
        if (err != NULL)
            snprintf(err, errlen, "no selector backend '%s' in this build (it has: %s)",
                     name, selector_backends());
        errno = EINVAL;
        return NULL;
    }
    selector_t *sel = calloc(1, sizeof *sel);
    if (sel == NULL) {
        if (err != NULL)
            snprintf(err, errlen, "out of memory for a selector");
        errno = ENOMEM;
        return NULL;
    }
    sel->backend = backend;
    sel->ready_capacity = 16;
    sel->ready = calloc((size_t)sel->ready_capacity, sizeof *sel->ready);
    if (sel->ready == NULL) {
        selector_fail(sel, ENOMEM, "out of memory for a selector");
    } else if (backend->open(sel) == 0) {
        return sel;
    }
    int saved = errno;
    if (err != NULL)
        snprintf(err, errlen, "%s", sel->error);
    free(sel->ready);
    free(sel);
    errno = saved;
    return NULL;
}
/* @end open */

void selector_close(selector_t *sel)
{
    if (sel == NULL)
        return;
    sel->backend->close(sel);
    free(sel->events);
    free(sel->ready);
    free(sel);
}

/* @region check_fd */
int selector_check_fd(selector_t *sel, int fd)
{
    if (fd < 0)
        return selector_fail(sel, EBADF, "fd %d is not a file descriptor", fd);
    if (sel->backend->max_fd >= 0 && fd > sel->backend->max_fd)
        return selector_fail(sel, EINVAL,
                             "fd %d is out of range for %s() (FD_SETSIZE is %d)",
                             fd, sel->backend->name, sel->backend->max_fd + 1);
    /* No fd_set: the only limit is the open-files limit.  An fd above it
     * cannot be open, and refusing it keeps the tables indexed by fd from
     * asking realloc for gigabytes (fd 2000000000).  The hard limit, not
     * the soft one: an fd opened before the soft limit was lowered stays
     * open, and valid. */
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_max != RLIM_INFINITY &&
        (rlim_t)fd >= lim.rlim_max)
        return selector_fail(sel, EINVAL,
                             "fd %d is out of range: the process may not open more "
                             "than %llu files (RLIMIT_NOFILE)",
                             fd, (unsigned long long)lim.rlim_max);
    return 0;
}
/* @end check_fd */

int selector_fileno(const selector_t *sel)
{
    return sel->backend->fileno != NULL ? sel->backend->fileno(sel) : -1;
}

int selector_events_of(const selector_t *sel, int fd)
{
    return fd >= 0 && fd < sel->capacity ? sel->events[fd] : 0;
}

/* Make events[] at least fd + 1 long, and ready[] at least count + 1. */
static int grow(selector_t *sel, int fd)
{
    if (fd >= sel->capacity) {
        int capacity = sel->capacity ? sel->capacity : 64;
        while (capacity <= fd)
            capacity = capacity > INT_MAX / 2 ? INT_MAX : capacity * 2;
        unsigned char *events = realloc(sel->events, (size_t)capacity);
        if (events == NULL)
            return selector_fail(sel, ENOMEM, "out of memory for fd %d", fd);
        memset(events + sel->capacity, 0, (size_t)(capacity - sel->capacity));
        sel->events = events;
        sel->capacity = capacity;
    }
    if (sel->count + 1 > sel->ready_capacity) {
        int capacity = sel->ready_capacity * 2;
        selector_event *ready = realloc(sel->ready, (size_t)capacity * sizeof *ready);
        if (ready == NULL)
            return selector_fail(sel, ENOMEM, "out of memory for fd %d", fd);
        sel->ready = ready;
        sel->ready_capacity = capacity;
    }
    return 0;
}

static int check_events(selector_t *sel, int fd, int events)
{
    if (events == 0 || (events & ~(SELECTOR_READ | SELECTOR_WRITE)) != 0)
        return selector_fail(sel, EINVAL, "invalid events %#x for fd %d", events, fd);
    return 0;
}

/* @region register */
int selector_register(selector_t *sel, int fd, int events)
{
    if (selector_check_fd(sel, fd) < 0 || check_events(sel, fd, events) < 0)
        return -1;
    if (selector_events_of(sel, fd) != 0)
        return selector_fail(sel, EEXIST, "fd %d is already registered", fd);
    /* The selector's own fd is not one to watch: epoll_ctl() refuses an
     * epoll instance that watches itself with a bare EINVAL; this says why,
     * and refuses the kqueue's fd the same way. */
    if (fd == selector_fileno(sel))
        return selector_fail(sel, EINVAL, "fd %d is the %s selector's own fd", fd,
                             sel->backend->name);
    if (grow(sel, fd) < 0 || sel->backend->add(sel, fd, events) < 0)
        return -1;
    sel->events[fd] = (unsigned char)events;
    sel->count++;
    return 0;
}

int selector_modify(selector_t *sel, int fd, int events)
{
    if (selector_check_fd(sel, fd) < 0 || check_events(sel, fd, events) < 0)
        return -1;
    int old = selector_events_of(sel, fd);
    if (old == 0)
        return selector_fail(sel, ENOENT, "fd %d is not registered", fd);
    if (old == events)
        return 0; /* nothing to tell the kernel */
    if (sel->backend->modify(sel, fd, old, events) < 0)
        return -1;
    sel->events[fd] = (unsigned char)events;
    return 0;
}

int selector_unregister(selector_t *sel, int fd)
{
    if (selector_check_fd(sel, fd) < 0)
        return -1;
    int old = selector_events_of(sel, fd);
    if (old == 0)
        return selector_fail(sel, ENOENT, "fd %d is not registered", fd);
    if (sel->backend->remove(sel, fd, old) < 0)
        return -1;
    sel->events[fd] = 0;
    sel->count--;
    return 0;
}
/* @end register */

/* @region wait */
int selector_wait(selector_t *sel, double timeout, selector_event **events)
{
    if (isnan(timeout))
        return selector_fail(sel, EINVAL, "the timeout is NaN");
    if (timeout > SELECTOR_MAX_TIMEOUT)
        timeout = SELECTOR_MAX_TIMEOUT;
    int n = sel->backend->wait(sel, timeout);
    if (n < 0 && errno == EINTR)
        selector_fail(sel, EINTR, "%s: interrupted by a signal", sel->backend->name);
    *events = sel->ready;
    return n;
}

int selector_timeout_ms(double timeout)
{
    if (timeout < 0)
        return -1;
    double ms = ceil(timeout * 1e3); /* up: never wake before the deadline */
    return ms < (double)INT_MAX ? (int)ms : INT_MAX;
}
/* @end wait */
