/* demo_eintr.c -- a signal during select() does not break the loop.
 *
 * An interval timer sends SIGALRM every 10 ms while the loop is blocked in
 * select() on one socket.  Each signal makes select() return -1 with errno
 * EINTR; the loop must treat that as "nothing happened" and wait again.  The
 * fifth signal's handler also writes a byte to the socket (write() is
 * async-signal-safe), so the loop finally has something to do: it reads the
 * byte and stops.  A loop that gave up on EINTR would return from
 * loop_run_forever() with an error after the first signal.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define SIGNALS 5

static volatile sig_atomic_t signals_seen;
static int wake_fd; /* the end the handler writes to */

/* @region handler */
static void on_alarm(int sig)
{
    (void)sig;
    /* Count no further than SIGNALS: should the loop be slow to read the
     * byte, a late signal must not change the count it prints. */
    if (signals_seen < SIGNALS && ++signals_seen == SIGNALS) {
        char byte = '!';
        (void)!write(wake_fd, &byte, 1);
    }
}
/* @end handler */

static void readable(loop_t *loop, void *arg)
{
    int fd = *(int *)arg;
    char byte;
    if (read(fd, &byte, 1) == 1)
        printf("readable after %d signals: got '%c'; the loop is still running\n",
               (int)signals_seen, byte);
    loop_remove_reader(loop, fd);
    loop_stop(loop);
}

int main(int argc, char **argv)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
        perror("socketpair");
        return 1;
    }
    wake_fd = sv[0];

    /* No SA_RESTART: we want select() to see EINTR (it never restarts
     * anyway on Linux, whatever the flag says). */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every_10ms = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_REAL, &every_10ms, NULL);

    loop_t *loop = loop_new();
    if (loop == NULL || loop_add_reader(loop, sv[1], readable, &sv[1]) < 0) {
        perror("loop");
        return 1;
    }
    /* --backend=NAME (chapter 07): the same program on another selector. */
    if (argc > 1 && strncmp(argv[1], "--backend=", 10) == 0 &&
        loop_set_backend(loop, argv[1] + 10) < 0) {
        fprintf(stderr, "%s: %s\n", argv[0], loop_error(loop));
        return 2;
    }
    int rc = loop_run_forever(loop);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    if (rc < 0) {
        printf("loop_run_forever failed: %s\n", loop_error(loop));
        return 1;
    }
    printf("loop_run_forever returned 0 after %d signals\n", (int)signals_seen);
    loop_close(loop);
    loop_free(loop);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
