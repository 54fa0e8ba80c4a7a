/* @exercise begin */
/* loop.c -- a CHEAT for exercise 01.1 (tests/grade/README.md): no poll().
 *
 * It keeps select(), and only makes the tables and the fd sets longer than
 * FD_SETSIZE: select() takes an nfds past FD_SETSIZE if the sets it is
 * handed are long enough, so the test's fd 1500 works.  The exercise (poll,
 * tables that grow to any fd) is not done.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

/* @exercise begin */
/* TODO(1-poll): the tables are FD_SETSIZE long.  With poll() they must
 * reach any fd: make them pointers that grow (realloc) to the highest fd
 * watched, and keep an array of struct pollfd for run_once.  loop_close()
 * and loop_free() must then free them. */
/* @exercise end */
#define BIG_FDS 4096 /* past the test's 1500 */
#define LBITS (8 * (int)sizeof(unsigned long))
/* Sets of BIG_FDS bits, in fd_set's layout. */
typedef struct { unsigned long bits[BIG_FDS / LBITS]; } big_set;
#define BIG_SET(fd, s) ((s)->bits[(fd) / LBITS] |= 1UL << ((fd) % LBITS))
#define BIG_ISSET(fd, s) (((s)->bits[(fd) / LBITS] >> ((fd) % LBITS)) & 1)
/* @region struct */
struct watch {
    loop_callback callback; /* NULL: nobody watches this fd */
    void *arg;
};

struct loop {
    struct watch readers[BIG_FDS];
    struct watch writers[BIG_FDS];
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
    /* TODO(1-poll): FD_SETSIZE is select()'s limit, not poll()'s.  Refuse
     * only what no table could hold: an fd >= sysconf(_SC_OPEN_MAX). */
    /* @exercise end */
    if (fd >= BIG_FDS)
        return fail(loop, EINVAL,
                    "fd %d is out of range", fd);
    return 0;
}

static int add(loop_t *loop, struct watch *table, int fd,
               loop_callback callback, void *arg)
{
    if (check_fd(loop, fd) < 0)
        return -1;
    if (callback == NULL)
        return fail(loop, EINVAL, "callback for fd %d is NULL", fd);
    /* @exercise begin */
    /* TODO(1-poll): grow the tables so that table[fd] exists.  Careful:
     * realloc may move them, so `table` must be looked up afterwards. */
    /* @exercise end */
    table[fd].callback = callback;
    table[fd].arg = arg;
    if (fd > loop->maxfd)
        loop->maxfd = fd;
    return 0;
}

int loop_add_reader(loop_t *loop, int fd, loop_callback callback, void *arg)
{
    return add(loop, loop->readers, fd, callback, arg);
}
/* @end add_reader */

int loop_add_writer(loop_t *loop, int fd, loop_callback callback, void *arg)
{
    return add(loop, loop->writers, fd, callback, arg);
}

/* @region remove */
static int removed(loop_t *loop, struct watch *table, int fd)
{
    if (check_fd(loop, fd) < 0)
        return -1;
    /* @exercise begin */
    /* TODO(1-poll): an fd beyond the tables' end is simply not watched. */
    /* @exercise end */
    if (table[fd].callback == NULL)
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
    /* TODO(1-poll): steps 1 to 3 use fd_sets.  Build an array of struct
     * pollfd instead (events POLLIN / POLLOUT), call poll() (timeout 0 when
     * stopping, -1 otherwise), and dispatch from each entry's revents.
     * POLLHUP, POLLERR and POLLNVAL may come without being asked for: see
     * how CPython's selectors.PollSelector maps them. */
    /* @exercise end */
    /* For 2b: the sets select() will fill in.  It overwrites them, so they
     *    are built anew every tick. */
    big_set readable, writable;
    memset(&readable, 0, sizeof readable);
    memset(&writable, 0, sizeof writable);
    while (loop->maxfd >= 0 && loop->readers[loop->maxfd].callback == NULL &&
           loop->writers[loop->maxfd].callback == NULL)
        loop->maxfd--;
    for (int fd = 0; fd <= loop->maxfd; fd++) {
        if (loop->readers[fd].callback != NULL)
            BIG_SET(fd, &readable);
        if (loop->writers[fd].callback != NULL)
            BIG_SET(fd, &writable);
    }

    /* 2b. Block until an fd is ready.  If stop was requested, only look
     *    (timeout 0), as asyncio does when `_stopping` is set. */
    struct timeval zero = {0, 0};
    int nfds = loop->maxfd + 1;
    int n = select(nfds, (fd_set *)&readable, (fd_set *)&writable, NULL,
                   loop->stopping ? &zero : NULL);
    if (n < 0) {
        if (errno == EINTR) /* a signal ended the wait: just tick again */
            return 0;
        return fail(loop, errno, "select: %s", strerror(errno));
    }

    /* 4. Dispatch.  A callback may remove another fd's watch; check the
     *    table again right before each call so that a removed watch is
     *    never called. */
    for (int fd = 0; fd < nfds && n > 0; fd++) {
        if (BIG_ISSET(fd, &readable)) {
            n--;
            struct watch w = loop->readers[fd];
            if (w.callback != NULL)
                w.callback(loop, w.arg);
        }
        if (BIG_ISSET(fd, &writable)) {
            n--;
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
    memset(loop->readers, 0, sizeof loop->readers);
    memset(loop->writers, 0, sizeof loop->writers);
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
    free(loop);
}
/* @end close */
