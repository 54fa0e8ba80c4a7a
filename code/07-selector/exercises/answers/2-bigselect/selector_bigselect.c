/* selector_bigselect.c -- chapter 07, exercise 2 (answer): select() without
 * FD_SETSIZE.
 *
 * An fd_set is a bit array of FD_SETSIZE bits because the C library says
 * so, not because the kernel does: Linux and the BSDs read `nfds` bits from
 * each pointer they are given, however many that is.  So a program may
 * pass bit arrays of its own, as long as the highest fd needs, and select()
 * watches fd 1500 like fd 15.  libevent's select backend has done this for
 * twenty years (it reallocates its sets as fds grow), and so does Windows'
 * Winsock in its own way.  The FD_SET() macros cannot be used on such
 * arrays (with _FORTIFY_SOURCE they abort past FD_SETSIZE), so the bits are
 * set by hand: word fd / BITS, bit fd % BITS, words of `unsigned long` as
 * the kernel reads them.
 *
 * What it does not change: the cost.  Each wait still copies and scans
 * maxfd + 1 bits twice, in the kernel and here.
 */
#define _POSIX_C_SOURCE 200809L
#include "selector.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#define BITS ((int)(8 * sizeof(unsigned long)))

struct big_state {
    unsigned long *readers, *writers;    /* the master sets */
    unsigned long *readable, *writable;  /* one wait's copies */
    int words;                           /* length of each array */
    int maxfd;                           /* highest registered fd, -1 if none */
};

static int is_set(const unsigned long *set, int fd)
{
    return (set[fd / BITS] >> (fd % BITS)) & 1UL;
}

static void set_bit(unsigned long *set, int fd)
{
    set[fd / BITS] |= 1UL << (fd % BITS);
}

static void clear_bit(unsigned long *set, int fd)
{
    set[fd / BITS] &= ~(1UL << (fd % BITS));
}

static int big_open(selector_t *sel)
{
    struct big_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return selector_fail(sel, ENOMEM, "out of memory for a bigselect selector");
    s->maxfd = -1;
    sel->state = s;
    return 0;
}

static void big_close(selector_t *sel)
{
    struct big_state *s = sel->state;
    free(s->readers);
    free(s->writers);
    free(s->readable);
    free(s->writable);
    free(s);
}

/* Make the four arrays long enough for fd; new words are zero. */
static int grow(selector_t *sel, int fd)
{
    struct big_state *s = sel->state;
    int words = fd / BITS + 1;
    if (words <= s->words)
        return 0;
    unsigned long **arrays[4] = {&s->readers, &s->writers, &s->readable, &s->writable};
    for (int i = 0; i < 4; i++) {
        unsigned long *a = realloc(*arrays[i], (size_t)words * sizeof *a);
        if (a == NULL)
            return selector_fail(sel, ENOMEM, "out of memory for fd %d", fd);
        memset(a + s->words, 0, (size_t)(words - s->words) * sizeof *a);
        *arrays[i] = a;
    }
    s->words = words;
    return 0;
}

static int big_modify(selector_t *sel, int fd, int old, int events)
{
    struct big_state *s = sel->state;
    (void)old;
    if (grow(sel, fd) < 0)
        return -1;
    clear_bit(s->readers, fd);
    clear_bit(s->writers, fd);
    if (events & SELECTOR_READ)
        set_bit(s->readers, fd);
    if (events & SELECTOR_WRITE)
        set_bit(s->writers, fd);
    if (fd > s->maxfd)
        s->maxfd = fd;
    return 0;
}

static int big_add(selector_t *sel, int fd, int events)
{
    return big_modify(sel, fd, 0, events);
}

static int big_remove(selector_t *sel, int fd, int old)
{
    struct big_state *s = sel->state;
    (void)old;
    clear_bit(s->readers, fd);
    clear_bit(s->writers, fd);
    while (s->maxfd >= 0 && !is_set(s->readers, s->maxfd) && !is_set(s->writers, s->maxfd))
        s->maxfd--;
    return 0;
}

static int big_wait(selector_t *sel, double timeout)
{
    struct big_state *s = sel->state;
    int nfds = s->maxfd + 1;
    int words = nfds > 0 ? (nfds + BITS - 1) / BITS : 0;
    if (words > 0) {
        memcpy(s->readable, s->readers, (size_t)words * sizeof *s->readable);
        memcpy(s->writable, s->writers, (size_t)words * sizeof *s->writable);
    }
    struct timeval tv, *tvp = NULL;
    if (timeout >= 0) {
        double usec = ceil(timeout * 1e6); /* up, as selector_select.c */
        tv.tv_sec = (time_t)(usec / 1e6);
        tv.tv_usec = (suseconds_t)(usec - (double)tv.tv_sec * 1e6);
        tvp = &tv;
    }
    /* The kernel reads nfds bits from each pointer: our arrays, not fd_sets. */
    int n = select(nfds, words ? (fd_set *)(void *)s->readable : NULL,
                   words ? (fd_set *)(void *)s->writable : NULL, NULL, tvp);
    if (n < 0) {
        int err = errno;
        if (err == EBADF) {
            for (int fd = 0; fd < nfds; fd++)
                if ((is_set(s->readers, fd) || is_set(s->writers, fd)) &&
                    fcntl(fd, F_GETFD) < 0 && errno == EBADF)
                    return selector_fail(sel, EBADF,
                                         "select: fd %d is watched but not open "
                                         "(remove its reader and writer before closing it)", fd);
        }
        return selector_fail(sel, err, "select: %s", strerror(err));
    }
    int count = 0;
    for (int fd = 0; fd < nfds && n > 0; fd++) {
        int events = (is_set(s->readable, fd) ? SELECTOR_READ : 0) |
                     (is_set(s->writable, fd) ? SELECTOR_WRITE : 0);
        if (events != 0) {
            sel->ready[count++] = (selector_event){fd, events};
            n -= (events & SELECTOR_READ ? 1 : 0) + (events & SELECTOR_WRITE ? 1 : 0);
        }
    }
    return count;
}

const struct selector_backend selector_bigselect = {
    .name = "bigselect",
    .max_fd = -1, /* no FD_SETSIZE: only the open-files limit */
    .open = big_open,
    .add = big_add,
    .modify = big_modify,
    .remove = big_remove,
    .wait = big_wait,
    .close = big_close,
};
