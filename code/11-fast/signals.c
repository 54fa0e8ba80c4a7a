/* signals.c -- chapter 08: signal handlers through the self-pipe.  See
 * signals.h; the steps are unix_events.py's, named after its functions.
 *
 * The whole C signal handler is on_signal(): save errno, write one byte,
 * restore errno.  write() is async-signal-safe; nothing else here would
 * be (no malloc, no lock, no printf, no loop function).  The fd it writes
 * to is a process-wide variable, as Python's wake-up fd is: a signal
 * handler has no argument through which to find a loop.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop_private.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* @region wakeup_fd */
/* signal.set_wakeup_fd(): where on_signal() writes, -1 for nowhere.
 * Written by the loop's thread, read by on_signal() in whatever thread the
 * signal interrupts: a lock-free atomic, which C11 allows a signal handler
 * to read (as it allows volatile sig_atomic_t, which ThreadSanitizer
 * would call a race when the two are different threads). */
static atomic_int wakeup_fd = -1;
static loop_t *owner; /* the loop whose handlers are installed, or NULL */

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char byte = (unsigned char)sig;
    int fd = atomic_load(&wakeup_fd);
    if (fd >= 0) {
        ssize_t rc = write(fd, &byte, 1); /* EAGAIN (pipe full): the loop wakes anyway */
        (void)rc;
    }
    errno = saved;
}
/* @end wakeup_fd */

/* @region check */
/* _check_signal: sig must be in signal.valid_signals() (1..64 on Linux, but
 * 32 and 33, which the C library keeps for its threads). */
static int check_signal(loop_t *loop, int sig)
{
    sigset_t all;
    sigfillset(&all);
    if (sig < 1 || sig >= LOOP_NSIG || sigismember(&all, sig) != 1)
        return loop_fail(loop, EINVAL, "invalid signal number %d", sig);
    return 0;
}

/* signal.signal(sig, handler): install or restore, with SA_RESTART as
 * asyncio's signal.siginterrupt(sig, False).  EINVAL: SIGKILL, SIGSTOP. */
static int set_disposition(loop_t *loop, int sig, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) < 0) {
        if (errno == EINVAL)
            return loop_fail(loop, EINVAL, "sig %d cannot be caught", sig);
        return loop_fail(loop, errno, "sigaction(%d): %s", sig, strerror(errno));
    }
    return 0;
}
/* @end check */

/* @region add */
int loop_add_signal_handler(loop_t *loop, int sig, loop_callback callback, void *arg)
{
    if (check_signal(loop, sig) < 0)
        return -1;
    if (loop_is_closed(loop))
        return loop_fail(loop, EINVAL, "Event loop is closed");
    if (callback == NULL)
        return loop_fail(loop, EINVAL, "callback for signal %d is NULL", sig);
    if (owner != NULL && owner != loop)
        return loop_fail(loop, EBUSY, "another loop handles signals: remove its "
                                      "handlers (or close it) first");
    int fd = loop_signal_fd(loop);
    if (fd < 0)
        return loop_fail(loop, ENOTSUP, "signal handlers need the self-pipe "
                                        "(LOOP_WAKEUP_PIPE), not an eventfd");
    handle_t *handle = loop_new_handle(loop, callback, arg);
    if (handle == NULL)
        return loop_fail(loop, ENOMEM, "out of memory for signal %d's handle", sig);
    /* set_wakeup_fd first, then the handler: a signal that arrives in
     * between finds where to write. */
    atomic_store(&wakeup_fd, fd);
    owner = loop;
    loop_signals_t *s = loop_signals(loop);
    if (set_disposition(loop, sig, on_signal) < 0) {
        handle_release(handle);
        if (s->count == 0) {
            atomic_store(&wakeup_fd, -1);
            owner = NULL;
        }
        return -1;
    }
    if (s->handlers[sig] != NULL) { /* replaced: dropped, not cancelled (asyncio's */
        handle_set_held(s->handlers[sig], false); /* dict entry): a queued run */
        handle_release(s->handlers[sig]);         /* still runs */
    } else {
        s->count++;
    }
    s->handlers[sig] = handle;
    handle_set_held(handle, true);
    return 0;
}
/* @end add */

/* @region remove */
int loop_remove_signal_handler(loop_t *loop, int sig)
{
    if (check_signal(loop, sig) < 0)
        return -1;
    loop_signals_t *s = loop_signals(loop);
    handle_t *handle = s->handlers[sig];
    if (handle == NULL)
        return 0;
    s->handlers[sig] = NULL;
    s->count--;
    handle_set_held(handle, false);
    /* A queued run of it is not made: asyncio's handle stays queued and
     * runs; here too -- the deque holds its own reference. */
    handle_release(handle);
    set_disposition(loop, sig, SIG_DFL);
    if (s->count == 0) { /* set_wakeup_fd(-1) */
        atomic_store(&wakeup_fd, -1);
        owner = NULL;
    }
    return 1;
}

/* loop_close(): unix_events' close() removes every handler. */
void signals_close(loop_t *loop)
{
    for (int sig = 1; sig < LOOP_NSIG; sig++)
        if (loop_signals(loop)->handlers[sig] != NULL)
            loop_remove_signal_handler(loop, sig);
}
/* @end remove */

handle_t *loop_get_signal_handler(loop_t *loop, int sig)
{
    if (sig < 1 || sig >= LOOP_NSIG)
        return NULL;
    return loop_signals(loop)->handlers[sig];
}

/* @region process */
/* _process_self_data and _handle_signal: each byte other than 0 is a
 * signal number; its handler's handle is queued, once per byte. */
void signals_process(loop_t *loop, const unsigned char *data, size_t n)
{
    loop_signals_t *s = loop_signals(loop);
    for (size_t i = 0; i < n; i++) {
        int sig = data[i];
        if (sig == 0 || sig >= LOOP_NSIG) /* 0: a wake-up byte of _write_to_self */
            continue;
        handle_t *handle = s->handlers[sig];
        if (handle == NULL)
            continue; /* "Assume it's some race condition." */
        if (handle_cancelled(handle) == 1)
            loop_remove_signal_handler(loop, sig); /* "Remove it properly." */
        else
            loop_add_callback_signalsafe(loop, handle);
    }
}
/* @end process */
