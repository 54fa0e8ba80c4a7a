/* demo_starve.c -- a callback that re-schedules itself no longer starves I/O.
 *
 * A byte is waiting on a socket before the loop starts.  The first callback
 * registers a reader for that socket and starts `spin`, a callback that
 * re-schedules itself with call_soon -- the shape of a coroutine that loops
 * on `await asyncio.sleep(0)`.  The reader should run as soon as the loop
 * polls again.  In chapter 02's loop it waited until spin gave up.  This
 * chapter's loop runs a snapshot of the ready deque per tick: the spin that
 * spin queues waits for the next tick, the loop polls in between, and the
 * reader runs right after the first spin.
 *
 * The demo is chapter 02's, unchanged but for this comment: SPINS, the
 * safety bound that kept chapter 02's run finite, is never reached.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define SPINS 5 /* the safety bound */

static int sv[2]; /* sv[0]: the sender's end, sv[1]: the reader's */
static int spins;

static void die(loop_t *loop, const char *what)
{
    fprintf(stderr, "demo_starve: %s: %s\n", what, loop_error(loop));
    exit(1);
}

/* @region spin */
static void spin(loop_t *loop, void *arg)
{
    spins++;
    if (spins == SPINS) {
        printf("spin %d: gives up (the demo's safety bound)\n", spins);
        return;
    }
    printf("spin %d: call_soon(spin)\n", spins);
    if (loop_call_soon(loop, spin, arg) == NULL)
        die(loop, "call_soon");
}
/* @end spin */

static void reader(loop_t *loop, void *arg)
{
    (void)arg;
    char byte;
    if (read(sv[1], &byte, 1) == 1)
        printf("reader: got '%c'; spins so far: %d\n", byte, spins);
    loop_remove_reader(loop, sv[1]);
    loop_stop(loop);
}

/* @region start */
static void start(loop_t *loop, void *arg)
{
    (void)arg;
    printf("start: add_reader(socket), call_soon(spin)\n");
    if (loop_add_reader(loop, sv[1], reader, NULL) < 0)
        die(loop, "add_reader");
    if (loop_call_soon(loop, spin, NULL) == NULL)
        die(loop, "call_soon");
}
/* @end start */

int main(void)
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
        perror("socketpair");
        return 1;
    }
    loop_t *loop = loop_new();
    if (loop == NULL) {
        perror("loop_new");
        return 1;
    }
    /* @region main */
    if (write(sv[0], "x", 1) != 1) {
        perror("write");
        return 1;
    }
    printf("before run_forever: the socket holds one byte; call_soon(start)\n");
    if (loop_call_soon(loop, start, NULL) == NULL)
        die(loop, "call_soon");
    if (loop_run_forever(loop) < 0)
        die(loop, "run_forever");
    /* @end main */
    loop_close(loop);
    loop_free(loop);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
