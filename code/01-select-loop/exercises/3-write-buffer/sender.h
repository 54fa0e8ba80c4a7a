/* sender.h -- exercise 3: send a large buffer without blocking the loop.
 *
 * On a non-blocking socket, write() takes only what fits in the kernel's
 * send buffer (a few hundred KiB for a socketpair) and returns -1 with
 * EAGAIN when nothing fits.  A sender that must not block the loop does
 * what asyncio's socket transport does (selector_events.py, write() and
 * _write_ready()): write what it can now, and if bytes remain, watch the fd
 * for writing and write more each time the loop says it is writable; when
 * everything is written, stop watching.
 */
#ifndef SENDER_H
#define SENDER_H

#include "loop.h"

#include <stddef.h>

struct sender {
    int fd;           /* a non-blocking socket */
    const char *data; /* the bytes to send (not copied: keep them alive) */
    size_t len;
    size_t sent;      /* bytes written so far */
    int writer_calls; /* times the writer callback ran */
    int done;         /* 1 once all len bytes are written */
    int error;        /* errno of a failed write (not EAGAIN / EINTR), else 0;
                         the sender then stops watching fd and gives up */
};

/* Start sending data[0..len) on fd.  Writes what it can at once; if that is
 * everything, sets done and watches nothing, else watches fd for writing
 * until done or error.  Returns 0, or -1 if loop_add_writer refused. */
int sender_start(loop_t *loop, struct sender *s, int fd, const char *data,
                 size_t len);

#endif
