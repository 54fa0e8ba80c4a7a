/* selector_kqueue.c -- chapter 07: the kqueue(2) backend (macOS, the BSDs).
 *
 * NOT BUILT ON LINUX: the stage's Makefile leaves this file out there (Linux
 * has no kqueue), so this repository's CI never compiles or runs it.  It
 * follows FreeBSD's and macOS's kqueue(2) manual pages; read it as you
 * would read the others, and try it on a Mac: `make -C code/07-selector run`
 * uses it by default there.
 *
 * kqueue is epoll's cousin: the watch list lives in the kernel (a kqueue is
 * an fd), changes are sent to it, and a wait returns only what is ready, in
 * O(ready).  Two differences shape this file:
 *   - A kqueue watches (ident, filter) pairs, not fds: reading is the
 *     filter EVFILT_READ, writing EVFILT_WRITE, two separate "knotes".  An fd
 *     watched both ways may come back as two events in one wait, in any
 *     order; we merge them into one selector_event per fd, so that the loop
 *     sees what the other backends give it.
 *   - One kevent() call both applies a list of changes and collects events.
 *     An error in a change would normally come back mixed with the events;
 *     EV_RECEIPT makes kevent() return one receipt per change instead
 *     (flag EV_ERROR, `data` the errno, 0 for success), which is how the
 *     registration below learns which change failed.
 * Closing an fd removes its knotes ("Calling close() on a file descriptor
 * will remove any kevents that reference the descriptor", kqueue(2)), even
 * while a dup() keeps the file open: a knote belongs to the fd, where an
 * epoll entry belongs to the open file (see selector_epoll.c).  A later
 * EV_DELETE fails with ENOENT or EBADF, ignored here.  Unlike epoll, kqueue
 * accepts regular files, but unlike select and poll it does not call them
 * always ready: EVFILT_READ reports a file readable only while its offset
 * is before the end (`data` is the number of bytes left), so an empty file
 * never is.
 */
#include "selector.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/event.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct kqueue_state {
    int kq;              /* the kqueue */
    struct kevent *buf;  /* what kevent() fills in when waiting */
    int capacity;
};

static int kq_open(selector_t *sel)
{
    struct kqueue_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return selector_fail(sel, ENOMEM, "out of memory for a kqueue selector");
    s->kq = kqueue();
    if (s->kq < 0) {
        int err = errno;
        free(s);
        return selector_fail(sel, err, "kqueue: %s", strerror(err));
    }
    /* A kqueue is not inherited by fork(); close it across exec() too. */
    (void)fcntl(s->kq, F_SETFD, FD_CLOEXEC);
    sel->state = s;
    return 0;
}

static void kq_close(selector_t *sel)
{
    struct kqueue_state *s = sel->state;
    close(s->kq);
    free(s->buf);
    free(s);
}

static int kq_fileno(const selector_t *sel)
{
    const struct kqueue_state *s = sel->state;
    return s->kq;
}

/* @region register */
/* Make fd's knotes say `events` when they said `old`: an EV_ADD for each
 * filter in `events`, an EV_DELETE for each that goes; all in one kevent()
 * call, with a receipt for each.  EV_ADD of a knote that exists only
 * updates it, so the filters that stay are added again: if the fd was
 * closed and its number reused (close() dropped the old knotes), the new
 * file is watched for all of `events`, not only for what changed.  If a
 * change fails, the ones that succeeded are undone, so that a refused call
 * changes nothing. */
static int kq_change(selector_t *sel, int fd, int old, int events)
{
    struct kqueue_state *s = sel->state;
    static const struct { int bit; short filter; } filters[2] = {
        {SELECTOR_READ, EVFILT_READ}, {SELECTOR_WRITE, EVFILT_WRITE}};
    struct kevent changes[2], receipts[2];
    int n = 0;
    for (int i = 0; i < 2; i++) {
        int was = old & filters[i].bit, will = events & filters[i].bit;
        if (will)
            EV_SET(&changes[n++], (uintptr_t)fd, filters[i].filter, EV_ADD | EV_RECEIPT, 0, 0, 0);
        else if (was && !will)
            EV_SET(&changes[n++], (uintptr_t)fd, filters[i].filter, EV_DELETE | EV_RECEIPT, 0, 0, 0);
    }
    if (n == 0)
        return 0;
    const struct timespec zero = {0, 0};
    int got = kevent(s->kq, changes, n, receipts, n, &zero);
    if (got < 0)
        return selector_fail(sel, errno, "kevent (fd %d): %s", fd, strerror(errno));

    /* Read the receipts: which change failed, if any?  (A receipt names
     * its change by ident and filter; do not assume their order.) */
    int failed = 0, err = 0;
    bool ok[2] = {true, true};
    for (int r = 0; r < got; r++) {
        if (!(receipts[r].flags & EV_ERROR) || receipts[r].data == 0)
            continue; /* this change succeeded */
        for (int c = 0; c < n; c++) {
            if (changes[c].filter != receipts[r].filter)
                continue;
            int e = (int)receipts[r].data;
            /* Deleting the knote of a closed fd: already gone, as asked. */
            if ((changes[c].flags & EV_DELETE) && (e == ENOENT || e == EBADF))
                continue;
            ok[c] = false;
            failed++;
            err = e;
        }
    }
    if (failed == 0)
        return 0;
    /* Undo what succeeded: delete what was newly added, add back what was
     * deleted.  (A filter that was in `old` and added again stays.) */
    struct kevent undo[2];
    int m = 0;
    for (int c = 0; c < n; c++) {
        int bit = changes[c].filter == EVFILT_READ ? SELECTOR_READ : SELECTOR_WRITE;
        if (!ok[c] || ((changes[c].flags & EV_ADD) && (old & bit)))
            continue;
        EV_SET(&undo[m++], (uintptr_t)fd, changes[c].filter,
               (changes[c].flags & EV_ADD) ? EV_DELETE : EV_ADD, 0, 0, 0);
    }
    if (m > 0)
        (void)kevent(s->kq, undo, m, NULL, 0, &zero); /* best effort */
    if (err == EBADF)
        return selector_fail(sel, EBADF, "kqueue cannot watch fd %d: it is not open", fd);
    return selector_fail(sel, err, "kevent (fd %d): %s", fd, strerror(err));
}
/* @end register */

static int kq_add(selector_t *sel, int fd, int events)
{
    return kq_change(sel, fd, 0, events);
}

static int kq_modify(selector_t *sel, int fd, int old, int events)
{
    return kq_change(sel, fd, old, events);
}

static int kq_remove(selector_t *sel, int fd, int old)
{
    return kq_change(sel, fd, old, 0);
}

/* kevents by ident (the fd), for the merge in kq_wait. */
static int by_ident(const void *a, const void *b)
{
    const struct kevent *x = a, *y = b;
    return (x->ident > y->ident) - (x->ident < y->ident);
}

/* @region wait */
static int kq_wait(selector_t *sel, double timeout)
{
    struct kqueue_state *s = sel->state;
    /* Two knotes per fd at most. */
    int maxevents = sel->count > 0 ? 2 * sel->count : 1;
    if (maxevents > s->capacity) {
        struct kevent *buf = realloc(s->buf, (size_t)maxevents * sizeof *buf);
        if (buf == NULL)
            return selector_fail(sel, ENOMEM, "out of memory for kqueue's events");
        s->buf = buf;
        s->capacity = maxevents;
    }
    struct timespec ts, *tsp = NULL; /* NULL: no limit */
    if (timeout >= 0) {
        double nsec = ceil(timeout * 1e9); /* up to a whole nanosecond */
        ts.tv_sec = (time_t)(nsec / 1e9);
        ts.tv_nsec = (long)(nsec - (double)ts.tv_sec * 1e9);
        tsp = &ts;
    }
    int n = kevent(s->kq, NULL, 0, s->buf, maxevents, tsp);
    if (n < 0)
        return selector_fail(sel, errno, "kevent: %s", strerror(errno));

    /* One event per fd: sort the knotes by fd, so that an fd's READ and
     * WRITE knotes are neighbours, and merge them.  (sel->ready has room
     * for one event per registered fd, not one per knote.) */
    qsort(s->buf, (size_t)n, sizeof *s->buf, by_ident);
    int count = 0;
    for (int i = 0; i < n; i++) {
        int fd = (int)s->buf[i].ident;
        int events;
        if (s->buf[i].flags & EV_ERROR)
            events = SELECTOR_READ | SELECTOR_WRITE; /* wake both: their calls see the error */
        else if (s->buf[i].filter == EVFILT_READ)
            events = SELECTOR_READ;
        else if (s->buf[i].filter == EVFILT_WRITE)
            events = SELECTOR_WRITE;
        else
            continue;
        events &= selector_events_of(sel, fd);
        if (events == 0)
            continue;
        if (count > 0 && sel->ready[count - 1].fd == fd)
            sel->ready[count - 1].events |= events; /* the fd's other knote */
        else
            sel->ready[count++] = (selector_event){fd, events};
    }
    return count;
}
/* @end wait */

const struct selector_backend selector_kqueue = {
    .name = "kqueue",
    .max_fd = -1,
    .open = kq_open,
    .add = kq_add,
    .modify = kq_modify,
    .remove = kq_remove,
    .wait = kq_wait,
    .close = kq_close,
    .fileno = kq_fileno,
};
