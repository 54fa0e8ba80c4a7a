/* demo_limits.c -- what the loop refuses, and the sentence it says.
 *
 * select() watches fds through an fd_set: a bit array of FD_SETSIZE bits.
 * FD_SET(fd, &set) with fd >= FD_SETSIZE writes outside that array, silently
 * corrupting whatever lies next to it on the stack.  A process may well own
 * such an fd (ulimit -n is often far above 1024), so the loop must refuse it
 * rather than trust the caller.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>

static void never(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
}

/* Try one call and print what the loop answered. */
static void show(loop_t *loop, const char *call, int rc)
{
    if (rc < 0)
        printf("%-38s -> %d, errno %s: %s\n", call, rc,
               errno == EINVAL ? "EINVAL" : errno == EBADF ? "EBADF"
               : errno == EBUSY ? "EBUSY" : "other",
               loop_error(loop));
    else
        printf("%-38s -> %d\n", call, rc);
}

int main(int argc, char **argv)
{
    loop_t *loop = loop_new();
    if (loop == NULL) {
        perror("loop_new");
        return 1;
    }
    /* --backend=NAME (chapter 07): the same program on another selector. */
    if (argc > 1 && strncmp(argv[1], "--backend=", 10) == 0 &&
        loop_set_backend(loop, argv[1] + 10) < 0) {
        fprintf(stderr, "%s: %s\n", argv[0], loop_error(loop));
        return 2;
    }
    char call[64];
    /* @region limits */
    show(loop, "add_reader(fd -1)", loop_add_reader(loop, -1, never, NULL));
    snprintf(call, sizeof call, "add_reader(fd FD_SETSIZE - 1 = %d)", FD_SETSIZE - 1);
    show(loop, call, loop_add_reader(loop, FD_SETSIZE - 1, never, NULL));
    snprintf(call, sizeof call, "add_reader(fd FD_SETSIZE = %d)", FD_SETSIZE);
    show(loop, call, loop_add_reader(loop, FD_SETSIZE, never, NULL));
    show(loop, "add_writer(fd 1500)", loop_add_writer(loop, 1500, never, NULL));
    show(loop, "add_reader(fd 0, callback NULL)", loop_add_reader(loop, 0, NULL, NULL));
    snprintf(call, sizeof call, "remove_reader(fd %d)", FD_SETSIZE - 1);
    show(loop, call, loop_remove_reader(loop, FD_SETSIZE - 1));
    show(loop, "remove_reader(fd 0)", loop_remove_reader(loop, 0));
    /* @end limits */
    /* @region closed */
    loop_stop(loop);
    show(loop, "stop(), then run_forever()", loop_run_forever(loop));
    show(loop, "close()", loop_close(loop));
    show(loop, "add_reader(fd 0) after close", loop_add_reader(loop, 0, never, NULL));
    show(loop, "run_forever() after close", loop_run_forever(loop));
    show(loop, "close() again", loop_close(loop));
    /* @end closed */
    loop_free(loop);
    return 0;
}
