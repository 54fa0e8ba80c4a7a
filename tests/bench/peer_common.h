/* peer_common.h -- what the C contenders share: the three peer programs,
 * peer_uv.c (libuv), peer_ev.c (libev) and peer_event.c (libevent), and
 * loop_bench.c, our stages' (which takes the clock, the delays, the
 * pre-faulting, heap_in_use and the socket bytes, and has its own command
 * line).
 *
 * Chapter 11 measures our loop against these libraries (protocol:
 * tests/bench/loops.py's header and the chapter's appendix).  Everything here
 * is the part of a measurement that is not the library's: the command line,
 * the CPU clock, the delays every contender uses, arrays pre-faulted before the
 * timed region, the checks of counts and order, the one output line.  What a
 * library does -- its watchers, its loop, its way of waking up -- stays in the
 * peer's own file, so that each reads as its library's users write it.
 *
 * Include this header first: it asks glibc for mallinfo2() (_GNU_SOURCE).
 * Everything is static inline: each program uses the part it needs.
 */
#ifndef PEER_COMMON_H
#define PEER_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mallinfo2 */
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- The workloads and the command line ------------------------------ */

enum workload {
    BATCH,       /* queue N callbacks from outside the loop, run them     */
    CHAIN,       /* one callback re-queues itself until it ran N times    */
    TIMERS,      /* N timers at delays d_i, all fired, order checked      */
    CHURN,       /* N times: schedule a timer, cancel it at once          */
    CHURN_HALF,  /* schedule N timers, cancel the odd ones, run the rest  */
    PINGPONG,    /* N one-byte round trips on a socketpair                */
    XTHREAD,     /* another thread posts N callbacks, each run, in order  */
    TIMER_BYTES, /* bytes per pending timer (not timed)                   */
    N_WORKLOADS
};

static const struct {
    const char *name;
    size_t n; /* the default N */
} workloads[N_WORKLOADS] = {
    [BATCH] = {"batch", 1000000},       [CHAIN] = {"chain", 1000000},
    [TIMERS] = {"timers", 1000000},     [CHURN] = {"churn", 1000000},
    [CHURN_HALF] = {"churn_half", 1000000},
    [PINGPONG] = {"pingpong", 200000},  [XTHREAD] = {"xthread", 1000000},
    [TIMER_BYTES] = {"timer_bytes", 1000000},
};

struct bench {
    enum workload workload;
    size_t n;
};

static inline void usage(const char *prog)
{
    fprintf(stderr, "usage: %s WORKLOAD [N]\n  WORKLOAD:", prog);
    for (int w = 0; w < N_WORKLOADS; w++)
        fprintf(stderr, " %s", workloads[w].name);
    fprintf(stderr, "\n  N: a positive integer (default: the workload's own)\n");
    exit(2);
}

/* PROG WORKLOAD [N]; exit 2 with the usage on anything else. */
static inline struct bench parse_args(int argc, char **argv)
{
    struct bench b;
    if (argc < 2 || argc > 3)
        usage(argv[0]);
    int w = 0;
    while (w < N_WORKLOADS && strcmp(argv[1], workloads[w].name) != 0)
        w++;
    if (w == N_WORKLOADS)
        usage(argv[0]);
    b.workload = (enum workload)w;
    b.n = workloads[w].n;
    if (argc == 3) {
        const char *s = argv[2];
        char *end;
        errno = 0;
        unsigned long long n = strtoull(s, &end, 10);
        /* strtoull accepts "-1" and " 5": only digits will do. */
        if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || n == 0 ||
            n > (unsigned long long)INT_MAX)
            usage(argv[0]);
        b.n = (size_t)n;
    }
    return b;
}

/* ---- Failing ----------------------------------------------------------- */

/* A check failed: say which on stderr, print nothing on stdout, exit 1. */
static inline void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("peer: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* ---- The clock and the output line ----------------------------------- */

/* CPU time of the whole process (user + system, every thread), in ns:
 * sleeping in epoll_wait costs nothing, a second thread's work counts. */
static inline uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What a run must count: N (churn_half: the timers scheduled, none fired). */
static inline size_t expected_count(struct bench b)
{
    return b.n;
}

/* Check the count, then print the one line on stdout: `WORKLOAD COUNT VALUE`,
 * VALUE = total / N (ns per operation; bytes per timer for timer_bytes). */
static inline void report(struct bench b, size_t count, double total)
{
    const char *name = workloads[b.workload].name;
    if (count != expected_count(b))
        fail("%s: counted %zu, expected %zu", name, count, expected_count(b));
    printf("%s %zu %.2f\n", name, count, total / (double)b.n);
}

/* ---- Memory the timed region uses, faulted in before it -------------- */

/* @region prefaulted */
/* Write every page: a page the loop touches first would charge the kernel's
 * page fault to the loop.  Not memset(p, 0, ...): gcc may turn malloc +
 * memset(0) into calloc, whose fresh pages are mapped only when written. */
static inline void prefault(void *p, size_t bytes)
{
    volatile unsigned char *c = p;
    for (size_t i = 0; i < bytes; i += 4096)
        c[i] = 1;
    if (bytes > 0)
        c[bytes - 1] = 1;
}

/* An array of n elements of size bytes, pre-faulted: the peers' watchers. */
static inline void *prefaulted_array(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        fail("array of %zu elements is too large", n);
    void *p = malloc(n * size);
    if (p == NULL)
        fail("out of memory (%zu bytes)", n * size);
    prefault(p, n * size);
    return p;
}
/* @end prefaulted */

/* ---- The delays -------------------------------------------------------- */

/* d_i in seconds, uniform in [0,1): the same pseudo-random sequence in every
 * contender (Knuth's MMIX LCG, x from 1, stepped before each d_i), made
 * before the timed region.  Writing every d_i faults the array in. */
static inline double *make_delays(size_t n)
{
    double *d = prefaulted_array(n, sizeof *d);
    uint64_t x = 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        d[i] = (double)(x >> 11) * 0x1p-53;
    }
    return d;
}

/* ---- Checks ------------------------------------------------------------ */

/* timers: a timer must not fire before one with a later deadline; timers
 * that a loop treats as due in the same tick may come in any order, hence
 * the tolerance of 2 ms (libuv rounds to 1 ms). */
struct order_check {
    double last;   /* d of the previous firing */
    size_t errors;
};

static inline void order_check_fired(struct order_check *c, double d)
{
    if (d < c->last - 0.002)
        c->errors++;
    c->last = d;
}

/* xthread: every post runs once, in the order posted (its index). */
static inline void check_post_order(size_t index, size_t *ran)
{
    if (index != *ran)
        fail("xthread: post %zu ran when post %zu was due", index, *ran);
    (*ran)++;
}

/* ---- The socketpair of pingpong --------------------------------------- */

static inline void make_socketpair(int fds[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
        fail("socketpair: %s", strerror(errno));
    for (int i = 0; i < 2; i++)
        if (fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK) != 0)
            fail("fcntl O_NONBLOCK: %s", strerror(errno));
}

/* The reader was told the fd is readable: one byte must be there. */
static inline void read_byte(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        fail("pingpong: read: %s", strerror(errno));
}

/* One byte into an empty socket never blocks. */
static inline void write_byte(int fd)
{
    if (write(fd, "x", 1) != 1)
        fail("pingpong: write: %s", strerror(errno));
}

/* ---- timer_bytes ------------------------------------------------------- */

/* Bytes the allocator has handed out and not taken back (glibc): uordblks
 * counts the chunks of the heap only; a large block (128 KiB at first, glibc
 * raises the threshold as such blocks are freed) is served by mmap and
 * counted in hblkhd instead.  A loop's timer heap of a million
 * entries (libev's 16 MB array, libevent's 8 MB) is such a block: without
 * hblkhd it would cost nothing. */
static inline size_t heap_in_use(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* ---- xthread for libuv and libev: the posts' FIFO -------------------- */

/* libuv and libev coalesce wake-ups: N uv_async_send / ev_async_send calls
 * may run the async callback once.  Their users therefore keep the work in a
 * queue of their own, under a mutex, and the async callback runs everything
 * queued.  The nodes come from a pre-faulted array (one per post), so that
 * the timed region counts the library's work, not malloc's. */
struct post {
    struct post *next;
    void (*run)(struct post *);
    size_t index; /* the order in which it was posted */
};

struct post_queue {
    pthread_mutex_t lock;
    struct post *head, *tail;
};

static inline void post_queue_init(struct post_queue *q)
{
    pthread_mutex_init(&q->lock, NULL);
    q->head = q->tail = NULL;
}

/* Any thread: append p at the tail. */
static inline void post_queue_push(struct post_queue *q, struct post *p)
{
    p->next = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->tail != NULL)
        q->tail->next = p;
    else
        q->head = p;
    q->tail = p;
    pthread_mutex_unlock(&q->lock);
}

/* The loop's thread: take the whole queue under the lock (one lock pair per
 * wake-up, not per post), then run it in order outside the lock, so the
 * poster is never kept waiting by a callback. */
static inline void post_queue_run_all(struct post_queue *q)
{
    pthread_mutex_lock(&q->lock);
    struct post *p = q->head;
    q->head = q->tail = NULL;
    pthread_mutex_unlock(&q->lock);
    while (p != NULL) {
        struct post *next = p->next; /* p->run may reuse p */
        p->run(p);
        p = next;
    }
}

static inline void post_queue_destroy(struct post_queue *q)
{
    pthread_mutex_destroy(&q->lock);
}

#endif
