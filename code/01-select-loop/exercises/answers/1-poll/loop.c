/* @exercise begin */
/* loop.c -- chapter 01, exercise 1 (answer): the same loop on poll().
 *
 * One tick (run_once) is: build an array of struct pollfd from the watch
 * tables, block in poll(), call the callback of every fd that poll()
 * reported.  The loop runs ticks until loop_stop() sets `stopping`.
 *
 * poll() names each fd in a struct pollfd instead of a bit of an fd_set, so
 * it has no FD_SETSIZE: any fd the process may open can be watched.  The
 * watch tables are still arrays indexed by fd, but they grow (realloc) to the
 * highest fd ever watched instead of being FD_SETSIZE long.
 * @exercise end
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
/* @exercise begin */
#include <poll.h>
#include <string.h>
#include <unistd.h>
/* @exercise end */

/* @region struct */
struct watch {
    loop_callback callback; /* NULL: nobody watches this fd */
    void *arg;
};

struct loop {
    /* @exercise begin */
    struct watch *readers; /* readers[fd], for 0 <= fd < capacity */
    struct watch *writers; /* writers[fd], likewise */
    int capacity;          /* length of both tables (0 until the first add) */
    struct pollfd *pollfds; /* run_once's array, `capacity` long at most */
    /* @exercise end */
    int maxfd;     /* highest fd that may be watched, -1 if none */
    bool stopping; /* loop_stop() was called: finish this tick, then return */
    bool running;  /* inside loop_run_forever() */
    bool closed;   /* loop_close() was called */
    char error[160];
};
/* @end struct */

static int fail(loop_t *loop, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(loop->error, sizeof loop->error, fmt, ap);
    va_end(ap);
    errno = err;
    return -1;
}

loop_t *loop_new(void)
{
    loop_t *loop = calloc(1, sizeof *loop);
    if (loop == NULL)
        return NULL;
    loop->maxfd = -1;
    return loop;
}

const char *loop_error(const loop_t *loop)
{
    return loop->error;
}

/* @region add_reader */
static int check_fd(loop_t *loop, int fd)
{
    if (loop->closed)
        return fail(loop, EINVAL, "loop is closed");
    if (fd < 0)
        return fail(loop, EBADF, "fd %d is not a file descriptor", fd);
    /* @exercise begin */
    /* No fd_set, so no FD_SETSIZE.  An fd the process cannot have open is
     * still refused: the tables are indexed by fd, and fd 2000000000 would
     * ask realloc for gigabytes. */
    long open_max = sysconf(_SC_OPEN_MAX);
    if (open_max > 0 && fd >= open_max)
        return fail(loop, EINVAL,
                    "fd %d is out of range: the process may open only %ld fds "
                    "(ulimit -n)", fd, open_max);
    return 0;
}

/* Make both tables (and the pollfd array) at least fd + 1 long. */
static int grow(loop_t *loop, int fd)
{
    if (fd < loop->capacity)
        return 0;
    int capacity = loop->capacity ? loop->capacity : 64;
    while (capacity <= fd)
        capacity *= 2;
    struct watch *r = realloc(loop->readers, (size_t)capacity * sizeof *r);
    if (r == NULL)
        return fail(loop, ENOMEM, "out of memory watching fd %d", fd);
    loop->readers = r;
    struct watch *w = realloc(loop->writers, (size_t)capacity * sizeof *w);
    if (w == NULL)
        return fail(loop, ENOMEM, "out of memory watching fd %d", fd);
    loop->writers = w;
    struct pollfd *p = realloc(loop->pollfds, (size_t)capacity * sizeof *p);
    if (p == NULL)
        return fail(loop, ENOMEM, "out of memory watching fd %d", fd);
    loop->pollfds = p;
    /* The new entries watch nothing. */
    size_t old = (size_t)loop->capacity, added = (size_t)(capacity - loop->capacity);
    memset(loop->readers + old, 0, added * sizeof *r);
    memset(loop->writers + old, 0, added * sizeof *w);
    loop->capacity = capacity;
    return 0;
}

static int add(loop_t *loop, int writer, int fd, loop_callback callback,
               void *arg)
{
    if (check_fd(loop, fd) < 0)
        return -1;
    if (callback == NULL)
        return fail(loop, EINVAL, "callback for fd %d is NULL", fd);
    if (grow(loop, fd) < 0)
        return -1;
    /* Pick the table after grow(): realloc may have moved it. */
    struct watch *table = writer ? loop->writers : loop->readers;
    table[fd].callback = callback;
    table[fd].arg = arg;
    if (fd > loop->maxfd)
        loop->maxfd = fd;
    return 0;
}

int loop_add_reader(loop_t *loop, int fd, loop_callback callback, void *arg)
{
    return add(loop, 0, fd, callback, arg);
}
/* @end add_reader */

int loop_add_writer(loop_t *loop, int fd, loop_callback callback, void *arg)
{
    return add(loop, 1, fd, callback, arg);
    /* @exercise end */
}

/* @region remove */
static int removed(loop_t *loop, struct watch *table, int fd)
{
    if (check_fd(loop, fd) < 0)
        return -1;
    /* @exercise begin */
    if (fd >= loop->capacity || table[fd].callback == NULL)
    /* @exercise end */
        return 0;
    table[fd].callback = NULL;
    table[fd].arg = NULL;
    /* maxfd only shrinks lazily, at the top of the next tick. */
    return 1;
}

int loop_remove_reader(loop_t *loop, int fd)
{
    return removed(loop, loop->readers, fd);
}

int loop_remove_writer(loop_t *loop, int fd)
{
    return removed(loop, loop->writers, fd);
}
/* @end remove */

/* @region run_once */
/* One tick: wait for I/O, then dispatch it. */
static int run_once(loop_t *loop)
{
    /* @exercise begin */
    /* 1. List the fds to watch, one struct pollfd each, in fd order.  poll()
     *    writes only `revents`, but the list is rebuilt every tick anyway,
     *    since callbacks change the tables. */
    while (loop->maxfd >= 0 && loop->readers[loop->maxfd].callback == NULL &&
           loop->writers[loop->maxfd].callback == NULL)
        loop->maxfd--;
    nfds_t nfds = 0;
    for (int fd = 0; fd <= loop->maxfd; fd++) {
        short events = 0;
        if (loop->readers[fd].callback != NULL)
            events |= POLLIN;
        if (loop->writers[fd].callback != NULL)
            events |= POLLOUT;
        if (events != 0)
            loop->pollfds[nfds++] = (struct pollfd){fd, events, 0};
    }

    /* 2b. Block until an fd is ready.  If stop was requested, only look
     *    (timeout 0), as asyncio does when `_stopping` is set. */
    int n = poll(loop->pollfds, nfds, loop->stopping ? 0 : -1);
    if (n < 0) {
        if (errno == EINTR) /* a signal ended the wait: just tick again */
            return 0;
        return fail(loop, errno, "poll: %s", strerror(errno));
    }

    /* 3. Dispatch.  POLLHUP, POLLERR and POLLNVAL come whatever we asked
     *    for; like CPython's PollSelector, count anything but POLLOUT as
     *    "readable" and anything but POLLIN as "writable", so that the
     *    callback sees the hang-up or the error when it reads or writes.
     *    A callback may remove another fd's watch, or add one (grow() may
     *    then move the tables, never pollfds' contents), so look the watch
     *    up again right before each call. */
    for (nfds_t i = 0; i < nfds && n > 0; i++) {
        int fd = loop->pollfds[i].fd;
        short revents = loop->pollfds[i].revents;
        if (revents == 0)
            continue;
        n--;
        if (revents & ~POLLOUT) {
            struct watch w = loop->readers[fd];
            if (w.callback != NULL)
                w.callback(loop, w.arg);
        }
        if (revents & ~POLLIN) {
    /* @exercise end */
            struct watch w = loop->writers[fd];
            if (w.callback != NULL)
                w.callback(loop, w.arg);
        }
    }
    return 0;
}
/* @end run_once */

/* @region run_forever */
int loop_run_forever(loop_t *loop)
{
    if (loop->closed)
        return fail(loop, EINVAL, "loop is closed");
    if (loop->running)
        return fail(loop, EBUSY, "loop is already running");
    loop->running = true;
    int rc = 0;
    for (;;) {
        if (run_once(loop) < 0) {
            rc = -1;
            break;
        }
        if (loop->stopping)
            break;
    }
    loop->stopping = false;
    loop->running = false;
    return rc;
}

void loop_stop(loop_t *loop)
{
    loop->stopping = true;
}
/* @end run_forever */

/* @region close */
int loop_close(loop_t *loop)
{
    if (loop->running)
        return fail(loop, EBUSY, "cannot close a running loop");
    if (loop->closed)
        return 0; /* closing twice is harmless, as in asyncio */
    /* @exercise begin */
    free(loop->readers);
    free(loop->writers);
    free(loop->pollfds);
    loop->readers = loop->writers = NULL;
    loop->pollfds = NULL;
    loop->capacity = 0;
    /* @exercise end */
    loop->maxfd = -1;
    loop->closed = true;
    return 0;
}

void loop_free(loop_t *loop)
{
    if (loop == NULL)
        return;
    if (loop->running) { /* from a callback: run_once still uses the loop */
        fail(loop, EBUSY, "cannot free a running loop: free it after "
                          "loop_run_forever() returns");
        return;
    }
    /* @exercise begin */
    free(loop->readers);
    free(loop->writers);
    free(loop->pollfds);
    /* @exercise end */
    free(loop);
}
/* @end close */
