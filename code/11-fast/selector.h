/* selector.h -- chapter 07: one interface over select, poll, epoll and kqueue.
 *
 * A selector is Python's selectors.BaseSelector in C: it remembers which
 * file descriptors to watch, for reading, writing or both, and waits until
 * some of them are ready.  It knows nothing of callbacks: the loop keeps
 * those in its own tables, indexed by fd, and asks the selector only "which
 * fds now?".
 *
 * Four backends implement it, each in its own file, with one identical
 * static interface (struct selector_backend, at the bottom), as Redis's
 * ae_select.c / ae_epoll.c / ae_kqueue.c do for ae.c:
 *   selector_select.c   select(2):  everywhere; fds below FD_SETSIZE only
 *   selector_poll.c     poll(2):    every POSIX system
 *   selector_epoll.c    epoll(7):   Linux
 *   selector_kqueue.c   kqueue(2):  macOS and the BSDs (not built on Linux)
 * All are level-triggered, as asyncio's selectors are: an fd that stays
 * ready is reported at every wait until the program reads (or writes) it.
 *
 * Errors: -1 (or NULL) with errno set, and a sentence in selector_error().
 */
#ifndef SELECTOR_H
#define SELECTOR_H

#include <stddef.h>

/* @region interface */
/* What to watch an fd for, and what a wait found: a bit mask, as
 * selectors.EVENT_READ and selectors.EVENT_WRITE. */
#define SELECTOR_READ  1
#define SELECTOR_WRITE 2

/* One ready fd.  Every backend reports an fd at most once per wait, with
 * both bits set if it is readable and writable (kqueue reports the two
 * filters separately; its backend merges them).  The order of the events is
 * the kernel's: do not rely on it (the loop sorts them, see loop.c). */
typedef struct selector_event {
    int fd;
    int events; /* SELECTOR_READ | SELECTOR_WRITE, only bits that were asked for */
} selector_event;

typedef struct selector selector_t;

/* The backends this build has, best first, separated by spaces:
 * "epoll poll select" on Linux, "kqueue poll select" on macOS and the BSDs. */
const char *selector_backends(void);

/* A new selector on the backend called `name`, or on the best one when name
 * is NULL or "".  NULL with errno set: EINVAL for a name this build does
 * not have (the message, written to err when it is not NULL, lists the
 * ones it has), or what the kernel said (EMFILE, ENOMEM, ...). */
selector_t *selector_open(const char *name, char *err, size_t errlen);

/* The backend's name: "select", "poll", "epoll" or "kqueue". */
const char *selector_name(const selector_t *sel);

/* Can this backend watch fd at all?  0, or -1 with EBADF for a negative fd
 * and EINVAL for one above the backend's limit: FD_SETSIZE - 1 for select
 * (FD_SET with a larger fd writes past the end of the fd_set), the
 * process's open-files limit for the others (RLIMIT_NOFILE, `ulimit -n`:
 * no open fd can be above it). */
int selector_check_fd(selector_t *sel, int fd);

/* Start watching fd for `events` (SELECTOR_READ, SELECTOR_WRITE or both):
 * selectors' register().  Refused if fd is already registered (EEXIST),
 * events is 0 or has other bits (EINVAL), fd is the selector's own
 * (selector_fileno(): EINVAL), or the kernel says no: epoll
 * refuses a regular file or a directory (EPERM) and an fd that is not open
 * (EBADF); select and poll accept both and only look at the fd when they
 * wait.  A refused call changes nothing. */
int selector_register(selector_t *sel, int fd, int events);

/* Watch a registered fd for other events (ENOENT if it is not registered). */
int selector_modify(selector_t *sel, int fd, int events);

/* Stop watching fd (ENOENT if it is not registered).  Unregister BEFORE
 * closing the fd.  An fd that was closed anyway is still forgotten here,
 * without an error, and is never reported again, on every backend.  (epoll
 * needs work for that: see "closed while registered" below.) */
int selector_unregister(selector_t *sel, int fd);

/* The events fd is registered for; 0 if it is not registered. */
int selector_events_of(const selector_t *sel, int fd);

/* The selector's own fd: the epoll instance or the kqueue; -1 for select
 * and poll, which have none.  It is not one to watch (selector_register
 * refuses it), and it stays the same number for the selector's life. */
int selector_fileno(const selector_t *sel);

/* Wait until at least one registered fd is ready or `timeout` seconds have
 * passed (timeout < 0: no limit; 0: only look).  Returns the number of
 * ready fds, n >= 0, and points *events at an array of n events that stays
 * valid until the next call on this selector.
 *   - The timeout is rounded UP to what the kernel can count (a microsecond
 *     for select, a millisecond for poll and epoll, a nanosecond for
 *     kqueue), never down: a wait that ends before its deadline would make
 *     the loop wake up for a timer that is not due yet, again and again.
 *   - A timeout longer than SELECTOR_MAX_TIMEOUT is cut to it.  NaN is
 *     refused (EINVAL).
 *   - A signal that ends the wait: -1 with errno EINTR.  The wait is not
 *     resumed here; the caller decides (the loop just ticks again).
 *   - A registered fd found closed (select's EBADF, poll's POLLNVAL): -1
 *     with errno EBADF and a message that names the fd.  epoll and kqueue
 *     cannot see that the fd is closed; what they do instead is below.
 * Only registered fds are reported, each with only the bits it asked for.
 *
 * Closed while registered -- the caller's bug, which no backend can repair,
 * as libuv's and libev's manuals say too: close an fd only after it is
 * unregistered.  What each backend does with it:
 *   select, poll  the next wait fails: -1, EBADF, the fd in the message.
 *   kqueue        close() deletes the fd's knotes: it is not reported again.
 *   epoll         the kernel watches the open FILE, not the fd number, and
 *                 drops the entry only when the file's last fd is closed.
 *                 Without a dup() the fd is not reported again.  With a
 *                 dup() (or a fork()ed child) still holding the file, the
 *                 entry stays and is reported under the old number, at
 *                 every wait while the file is ready: the fd's reader runs
 *                 again and again.  Nothing can remove that entry by number
 *                 any more (EPOLL_CTL_DEL on the closed number fails with
 *                 EBADF), so unregistering such an fd, or a wait that
 *                 reports an fd that is not registered, makes this backend
 *                 replace its epoll instance by a new one holding only
 *                 what is registered: the stale entry goes with the old
 *                 instance, and the loop blocks again instead of spinning.
 * CPython's EpollSelector ignores the failed EPOLL_CTL_DEL: after
 * remove_reader() its loop spins, without a callback, as long as the dup()
 * lives.
 */
int selector_wait(selector_t *sel, double timeout, selector_event **events);

/* Free the selector (and close epoll's or kqueue's own fd).  It never closes
 * the fds it watched: they belong to the caller.  NULL is ignored. */
void selector_close(selector_t *sel);

/* The last error, as a sentence ("" if none yet). */
const char *selector_error(const selector_t *sel);
/* @end interface */

/* The longest wait, in seconds: INT_MAX milliseconds (24.8 days), the
 * most poll() and epoll_wait() can be told. */
#define SELECTOR_MAX_TIMEOUT 2147483.647

/* A timeout in seconds as poll's and epoll_wait's int milliseconds: -1 for
 * a negative one (no limit), else rounded up, at most INT_MAX.  CPython's
 * PollSelector and EpollSelector do the same (math.ceil(timeout * 1e3)). */
int selector_timeout_ms(double timeout);

/* ---------------------------------------------------------------------
 * What a backend implements.  Only selector.c and the selector_*.c files
 * use what follows.
 */

/* @region backend */
/* The part of a selector that every backend shares.  selector.c keeps the
 * fd -> events table (CPython's _fd_to_key), so that a backend is told what
 * changes, and checks the arguments before a backend sees them. */
struct selector {
    const struct selector_backend *backend;
    void *state;            /* the backend's own data (Redis's apidata) */
    unsigned char *events;  /* events[fd]: what fd is registered for, 0: none */
    int capacity;           /* length of `events` */
    int count;              /* number of registered fds */
    selector_event *ready;  /* the events of the last wait */
    int ready_capacity;     /* always >= count: one event per fd at most */
    char error[160];
};

/* One backend: a name and five functions.  Each selector_NAME.c defines one
 * `const struct selector_backend selector_NAME` and nothing else that is
 * not static. */
struct selector_backend {
    const char *name;
    int max_fd; /* the highest fd it can watch; -1: the open-files limit */
    /* Set sel->state; return 0, or -1 with errno and sel->error set. */
    int (*open)(selector_t *sel);
    /* fd is not registered yet (old is 0) / is registered for old, and
     * will be for events (never 0) / is registered for old and will not be
     * any more.  sel->events[fd] still holds old when these are called. */
    int (*add)(selector_t *sel, int fd, int events);
    int (*modify)(selector_t *sel, int fd, int old, int events);
    int (*remove)(selector_t *sel, int fd, int old);
    /* Wait (timeout as for selector_wait, already checked and clamped:
     * < 0 or in [0, SELECTOR_MAX_TIMEOUT]); fill sel->ready, whose length is
     * at least sel->count (or 1); return how many. */
    int (*wait)(selector_t *sel, double timeout);
    void (*close)(selector_t *sel);
    /* The backend's own fd, or NULL if it has none (select, poll). */
    int (*fileno)(const selector_t *sel);
};

/* For the backends: set sel->error and errno, return -1. */
int selector_fail(selector_t *sel, int err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* @end backend */

#endif
