/* demo_backends.c -- the sharp edges of each selector backend, side by side.
 *
 * For every backend of this build (or only --backend=NAME), the same seven
 * experiments on a fresh loop, and what the loop answered:
 *   1. watch fd 1500, a dup() of a socket: beyond select()'s FD_SETSIZE;
 *   2. watch a regular file, with bytes after its offset, then with the
 *      offset at its end: always ready for select and poll, ready only
 *      before the end of the file for kqueue, refused by epoll (EPERM);
 *   3. watch an fd that is not open: only epoll asks the kernel at once;
 *   4. close a watched fd without removing its reader, then run: select
 *      and poll fail and name the fd, epoll (and kqueue) forget it;
 *   4b. the same while a dup() of the fd is open: epoll still reports the
 *      file, so the reader keeps running; then remove the reader: the
 *      loop must block again (epoll replaces its instance, selector.h);
 *   5. sleep 10 ms, then 0.1 ms, 1 us, 10 ns and 0.1 ns, each a timer that
 *      schedules the next: with timeouts rounded up, a handful of ticks;
 *      rounded down, poll and epoll would spin through hundreds (CPython's
 *      test_timeout_rounding allows 10);
 *   6. three SIGALRMs during a wait: EINTR is a spurious wake-up.
 */
#define _GNU_SOURCE
#include "loop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int calls;

static void count(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    calls++;
}

static const char *errno_name(int err)
{
    switch (err) {
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case EPERM: return "EPERM";
    default: return "other";
    }
}

/* Print what one call answered. */
static void show(loop_t *loop, const char *what, int rc)
{
    if (rc < 0)
        printf("  %-34s -> %d, errno %s: %s\n", what, rc, errno_name(errno), loop_error(loop));
    else
        printf("  %-34s -> %d\n", what, rc);
}

/* A loop born on `backend`: loop_new() reads LOOP_BACKEND.  (Not
 * loop_set_backend(): a loop born on another backend would hold other fd
 * numbers, and the output would depend on the environment.) */
static loop_t *fresh(const char *backend)
{
    setenv("LOOP_BACKEND", backend, 1);
    loop_t *loop = loop_new();
    if (loop == NULL) {
        fprintf(stderr, "cannot make a loop on %s\n", backend);
        exit(1);
    }
    return loop;
}

static void done(loop_t *loop)
{
    loop_close(loop);
    loop_free(loop);
}

/* Run n ticks that do not block. */
static int ticks(loop_t *loop, int n)
{
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        loop_stop(loop);
        rc = loop_run_forever(loop);
    }
    return rc;
}

/* @region edges */
static void high_fd(const char *backend)
{
    loop_t *loop = fresh(backend);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int high = fcntl(sv[0], F_DUPFD, 1500);
    show(loop, "watch fd 1500 (a socket)", loop_add_reader(loop, high, count, NULL));
    loop_remove_reader(loop, high);
    close(high);
    close(sv[0]);
    close(sv[1]);
    done(loop);
}

static void regular_file(const char *backend)
{
    loop_t *loop = fresh(backend);
    FILE *file = tmpfile();
    int fd = fileno(file);
    calls = 0;
    int rc = loop_add_reader(loop, fd, count, NULL);
    show(loop, "watch a regular file", rc);
    if (rc == 0) {
        /* Three bytes after the offset, then none: the offset at the end. */
        (void)!write(fd, "abc", 3);
        lseek(fd, 0, SEEK_SET);
        ticks(loop, 3);
        int before_end = calls;
        printf("  %-34s    3 bytes to read: its reader ran %d times in 3 ticks\n", "", before_end);
        lseek(fd, 0, SEEK_END);
        calls = 0;
        ticks(loop, 3);
        printf("  %-34s    at the end of the file: %d times in 3 ticks\n", "", calls);
        printf("  %-34s    %s\n", "",
               before_end == 3 && calls == 3 ? "always ready, wherever the offset is"
               : before_end == 3 && calls == 0 ? "ready only before the end of the file"
                                               : "neither always nor only before the end");
        loop_remove_reader(loop, fd);
    }
    fclose(file);
    done(loop);
}

static void not_open(const char *backend)
{
    loop_t *loop = fresh(backend);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    close(sv[1]); /* sv[1] is now a number, not an open fd */
    int rc = loop_add_reader(loop, sv[1], count, NULL);
    show(loop, "watch an fd that is not open", rc);
    if (rc == 0)
        loop_remove_reader(loop, sv[1]);
    close(sv[0]);
    done(loop);
}

static void closed_while_watched(const char *backend)
{
    loop_t *loop = fresh(backend);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    calls = 0;
    loop_add_reader(loop, sv[0], count, NULL);
    (void)!write(sv[1], "x", 1);
    close(sv[0]); /* the bug: the reader is still registered */
    show(loop, "close a watched fd, then run", ticks(loop, 2));
    printf("  %-34s    its reader ran %d times\n", "", calls);
    loop_remove_reader(loop, sv[0]);
    close(sv[1]);
    done(loop);
}

static int waits;

static double count_waits(loop_t *loop, double timeout, void *ctx)
{
    (void)loop;
    (void)ctx;
    waits++;
    return timeout; /* observe only: the selector really waits */
}

static void stop(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

static void closed_with_a_dup(const char *backend)
{
    loop_t *loop = fresh(backend);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int watched = dup(sv[0]); /* sv[0] lives on: the same open file */
    calls = 0;
    loop_add_reader(loop, watched, count, NULL);
    (void)!write(sv[1], "x", 1);
    close(watched); /* the bug: the reader is still registered */
    int rc = 0, n = 0;
    while (n < 3 && rc == 0) {
        loop_stop(loop);
        rc = loop_run_forever(loop);
        n++;
    }
    show(loop, "the same, with a dup() of it open", rc);
    printf("  %-34s    its reader ran %d times in %d tick%s\n", "", calls, n, n == 1 ? "" : "s");
    loop_remove_reader(loop, watched);
    waits = 0;
    loop_set_wait_hook(loop, count_waits, NULL);
    loop_call_later(loop, 0.01, stop, NULL);
    rc = loop_run_forever(loop);
    if (rc < 0)
        show(loop, "remove it, wait for a 10 ms timer", rc);
    else if (waits <= 3)
        printf("  %-34s -> %d, blocked until the timer\n", "remove it, wait for a 10 ms timer", rc);
    else
        printf("  %-34s -> %d, in %d ticks: the loop spun\n", "remove it, wait for a 10 ms timer",
               rc, waits);
    close(sv[0]);
    close(sv[1]);
    done(loop);
}

/* Each timer schedules the next, shorter one; the last stops the loop. */
static const double delays[] = {1e-2, 1e-4, 1e-6, 1e-8, 1e-10};
static int next_delay;

static void sleeper(loop_t *loop, void *arg)
{
    (void)arg;
    if (next_delay == (int)(sizeof delays / sizeof delays[0]))
        loop_stop(loop);
    else
        loop_call_later(loop, delays[next_delay++], sleeper, NULL);
}

static void timeout_rounding(const char *backend)
{
    loop_t *loop = fresh(backend);
    next_delay = waits = 0;
    loop_set_wait_hook(loop, count_waits, NULL);
    loop_call_soon(loop, sleeper, NULL);
    int rc = loop_run_forever(loop);
    printf("  %-34s -> %d, %s\n", "sleep 1e-2, 1e-4, ... 1e-10 s", rc,
           waits <= 10 ? "in at most 10 ticks" : "in MORE than 10 ticks: the loop spun");
    done(loop);
}

static void on_alarm(int sig)
{
    (void)sig;
}

static void interrupted(const char *backend)
{
    loop_t *loop = fresh(backend);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART */
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every_5ms = {{0, 5000}, {0, 5000}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every_5ms, NULL);
    next_delay = 0; /* the 10 ms sleeper's chain, interrupted every 5 ms */
    loop_call_soon(loop, sleeper, NULL);
    int rc = loop_run_forever(loop);
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_IGN);
    show(loop, "SIGALRM every 5 ms while waiting", rc);
    done(loop);
}
/* @end edges */

int main(int argc, char **argv)
{
    /* fd 1500 needs an open-files limit above it. */
    struct rlimit lim;
    getrlimit(RLIMIT_NOFILE, &lim);
    if (lim.rlim_cur < 2048 && lim.rlim_max >= 2048) {
        lim.rlim_cur = 2048;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    char list[64];
    snprintf(list, sizeof list, "%s", loop_backends());
    if (argc > 1 && strncmp(argv[1], "--backend=", 10) == 0)
        snprintf(list, sizeof list, "%s", argv[1] + 10);
    for (char *b = strtok(list, " "); b != NULL; b = strtok(NULL, " ")) {
        printf("== %s\n", b);
        high_fd(b);
        regular_file(b);
        not_open(b);
        closed_while_watched(b);
        closed_with_a_dup(b);
        timeout_rounding(b);
        interrupted(b);
    }
    return 0;
}
