/* signals.h -- chapter 08: Unix signals, delivered as callbacks.
 *
 * asyncio's add_signal_handler (unix_events.py), step for step: the C
 * signal handler does one thing, the only kind of thing a signal handler
 * may do -- it writes the signal's number, one byte, into the loop's
 * self-pipe (what Python's signal.set_wakeup_fd arranges).  The loop's
 * reader of that pipe (read_from_self) passes the bytes it reads to
 * signals_process(), which queues the handler's handle, as
 * _process_self_data -> _handle_signal -> _add_callback_signalsafe do.
 * So the callback runs on the loop's thread, between two other callbacks,
 * never inside the signal handler.
 *
 * One loop at a time owns signals in a process (a signal has one
 * disposition per process, and Python has one wake-up fd); a second loop
 * is refused while the first has handlers.  Included by loop.h.
 */
#ifndef SIGNALS_H
#define SIGNALS_H

/* @region api */
/* Call callback(loop, arg) each time signal sig arrives; a handler for the
 * same signal is replaced.  Refused with -1: EINVAL "invalid signal number
 * 65" (not a signal), EINVAL "sig 9 cannot be caught" (SIGKILL, SIGSTOP),
 * EINVAL "Event loop is closed", EINVAL for a NULL callback, EBUSY when
 * another loop handles signals, ENOTSUP on the eventfd wake-up (a counter
 * cannot carry signal numbers: use LOOP_WAKEUP_PIPE), ENOMEM. */
int loop_add_signal_handler(loop_t *loop, int sig, loop_callback callback, void *arg);

/* Remove the handler of sig and restore the signal's default disposition
 * (SIG_DFL, as asyncio does; for SIGINT asyncio restores Python's
 * KeyboardInterrupt, which in C is the default: the process ends).
 * 1 if one was removed, 0 if there was none, -1 with EINVAL for an
 * invalid signal number.  loop_close() removes them all. */
int loop_remove_signal_handler(loop_t *loop, int sig);

/* The handle of sig's handler (borrowed, as loop_call_soon's), or NULL:
 * what asyncio keeps in loop._signal_handlers[sig].  handle_cancel() on it
 * makes the next arrival of sig remove the handler instead of calling it. */
handle_t *loop_get_signal_handler(loop_t *loop, int sig);
/* @end api */

#endif
