/* line_echo.h -- exercise 2: an echo server that answers whole lines.
 *
 * demo_echo's server writes back whatever one read() returns.  But a stream
 * socket keeps no message boundaries: "hello\n" may arrive as "hel" in one
 * tick and "lo\n" in the next, and two lines may arrive in one read.  This
 * server echoes each complete line (up to and including its '\n') once it
 * has all of it, and nothing before.
 */
#ifndef LINE_ECHO_H
#define LINE_ECHO_H

#include "loop.h"

#include <stddef.h>

/* The longest line served, '\n' included.  A peer that sends more than this
 * without a '\n' is hung up on (like asyncio's StreamReader.readline, which
 * gives up past its limit rather than buffer without end). */
#define LINE_ECHO_MAX 128

struct line_echo {
    int fd;                  /* the server's end of the connection */
    char buf[LINE_ECHO_MAX]; /* the start of a line whose '\n' has not come */
    size_t len;              /* bytes in buf */
    int lines;               /* complete lines echoed so far */
    int closed;              /* 1 once the server stopped watching fd: the
                                peer hung up, or a line was too long.  The
                                fd is not closed: it belongs to the caller. */
};

/* Start serving fd: initialise *e and watch fd for reading.  Returns 0, or
 * -1 (with the loop's error) if loop_add_reader refused. */
int line_echo_start(loop_t *loop, struct line_echo *e, int fd);

#endif
