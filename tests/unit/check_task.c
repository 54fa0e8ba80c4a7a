/* check_task.c -- coroutines in C, asyncio.Task, and what is built on them
 * (chapter 09).
 *
 * Written against chapter 09's coro.h and task.h and run against every
 * later stage.  Each ordering was checked against CPython 3.11 running the
 * same program: the Python twin of each test is quoted above it, with the
 * order it printed ("label@tick", the tick counted by wrapping
 * loop._run_once, as vloop.h counts the C loop's ticks).  The pinned
 * rules:
 *   - the coroutine mechanics: awaiting a done future does not suspend
 *     (Future.__await__ yields only a pending future), CORO_CALL runs the
 *     other coroutine inside the same step (no tick), an error raised in a
 *     called coroutine propagates, CORO_TRY_AWAIT / CORO_TRY_CALL let the
 *     coroutine see the error and clear it;
 *   - Task.__step: the first step is call_soon'd, a bare yield re-queues,
 *     a pending future wakes the task one tick after it completes, a task
 *     awaiting itself gets "Task cannot await on itself", a future of
 *     another loop is refused;
 *   - cancellation at every point of a task's life (before its first step,
 *     awaiting a future, a task, a gather; after the future was set but
 *     before the wakeup; after the end; by itself), cancel twice, a
 *     coroutine that catches the cancellation and returns, the cancel
 *     message all the way down and back;
 *   - "Task exception was never retrieved", "Task was destroyed but it is
 *     pending!" (valgrind-clean), all_tasks, current_task, names, reprs,
 *     the task factory, refusals;
 *   - sleep, wait_for (timeout, inner first, timeout 0, a done future, an
 *     inner task that will not be cancelled, the waiter cancelled),
 *     run_until_complete, loop_run_main(_on) with its shutdown (leftover
 *     tasks, a loop stopped early, an error raised while closing), Ctrl-C
 *     once and twice, KeyboardInterrupt from a callback and from a task.
 * Every coroutine frame here is malloc'd and freed by its release hook, so
 * that AddressSanitizer and valgrind see a frame nobody released.
 */
#define _POSIX_C_SOURCE 200809L
#include "task.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "vloop.h"

/* ---- the log: the default handler's output, in memory ---------------------- */

static char *log_buf;
static size_t log_len;
static FILE *log_file;

static loop_t *logged_loop(void)
{
    loop_t *loop = virtual_loop();
    log_file = open_memstream(&log_buf, &log_len);
    ck_assert_ptr_nonnull(log_file);
    loop_set_log(loop, log_file);
    return loop;
}

static const char *log_text(void)
{
    fflush(log_file);
    return log_buf != NULL ? log_buf : "";
}

static void log_close(void)
{
    fclose(log_file);
    free(log_buf);
    log_buf = NULL;
}

/* "label@tick", with printf's formats. */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(buf, sizeof buf - 16, fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= sizeof buf - 16)
        len = (int)strlen(buf);
    snprintf(buf + len, sizeof buf - (size_t)len, "@%d", ticks);
    label_add(buf);
}

/* The outcome of a future as one string: "result=7", "ValueError: bad". */
static const char *outcome(future_t *f)
{
    static char buf[300];
    void *value = NULL;
    loop_exception_t e;
    if (future_result(f, &value, &e) == 0)
        snprintf(buf, sizeof buf, "result=%d", (int)(intptr_t)value);
    else
        snprintf(buf, sizeof buf, "%s: %s", e.type, e.message);
    return buf;
}

/* ---- one frame for every coroutine of this file ------------------------- */

/* A coroutine's frame: the locals the coroutines below keep across their
 * awaits.  Malloc'd by frame_new, freed by frame_release (the task calls
 * it), which also drops the references the frame holds. */
typedef struct frame {
    coro_t coro;        /* first: a frame_t * is a coro_t * */
    const char *label;  /* what it logs as */
    future_t *fut;      /* a future it awaits (a reference of its own) */
    task_t *other;      /* a task it awaits (a reference of its own) */
    coro_t *callee;     /* a coroutine it awaits directly (CORO_CALL) */
    double delay;       /* for sleep and wait_for */
    int i;
    sleep_t sleep;      /* the frame of the asyncio.sleep() it awaits */
    wait_for_t wait_for;/* the frame of the wait_for() it awaits */
    int *released;      /* if set: ++ when the frame is released */
    coro_step_fn inner_step; /* the coroutine of the task it makes, if it makes one */
} frame_t;

static void frame_release(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    if (f->released != NULL)
        (*f->released)++;
    future_release(f->fut);
    task_release(f->other);
    free(f);
}

static frame_t *frame_new(coro_step_fn step, const char *name)
{
    frame_t *f = calloc(1, sizeof *f);
    ck_assert_ptr_nonnull(f);
    coro_init(&f->coro, step, name, frame_release);
    f->label = name;
    return f;
}

/* A frame that awaits fut (it keeps a reference to it). */
static frame_t *frame_on(coro_step_fn step, const char *name, future_t *fut)
{
    frame_t *f = frame_new(step, name);
    future_retain(fut);
    f->fut = fut;
    return f;
}

/* `raise` inside an except block: finish with the error being handled
 * (coro.h has no macro for it: CORO_RAISE makes a new error). */
static coro_status reraise(coro_t *c)
{
    c->state = -1;
    return CORO_RAISED;
}

static loop_t *loop_of(coro_t *c)
{
    return future_get_loop(task_future(c->task));
}

static void run(loop_t *loop)
{
    ck_assert_int_eq(loop_run_forever(loop), 0);
}

/* ---- coroutine mechanics --------------------------------------------------- */

/* async def c(): note("start"); v = await fut; note(f"got{v}"); return v */
static coro_status awaits_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    note("start");
    CORO_AWAIT(c, f->fut);
    note("got%d", (int)(intptr_t)c->value);
    CORO_RETURN(c, c->value);
    CORO_END(c);
}

/* Future.__await__: `if not self.done(): yield self` -- a done future does
 * not suspend: the whole task runs in its first step, tick 1.
 *     fut.set_result(7); async def c(): note("start"); v = await fut; note(f"got{v}")
 *     -> start@1 got7@1 */
START_TEST(await_done_future_costs_no_tick)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    future_set_result(fut, (void *)(intptr_t)7);
    task_t *t = loop_create_task(loop, &frame_on(awaits_step, "c", fut)->coro);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "start@1 got7@1");
    ck_assert_str_eq(outcome(task_future(t)), "result=7");
    task_release(t);
    future_release(fut);
    finish(loop);
}
END_TEST

/* The task's first step is call_soon'd by Task.__init__: nothing runs at
 * creation; and a pending future wakes the task one tick after it is set
 * (its done callback, Task.__wakeup, is call_soon'd).
 *     t = create_task(c()); call_soon(a) where a() does call_soon(fut.set_result, 1)
 *     -> start@1 a@1 set@2 got1@3 */
static void set_one(loop_t *loop, void *arg)
{
    (void)loop;
    note("set");
    ck_assert_int_eq(future_set_result(arg, (void *)(intptr_t)1), 0);
}

static void a_then_set(loop_t *loop, void *arg)
{
    note("a");
    loop_call_soon(loop, set_one, arg);
}

START_TEST(await_pending_future_wakes_a_tick_later)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    task_t *t = loop_create_task(loop, &frame_on(awaits_step, "c", fut)->coro);
    ck_assert_int_eq(nran, 0); /* created, not started */
    loop_call_soon(loop, a_then_set, fut);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "start@1 a@1 set@2 got1@3");
    task_release(t);
    future_release(fut);
    finish(loop);
}
END_TEST

/* async def callee(): note("callee"); return 7 */
static coro_status callee_step(coro_t *c)
{
    CORO_BEGIN(c);
    note("callee");
    CORO_RETURN(c, (void *)(intptr_t)7);
    CORO_END(c);
}

/* async def callee(): raise ValueError("bad") */
static coro_status bad_callee_step(coro_t *c)
{
    CORO_BEGIN(c);
    note("bad_callee");
    CORO_RAISE(c, "ValueError", "bad");
    CORO_END(c);
}

/* async def caller(): note("caller"); v = await callee(); note(f"got{v}"); return v */
static coro_status caller_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    note("caller");
    CORO_CALL(c, f->callee);
    note("got%d", (int)(intptr_t)c->value);
    CORO_RETURN(c, c->value);
    CORO_END(c);
}

static frame_t *caller_of(coro_step_fn callee, int *released)
{
    frame_t *f = frame_new(caller_step, "caller");
    frame_t *inner = frame_new(callee, "callee");
    inner->released = released;
    f->callee = &inner->coro;
    return f;
}

/* await other_coroutine() runs it inside the same step: no task, no tick.
 *     async def inner(): note("inner"); return 7
 *     async def outer(): note("outer"); v = await inner(); note(f"got{v}")
 *     -> outer@1 inner@1 got7@1 */
START_TEST(coro_call_costs_no_tick)
{
    loop_t *loop = virtual_loop();
    int released = 0;
    task_t *t = loop_create_task(loop, &caller_of(callee_step, &released)->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "caller@1 callee@1 got7@1");
    ck_assert_str_eq(outcome(task_future(t)), "result=7");
    ck_assert_int_eq(released, 1); /* the callee's frame, released when it returned */
    task_release(t);
    finish(loop);
}
END_TEST

/* An error raised in a called coroutine leaves the caller at the await
 * (the lines after it never run) and the task finishes with it. */
START_TEST(coro_call_error_propagates)
{
    loop_t *loop = virtual_loop();
    int released = 0;
    task_t *t = loop_create_task(loop, &caller_of(bad_callee_step, &released)->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "caller@1 bad_callee@1");
    ck_assert_str_eq(outcome(task_future(t)), "ValueError: bad");
    ck_assert_int_eq(released, 1);
    task_release(t);
    finish(loop);
}
END_TEST

/* try: await fut / except Exception as e: note(...); return 5 -- and the
 * same around a called coroutine. */
static coro_status try_await_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_AWAIT(c, f->fut);
    if (c->failed) {
        note("caught %s: %s", c->error.type, c->error.message);
        coro_clear_error(c);
        CORO_RETURN(c, (void *)(intptr_t)5);
    }
    note("no error");
    CORO_END(c);
}

static coro_status try_call_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, f->callee);
    if (c->failed) {
        note("caught %s: %s", c->error.type, c->error.message);
        coro_clear_error(c);
        CORO_RETURN(c, (void *)(intptr_t)5);
    }
    CORO_END(c);
}

START_TEST(try_await_sees_the_error_and_clears_it)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    task_t *t = loop_create_task(loop, &frame_on(try_await_step, "c", fut)->coro);
    future_fail(fut, "OSError", "gone");
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "caught OSError: gone@1");
    ck_assert_str_eq(outcome(task_future(t)), "result=5");

    labels_reset();
    frame_t *f = frame_new(try_call_step, "c2");
    int released = 0;
    frame_t *inner = frame_new(bad_callee_step, "bad");
    inner->released = &released;
    f->callee = &inner->coro;
    task_t *t2 = loop_create_task(loop, &f->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t2)), 0);
    ck_assert_str_eq(ran, "bad_callee@3 caught ValueError: bad@3");
    ck_assert_str_eq(outcome(task_future(t2)), "result=5");
    ck_assert_int_eq(released, 1);
    task_release(t);
    task_release(t2);
    future_release(fut);
    finish(loop);
}
END_TEST

/* for i in range(3): note(f"{name}{i}"); await asyncio.sleep(0)  -- here a
 * bare CORO_YIELD: Task.__step's `elif result is None: call_soon(__step)`.
 *     gather(y("A"), y("B")) -> A0@1 B0@1 A1@2 B1@2 A2@3 B2@3 */
static coro_status yielder_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    for (f->i = 0; f->i < 3; f->i++) {
        note("%s%d", f->label, f->i);
        CORO_YIELD(c);
    }
    CORO_END(c);
}

START_TEST(bare_yield_requeues)
{
    loop_t *loop = virtual_loop();
    task_t *a = loop_create_task(loop, &frame_new(yielder_step, "A")->coro);
    task_t *b = loop_create_task(loop, &frame_new(yielder_step, "B")->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(b)), 0);
    ck_assert_str_eq(ran, "A0@1 B0@1 A1@2 B1@2 A2@3 B2@3");
    ck_assert_int_eq(future_done(task_future(a)), 1);
    task_release(a);
    task_release(b);
    finish(loop);
}
END_TEST

/* tasks.py __step: `if result is self: new_exc = RuntimeError(f'Task cannot
 * await on itself: {self!r}'); call_soon(self.__step, new_exc)` -- thrown
 * in at the next step.
 *     async def selfish(): note("start"); try: await t / except RuntimeError as e: ...
 *     t = create_task(selfish(), name="selfie"); run_until_complete(t)
 *     -> start@1 caught@2, e = "Task cannot await on itself: <Task pending
 *        name='selfie' coro=<selfish() running at ...> cb=[_run_until_complete_cb() at ...]>" */
static char self_message[256];

static coro_status selfish_step(coro_t *c)
{
    CORO_BEGIN(c);
    note("start");
    CORO_TRY_AWAIT(c, task_future(c->task));
    if (c->failed) {
        note("caught");
        snprintf(self_message, sizeof self_message, "%s: %s", c->error.type, c->error.message);
        coro_clear_error(c);
    }
    CORO_END(c);
}

START_TEST(self_await_refused)
{
    loop_t *loop = virtual_loop();
    task_t *t = task_new(loop, &frame_new(selfish_step, "selfish")->coro, "selfie");
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "start@1 caught@2");
    ck_assert_str_eq(self_message, "RuntimeError: Task cannot await on itself: <Task pending "
                                   "name='selfie' coro=<selfish()> cb=[_run_until_complete_cb()]>");
    task_release(t);
    finish(loop);
}
END_TEST

/* tasks.py __step: `if futures._get_loop(result) is not self._loop:
 * new_exc = RuntimeError(f'Task {self!r} got Future {result!r} attached
 * to a different loop')`, thrown in at the next step.  Python 3.11:
 *     fut = other_loop.create_future(); async def c(): try: await fut ...
 *     -> "Task <Task pending name='x' coro=<c()>> got Future <Future pending>
 *        attached to a different loop" */
START_TEST(future_of_another_loop_refused)
{
    loop_t *loop = virtual_loop();
    loop_t *other = loop_new_virtual();
    future_t *theirs = loop_create_future(other);
    task_t *t = task_new(loop, &frame_on(try_await_step, "c", theirs)->coro, "x");
    run(loop);
    ck_assert_str_eq(ran, "caught RuntimeError: Task <Task pending name='x' coro=<c()>> got "
                          "Future <Future pending> attached to a different loop@2");
    task_release(t);
    future_release(theirs);
    finish(loop);
    loop_close(other);
    loop_free(other);
}
END_TEST

/* ---- cancellation ---------------------------------------------------------- */

static coro_status body_step(coro_t *c)
{
    CORO_BEGIN(c);
    note("body");
    CORO_END(c);
}

/* Cancelled before its first step: the first step throws CancelledError
 * into a coroutine that has not started, which raises it at its first
 * line: none of its body runs.
 *     t = create_task(body()); t.cancel("early") -> True; run_until_complete(t)
 *     -> CancelledError('early') at tick 2, "body" never printed,
 *        t.cancelled() True, t.cancelling() 1 */
START_TEST(cancel_before_first_step)
{
    loop_t *loop = virtual_loop();
    int released = 0;
    frame_t *f = frame_new(body_step, "body");
    f->released = &released;
    task_t *t = loop_create_task(loop, &f->coro);
    ck_assert_int_eq(task_cancel(t, "early"), 1);
    ck_assert_uint_eq(task_cancelling(t), 1);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    note("cancelled");
    ck_assert_str_eq(ran, "cancelled@2");
    ck_assert_int_eq(future_cancelled(task_future(t)), 1);
    ck_assert_str_eq(outcome(task_future(t)), "CancelledError: early");
    task_release(t);
    ck_assert_int_eq(released, 1);
    finish(loop);
}
END_TEST

static void cancel_task_msg(loop_t *loop, void *arg)
{
    (void)loop;
    note("cancel");
    ck_assert_int_eq(task_cancel(arg, "msg"), 1);
}

/* Cancelled while it awaits a future: Task.cancel cancels that future
 * (`if self._fut_waiter.cancel(msg=msg): return True`) at once; the task
 * wakes with the CancelledError one tick later and is cancelled.  result()
 * raises the CancelledError that left the coroutine (with 'msg') once,
 * then a new one: __step's `super().cancel()` passed no message
 * (_make_cancelled_error clears _cancelled_exc).
 *     -> start@1 cancel@1 fut_cancelled=True@1
 *        err1=CancelledError('msg')@3 err2=CancelledError()@3 */
START_TEST(cancel_while_awaiting_a_future)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    task_t *t = loop_create_task(loop, &frame_on(awaits_step, "c", fut)->coro);
    loop_call_soon(loop, cancel_task_msg, t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "start@1 cancel@1");
    ck_assert_int_eq(future_cancelled(fut), 1);
    ck_assert_str_eq(outcome(fut), "CancelledError: msg");
    ck_assert_int_eq(ticks, 3);
    ck_assert_int_eq(future_cancelled(task_future(t)), 1);
    ck_assert_str_eq(outcome(task_future(t)), "CancelledError: msg");
    ck_assert_str_eq(outcome(task_future(t)), "CancelledError: ");
    task_release(t);
    future_release(fut);
    finish(loop);
}
END_TEST

/* async def outer(): note("outer"); await inner_task */
static coro_status awaits_task_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    note("%s", f->label);
    CORO_AWAIT(c, task_future(f->other));
    note("never");
    CORO_END(c);
}

static void note_done(loop_t *loop, future_t *f, void *arg)
{
    (void)loop;
    note("%s:%s", (const char *)arg, future_cancelled(f) ? "cancelled" : "done");
}

static future_t *waited_fut;

static void cancel_outer(loop_t *loop, void *arg)
{
    (void)loop;
    note("cancel");
    ck_assert_int_eq(task_cancel(arg, NULL), 1);
    note("fut=%d", future_cancelled(waited_fut));
}

static void later_cancel_outer(loop_t *loop, void *arg)
{
    loop_call_soon(loop, cancel_outer, arg);
}

/* Cancelled while it awaits another task: the inner task is cancelled
 * (Task.cancel -> inner.cancel() -> the inner's future cancelled), then
 * the inner finishes cancelled, then the outer.
 *     ti = create_task(inner()); to = create_task(outer());
 *     ti.add_done_callback(note); to.add_done_callback(note)
 *     call_soon(call_soon, cancel to)
 *     -> inner@1 outer@1 cancel@2 fut=True@2 inner_done@4 outer_done@5 */
START_TEST(cancel_while_awaiting_a_task)
{
    loop_t *loop = virtual_loop();
    waited_fut = loop_create_future(loop);
    task_t *ti = loop_create_task(loop, &frame_on(awaits_step, "inner", waited_fut)->coro);
    frame_t *fo = frame_new(awaits_task_step, "outer");
    task_retain(ti);
    fo->other = ti;
    task_t *to = loop_create_task(loop, &fo->coro);
    future_add_done_callback(task_future(ti), note_done, "inner");
    future_add_done_callback(task_future(to), note_done, "outer");
    loop_call_soon(loop, later_cancel_outer, to);
    run(loop);
    ck_assert_str_eq(ran, "start@1 outer@1 cancel@2 fut=1@2 inner:cancelled@4 outer:cancelled@5");
    ck_assert_int_eq(future_cancelled(task_future(ti)), 1);
    ck_assert_int_eq(future_cancelled(task_future(to)), 1);
    task_release(ti);
    task_release(to);
    future_release(waited_fut);
    finish(loop);
}
END_TEST

static void set_then_cancel(loop_t *loop, void *arg)
{
    (void)loop;
    note("set+cancel");
    ck_assert_int_eq(future_set_result(waited_fut, (void *)(intptr_t)1), 0);
    note("cancel=%d", task_cancel(arg, NULL));
}

/* The awaited future is done but the wakeup has not run yet: its cancel()
 * refuses, so Task.cancel sets _must_cancel, and the wakeup's step throws
 * CancelledError in anyway -- the result is lost.  Python 3.11:
 *     call_soon(c) where c() does fut.set_result(1); t.cancel()
 *     -> start@1 set+cancel@1 cancel=True@1 cancelled CancelledError()@3,
 *        fut.cancelled() False, t.cancelled() True */
START_TEST(cancel_after_the_future_is_set)
{
    loop_t *loop = virtual_loop();
    waited_fut = loop_create_future(loop);
    task_t *t = loop_create_task(loop, &frame_on(awaits_step, "c", waited_fut)->coro);
    loop_call_soon(loop, set_then_cancel, t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    note("cancelled %s", outcome(task_future(t)));
    ck_assert_str_eq(ran, "start@1 set+cancel@1 cancel=1@1 cancelled CancelledError: @3");
    ck_assert_int_eq(future_cancelled(waited_fut), 0);
    ck_assert_int_eq(future_cancelled(task_future(t)), 1);
    task_release(t);
    future_release(waited_fut);
    finish(loop);
}
END_TEST

static coro_status self_cancel_return_step(coro_t *c)
{
    CORO_BEGIN(c);
    note("cancel=%d", task_cancel(c->task, "self"));
    CORO_RETURN(c, (void *)(intptr_t)5);
    CORO_END(c);
}

static coro_status self_cancel_await_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    task_cancel(c->task, "self");
    note("awaits");
    CORO_TRY_AWAIT(c, f->fut);
    if (c->failed) {
        note("caught %s: %s fut.cancelled=%d", c->error.type, c->error.message,
             future_cancelled(f->fut));
        return reraise(c);
    }
    CORO_END(c);
}

static void probe_waited(loop_t *loop, void *arg)
{
    (void)loop;
    note("probe fut.cancelled=%d", future_cancelled(arg));
}

/* A task that cancels itself inside its step (no future to cancel yet:
 * _must_cancel).  If it then returns, __step's `except StopIteration: if
 * self._must_cancel: super().cancel(msg=self._cancel_message)` cancels it
 * all the same; if it then awaits a pending future, __step cancels that
 * future at once (`if self._must_cancel: if self._fut_waiter.cancel(...)`).
 * Python 3.11:
 *     body(): current_task().cancel('self'); return 5
 *     -> cancel=True@1 CancelledError('self')@2, t.cancelled() True
 *     body(): current_task().cancel('self'); note("awaits"); await fut
 *     -> awaits@1 probe fut.cancelled=True@1
 *        caught CancelledError('self') fut.cancelled=True@2 CancelledError('self')@3 */
START_TEST(task_cancels_itself)
{
    loop_t *loop = virtual_loop();
    task_t *t = loop_create_task(loop, &frame_new(self_cancel_return_step, "body")->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    note("%s", outcome(task_future(t)));
    ck_assert_str_eq(ran, "cancel=1@1 CancelledError: self@2");
    ck_assert_int_eq(future_cancelled(task_future(t)), 1);
    task_release(t);

    labels_reset();
    ticks = 0;
    future_t *fut = loop_create_future(loop);
    t = loop_create_task(loop, &frame_on(self_cancel_await_step, "body", fut)->coro);
    loop_call_soon(loop, probe_waited, fut);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    note("%s", outcome(task_future(t)));
    ck_assert_str_eq(ran, "awaits@1 probe fut.cancelled=1@1 "
                          "caught CancelledError: self fut.cancelled=1@2 CancelledError: self@3");
    task_release(t);
    future_release(fut);
    finish(loop);
}
END_TEST

static void cancel_inner(loop_t *loop, void *arg)
{
    (void)loop;
    note("cancel");
    ck_assert_int_eq(task_cancel(arg, "in"), 1);
}

static void later_cancel_inner(loop_t *loop, void *arg)
{
    loop_call_soon(loop, cancel_inner, arg);
}

/* Only the inner task is cancelled: the CancelledError it ends with
 * reaches the task that awaits it, which is cancelled too (a
 * CancelledError leaving a coroutine cancels its task), with the inner's
 * message, and without ever being asked (cancelling() 0).  Python 3.11:
 *     as cancel_while_awaiting_a_task, but ti.cancel("in")
 *     -> start@1 outer@1 cancel@2 inner_done@4 outer_done@5
 *        outer CancelledError('in')@5, to.cancelling() 0 */
START_TEST(cancel_the_awaited_task_only)
{
    loop_t *loop = virtual_loop();
    waited_fut = loop_create_future(loop);
    task_t *ti = loop_create_task(loop, &frame_on(awaits_step, "inner", waited_fut)->coro);
    frame_t *fo = frame_new(awaits_task_step, "outer");
    task_retain(ti);
    fo->other = ti;
    task_t *to = loop_create_task(loop, &fo->coro);
    future_add_done_callback(task_future(ti), note_done, "inner");
    future_add_done_callback(task_future(to), note_done, "outer");
    loop_call_soon(loop, later_cancel_inner, ti);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(to)), 0);
    note("outer %s", outcome(task_future(to)));
    ck_assert_str_eq(ran, "start@1 outer@1 cancel@2 inner:cancelled@4 outer:cancelled@5 "
                          "outer CancelledError: in@5");
    ck_assert_uint_eq(task_cancelling(to), 0);
    task_release(ti);
    task_release(to);
    future_release(waited_fut);
    finish(loop);
}
END_TEST

/* A finished task: cancel() returns False (0), and it stays finished. */
START_TEST(cancel_after_finish)
{
    loop_t *loop = virtual_loop();
    task_t *t = loop_create_task(loop, &frame_new(body_step, "body")->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_int_eq(task_cancel(t, NULL), 0);
    ck_assert_int_eq(future_cancel(task_future(t), NULL), 0);
    ck_assert_uint_eq(task_cancelling(t), 0);
    ck_assert_str_eq(outcome(task_future(t)), "result=0");
    task_release(t);
    finish(loop);
}
END_TEST

/* try: await fut / except CancelledError: note("caught"); return 99 --
 * the task finishes with 99, not cancelled.
 *     -> caught@2, t.result() 99, t.cancelled() False */
static coro_status catch_cancel_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_AWAIT(c, f->fut);
    if (c->failed && strcmp(c->error.type, "CancelledError") == 0) {
        note("caught");
        coro_clear_error(c);
        CORO_RETURN(c, (void *)(intptr_t)99);
    }
    CORO_END(c);
}

static void cancel_task(loop_t *loop, void *arg)
{
    (void)loop;
    ck_assert_int_eq(task_cancel(arg, NULL), 1);
}

START_TEST(catch_cancellation_and_return)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    task_t *t = loop_create_task(loop, &frame_on(catch_cancel_step, "c", fut)->coro);
    loop_call_soon(loop, cancel_task, t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "caught@2");
    ck_assert_int_eq(future_cancelled(task_future(t)), 0);
    ck_assert_str_eq(outcome(task_future(t)), "result=99");
    task_release(t);
    future_release(fut);
    finish(loop);
}
END_TEST

/* try: await fut / except CancelledError: note("caught")
 * await asyncio.sleep(0); note("after"); return 5 */
static coro_status catch_then_yield_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_AWAIT(c, f->fut);
    if (c->failed) {
        note("caught");
        coro_clear_error(c);
    }
    CORO_YIELD(c);
    note("after");
    CORO_RETURN(c, (void *)(intptr_t)5);
    CORO_END(c);
}

static void cancel_twice(loop_t *loop, void *arg)
{
    (void)loop;
    note("c1=%d", task_cancel(arg, NULL));
    note("c2=%d", task_cancel(arg, NULL));
    note("n=%u", task_cancelling(arg));
}

/* Cancel twice: both return True (the second finds the future already
 * cancelled and sets _must_cancel); cancelling() is 2.  __step clears
 * _must_cancel when it throws the CancelledError in, so a coroutine that
 * catches it still finishes with its value -- straight away, or after one
 * more await.
 *     -> c1=True@1 c2=True@1 n=2@1 caught@2, result 5
 *     -> caught@2 after@3, result 5 */
START_TEST(cancel_twice_then_catch)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    task_t *t = loop_create_task(loop, &frame_on(catch_cancel_step, "c", fut)->coro);
    loop_call_soon(loop, cancel_twice, t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "c1=1@1 c2=1@1 n=2@1 caught@2");
    ck_assert_str_eq(outcome(task_future(t)), "result=99");
    task_release(t);
    future_release(fut);

    labels_reset();
    ticks = 0;
    fut = loop_create_future(loop);
    t = loop_create_task(loop, &frame_on(catch_then_yield_step, "c", fut)->coro);
    loop_call_soon(loop, cancel_twice, t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "c1=1@1 c2=1@1 n=2@1 caught@2 after@3");
    ck_assert_str_eq(outcome(task_future(t)), "result=5");
    ck_assert_uint_eq(task_uncancel(t), 1);
    ck_assert_uint_eq(task_uncancel(t), 0);
    ck_assert_uint_eq(task_uncancel(t), 0);
    task_release(t);
    future_release(fut);
    finish(loop);
}
END_TEST

/* A task cancelled while a bare yield has its next step queued: no future
 * to cancel, so _must_cancel; the next step throws CancelledError in at
 * the yield. */
START_TEST(cancel_while_yielding)
{
    loop_t *loop = virtual_loop();
    task_t *t = loop_create_task(loop, &frame_new(yielder_step, "Y")->coro);
    loop_call_soon(loop, cancel_task, t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "Y0@1");
    ck_assert_int_eq(future_cancelled(task_future(t)), 1);
    task_release(t);
    finish(loop);
}
END_TEST

/* gather(return_exceptions=True).cancel() when a child task catches the
 * cancellation and returns: outer still ends with CancelledError (3.11's
 * `if outer._cancel_requested: exc = fut._make_cancelled_error()`), and
 * `fut` there is the for loop's variable, the LAST child listed: its
 * message, not the one given to cancel().  Python 3.11:
 *     t = create_task(catcher(w)); a = create_future()
 *     g = gather(a, t, return_exceptions=True); g.cancel("why") -> True
 *     -> g.exception() CancelledError(), t.result() 5, a.cancelled() True
 *     g = gather(t, a, ...)  -> CancelledError('why') */
START_TEST(gather_cancel_takes_the_last_childs_message)
{
    for (int order = 0; order < 2; order++) {
        loop_t *loop = virtual_loop();
        future_t *a = loop_create_future(loop), *w = loop_create_future(loop);
        task_t *t = loop_create_task(loop, &frame_on(catch_cancel_step, "catcher", w)->coro);
        run(loop); /* t awaits w */
        future_t *kids[2] = {a, task_future(t)};
        if (order == 1) {
            kids[0] = task_future(t);
            kids[1] = a;
        }
        future_t *g = loop_gather(loop, kids, 2, 1);
        ck_assert_int_eq(future_cancel(g, "why"), 1);
        run(loop);
        ck_assert_int_eq(future_cancelled(g), 0);
        ck_assert_str_eq(outcome(g), order == 0 ? "CancelledError: " : "CancelledError: why");
        ck_assert_str_eq(outcome(task_future(t)), "result=99");
        ck_assert_int_eq(future_cancelled(a), 1);
        future_release(g);
        future_release(a);
        future_release(w);
        task_release(t);
        finish(loop);
    }
}
END_TEST

static coro_status child_cancel_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, sleep_init(&f->sleep, 10));
    if (c->failed) {
        note("%s cancelled", f->label);
        return reraise(c);
    }
    CORO_END(c);
}

static coro_status gather_main_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    {
        frame_t *fa = frame_new(child_cancel_step, "child"), *fb = frame_new(child_cancel_step, "child");
        fa->label = "A";
        fb->label = "B";
        task_t *kids[2] = {task_new(loop_of(c), &fa->coro, "A"), task_new(loop_of(c), &fb->coro, "B")};
        future_t *futs[2] = {task_future(kids[0]), task_future(kids[1])};
        f->fut = loop_gather(loop_of(c), futs, 2, 0);
        task_release(kids[0]); /* the gather holds them */
        task_release(kids[1]);
    }
    CORO_TRY_AWAIT(c, f->fut);
    if (c->failed) {
        note("main caught %s('%s')", c->error.type, c->error.message);
        return reraise(c);
    }
    CORO_END(c);
}

static void cancel_stop(loop_t *loop, void *arg)
{
    (void)loop;
    note("cancel");
    task_cancel(arg, "stop");
}

static void note_repr(loop_t *loop, void *arg)
{
    (void)loop;
    char buf[300];
    note("%s", task_repr(arg, buf, sizeof buf));
}

/* A task awaiting gather() of two tasks is cancelled: Task.cancel cancels
 * the gathering future, which cancels the children with the same message;
 * the first child's CancelledError ('stop') finishes the gather, and the
 * task wakes with it.  Python 3.11:
 *     main(): a, b = create_task(child("A")), create_task(child("B"))
 *             try: await gather(a, b) / except CancelledError: note; raise
 *     call_later(0.5, note repr(m)); call_later(1, m.cancel, "stop")
 *     -> <Task pending name='main' coro=<main()> wait_for=<_GatheringFuture
 *        pending cb=[Task.task_wakeup()]> cb=[_run_until_complete_cb()]>@3
 *        cancel@4 A cancelled@5 B cancelled@5
 *        main caught CancelledError('stop')@7
 *        main CancelledError('stop') cancelled=True@8 */
START_TEST(cancel_a_task_awaiting_gather)
{
    loop_t *loop = virtual_loop();
    task_t *m = task_new(loop, &frame_new(gather_main_step, "main")->coro, "main");
    loop_call_later(loop, 1, cancel_stop, m);
    loop_call_later(loop, 0.5, note_repr, m);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(m)), 0);
    note("main %s cancelled=%d", outcome(task_future(m)), future_cancelled(task_future(m)));
    ck_assert_str_eq(ran, "<Task pending name='main' coro=<main()> wait_for=<_GatheringFuture "
                          "pending cb=[Task.task_wakeup()]> cb=[_run_until_complete_cb()]>@3 "
                          "cancel@4 A cancelled@5 B cancelled@5 "
                          "main caught CancelledError('stop')@7 "
                          "main CancelledError: stop cancelled=1@8");
    task_release(m);
    finish(loop);
}
END_TEST

static coro_status stop_iteration_step(coro_t *c)
{
    CORO_BEGIN(c);
    CORO_RAISE(c, "StopIteration", "x");
    CORO_END(c);
}

/* PEP 479: a StopIteration that leaves a coroutine becomes RuntimeError
 * 'coroutine raised StopIteration' (the generator machinery does it, before
 * the task sees it), so the task finishes with that -- it is never stuck
 * pending because Future.set_exception refuses StopIteration.  Python 3.11:
 *     async def bad(): raise StopIteration("x")
 *     -> t.exception() RuntimeError('coroutine raised StopIteration')
 *     async def outer(): try: await bad() / except RuntimeError as e: ...
 *     -> e is RuntimeError('coroutine raised StopIteration') */
START_TEST(stop_iteration_leaving_a_coroutine)
{
    /* Every outcome is read first and checked after loop_free: a failed
     * check leaks nothing under CK_FORK=no. */
    char got[2][200];
    int done;
    loop_t *loop = logged_loop();
    task_t *t = loop_create_task(loop, &frame_new(stop_iteration_step, "bad")->coro);
    run(loop);
    done = future_done(task_future(t));
    snprintf(got[0], sizeof got[0], "%s", outcome(task_future(t)));
    task_release(t);

    /* the same at the boundary of a called coroutine: its caller catches
     * the RuntimeError (async def outer(): try: await bad() / except
     * RuntimeError as e: ...) */
    labels_reset();
    ticks = 0;
    frame_t *f = frame_new(try_call_step, "outer");
    f->callee = &frame_new(stop_iteration_step, "bad")->coro;
    t = loop_create_task(loop, &f->coro);
    run(loop);
    snprintf(got[1], sizeof got[1], "%s", outcome(task_future(t)));
    task_release(t);
    finish(loop);
    int logged = log_text()[0] != '\0';
    log_close();
    ck_assert_int_eq(done, 1);
    ck_assert_str_eq(got[0], "RuntimeError: coroutine raised StopIteration");
    ck_assert_str_eq(ran, "caught RuntimeError: coroutine raised StopIteration@1");
    ck_assert_str_eq(got[1], "result=5");
    ck_assert_int_eq(logged, 0); /* nothing reported: no task left pending */
}
END_TEST

/* ---- reports ----------------------------------------------------------------- */

static coro_status boom_step(coro_t *c)
{
    CORO_BEGIN(c);
    CORO_RAISE(c, NULL, "boom");
    CORO_END(c);
}

/* Future.__del__ for a task: "Task exception was never retrieved", the
 * task as "future: <repr>" (the context's key is 'future').  But not for a
 * task run by run_until_complete: base_events.py's _run_until_complete_cb
 * calls `fut.exception()`, which marks it retrieved. */
START_TEST(task_exception_never_retrieved)
{
    loop_t *loop = logged_loop();
    task_t *t = task_new(loop, &frame_new(boom_step, "boom")->coro, "boom");
    run(loop);
    ck_assert_int_eq(future_done(task_future(t)), 1);
    ck_assert_str_eq(log_text(), "");
    task_release(t);
    ck_assert_str_eq(log_text(), "Task exception was never retrieved\n"
                                 "future: <Task finished name='boom' coro=<boom()> "
                                 "exception=RuntimeError('boom')>\n"
                                 "RuntimeError: boom\n");
    t = task_new(loop, &frame_new(boom_step, "boom")->coro, "boom2");
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    task_release(t);
    ck_assert_int_eq(strstr(log_text(), "boom2") == NULL, 1);
    finish(loop);
    log_close();
}
END_TEST

/* Retrieved by a task that awaits it (Future.__await__'s result()), by
 * exception(), or by cancel() after the end (Task.cancel sets
 * `self._log_traceback = False` before `if self.done(): return False`). */
START_TEST(task_exception_retrieved_not_reported)
{
    loop_t *loop = logged_loop();
    task_t *b1 = task_new(loop, &frame_new(boom_step, "boom")->coro, "b1");
    frame_t *f = frame_new(try_await_step, "catcher");
    f->fut = task_future(b1);
    future_retain(f->fut);
    task_t *catcher = loop_create_task(loop, &f->coro);
    task_t *b2 = task_new(loop, &frame_new(boom_step, "boom")->coro, "b2");
    task_t *b3 = task_new(loop, &frame_new(boom_step, "boom")->coro, "b3");
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(catcher)), 0);
    ck_assert_str_eq(outcome(task_future(catcher)), "result=5");
    ck_assert_int_eq(future_exception(task_future(b2), NULL), 1);
    ck_assert_int_eq(task_cancel(b3, NULL), 0);
    task_release(b1);
    task_release(b2);
    task_release(b3);
    task_release(catcher);
    ck_assert_str_eq(log_text(), "");
    finish(loop);
    log_close();
}
END_TEST

/* Task.__del__: `if self._state == futures._PENDING and
 * self._log_destroy_pending: context = {'task': self, 'message': 'Task
 * was destroyed but it is pending!'}` -- a task that waits for a future
 * nobody will set, when the loop goes.  Everything is freed (valgrind). */
START_TEST(task_destroyed_but_pending)
{
    loop_t *loop = logged_loop();
    future_t *fut = loop_create_future(loop);
    int released = 0;
    frame_t *f = frame_on(awaits_step, "waits", fut);
    f->released = &released;
    task_t *t = task_new(loop, &f->coro, "pend");
    future_release(fut); /* the frame holds it now */
    run(loop);
    task_release(t); /* the future's wakeup callback still holds the task */
    ck_assert_str_eq(log_text(), "");
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    ck_assert_str_eq(log_text(), "Task was destroyed but it is pending!\n"
                                 "task: <Task pending name='pend' coro=<waits()> "
                                 "wait_for=<Future pending cb=[Task.task_wakeup()]>>\n");
    ck_assert_int_eq(released, 1);
    log_close();
}
END_TEST

/* A task whose first step never ran (the loop closed before): pending,
 * reported the same way when the loop goes; and a task the program still
 * holds is reported once, then freed by the program's release. */
START_TEST(task_never_started_destroyed)
{
    loop_t *loop = logged_loop();
    int released = 0;
    frame_t *f = frame_new(body_step, "body");
    f->released = &released;
    task_t *t = task_new(loop, &f->coro, "never");
    frame_t *g = frame_new(body_step, "body");
    g->released = &released;
    task_t *held = task_new(loop, &g->coro, "held");
    task_release(t);
    ck_assert_int_eq(loop_close(loop), 0);
    loop_free(loop);
    ck_assert_str_eq(log_text(), "Task was destroyed but it is pending!\n"
                                 "task: <Task pending name='never' coro=<body()>>\n"
                                 "Task was destroyed but it is pending!\n"
                                 "task: <Task pending name='held' coro=<body()>>\n");
    ck_assert_int_eq(released, 1);
    task_release(held); /* detached: no second report, no loop touched */
    ck_assert_int_eq(released, 2);
    ck_assert_int_eq(nran, 0);
    log_close();
}
END_TEST

/* ---- all_tasks, current_task, names, repr ---------------------------------- */

static task_t *seen_current;
static int current_matches;

static coro_status current_step(coro_t *c)
{
    CORO_BEGIN(c);
    seen_current = loop_current_task(loop_of(c));
    current_matches = seen_current == c->task;
    CORO_END(c);
}

static void current_in_callback(loop_t *loop, void *arg)
{
    (void)arg;
    note("cb_current=%s", loop_current_task(loop) == NULL ? "None" : "task");
}

/* asyncio.current_task(): the task whose step runs, None outside a step
 * (in a plain callback too: _enter_task / _leave_task around __step). */
START_TEST(current_task_inside_and_outside)
{
    loop_t *loop = virtual_loop();
    ck_assert_ptr_null(loop_current_task(loop));
    ck_assert_ptr_null(loop_current_task(NULL));
    task_t *t = loop_create_task(loop, &frame_new(current_step, "cur")->coro);
    loop_call_soon(loop, current_in_callback, NULL);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_ptr_eq(seen_current, t);
    ck_assert_int_eq(current_matches, 1);
    ck_assert_str_eq(ran, "cb_current=None@1");
    ck_assert_ptr_null(loop_current_task(loop));
    task_release(t);
    finish(loop);
}
END_TEST

/* asyncio.all_tasks(loop): the tasks not done (CPython: a set; here the
 * order of creation). */
START_TEST(all_tasks_in_creation_order)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    task_t *a = loop_create_task(loop, &frame_on(awaits_step, "a", fut)->coro);
    task_t *b = loop_create_task(loop, &frame_new(body_step, "b")->coro);
    task_t *c = loop_create_task(loop, &frame_on(awaits_step, "c", fut)->coro);
    future_t *plain = loop_create_future(loop); /* not a task: never listed */
    task_t *out[4] = {NULL};
    ck_assert_uint_eq(loop_all_tasks(loop, out, 4), 3);
    ck_assert_ptr_eq(out[0], a);
    ck_assert_ptr_eq(out[1], b);
    ck_assert_ptr_eq(out[2], c);
    memset(out, 0, sizeof out);
    ck_assert_uint_eq(loop_all_tasks(loop, out, 1), 3); /* more than fit */
    ck_assert_ptr_eq(out[0], a);
    ck_assert_ptr_null(out[1]);
    ck_assert_uint_eq(loop_all_tasks(loop, NULL, 0), 3);
    run(loop);
    ck_assert_int_eq(future_done(task_future(b)), 1);
    ck_assert_uint_eq(loop_all_tasks(loop, out, 4), 2); /* b is done */
    ck_assert_ptr_eq(out[0], a);
    ck_assert_ptr_eq(out[1], c);
    future_set_result(fut, NULL);
    run(loop);
    ck_assert_uint_eq(loop_all_tasks(loop, out, 4), 0);
    task_release(a);
    task_release(b);
    task_release(c);
    future_release(fut);
    future_release(plain);
    finish(loop);
}
END_TEST

/* f'Task-{_task_name_counter()}': a process-wide counter, taken only by
 * tasks without a name. */
START_TEST(task_names)
{
    loop_t *loop = virtual_loop();
    task_t *t1 = loop_create_task(loop, &frame_new(body_step, "b")->coro);
    task_t *named = task_new(loop, &frame_new(body_step, "b")->coro, "mine");
    task_t *t2 = task_new(loop, &frame_new(body_step, "b")->coro, NULL);
    unsigned long n1 = 0, n2 = 0;
    char end;
    ck_assert_int_eq(sscanf(task_get_name(t1), "Task-%lu%c", &n1, &end), 1);
    ck_assert_int_eq(sscanf(task_get_name(t2), "Task-%lu%c", &n2, &end), 1);
    ck_assert_uint_ge(n1, 1);
    ck_assert_uint_eq(n2, n1 + 1);
    ck_assert_str_eq(task_get_name(named), "mine");
    ck_assert_int_eq(task_set_name(named, "renamed"), 0);
    ck_assert_str_eq(task_get_name(named), "renamed");
    /* t.set_name(t.get_name()): the name it is given may be its own */
    ck_assert_int_eq(task_set_name(named, task_get_name(named)), 0);
    ck_assert_str_eq(task_get_name(named), "renamed");
    errno = 0;
    ck_assert_int_eq(task_set_name(named, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_ptr_nonnull(task_get_coro(named));
    ck_assert_str_eq(task_get_coro(named)->name, "b");
    ck_assert_ptr_eq(future_task(task_future(named)), named);
    future_t *plain = loop_create_future(loop);
    ck_assert_ptr_null(future_task(plain));
    run(loop);
    task_release(t1);
    task_release(named);
    task_release(t2);
    future_release(plain);
    finish(loop);
}
END_TEST

/* base_tasks._task_repr_info, CPython 3.11 (the coroutine's "running at
 * file:line" left out):
 *     <Task pending name='w' coro=<waits()>>
 *     <Task pending name='w' coro=<waits()> wait_for=<Future pending cb=[Task.task_wakeup()]>>
 *     <Task cancelling name='w' coro=<waits()> wait_for=<Future cancelled>>
 *     <Task cancelled name='w' coro=<waits()>>
 *     <Task finished name='b' coro=<boom()> exception=RuntimeError('boom')>
 *     <Task finished name='r' coro=<ret()> result=None> */
START_TEST(task_repr_strings)
{
    loop_t *loop = virtual_loop();
    char buf[400];
    future_t *fut = loop_create_future(loop);
    task_t *w = task_new(loop, &frame_on(awaits_step, "waits", fut)->coro, "w");
    task_t *b = task_new(loop, &frame_new(boom_step, "boom")->coro, "b");
    task_t *r = task_new(loop, &frame_new(body_step, "ret")->coro, "r");
    ck_assert_str_eq(task_repr(w, buf, sizeof buf), "<Task pending name='w' coro=<waits()>>");
    run(loop);
    ck_assert_str_eq(task_repr(w, buf, sizeof buf), "<Task pending name='w' coro=<waits()> "
                                                    "wait_for=<Future pending cb=[Task.task_wakeup()]>>");
    ck_assert_str_eq(future_repr(task_future(w), buf, sizeof buf),
                     "<Task pending name='w' coro=<waits()> "
                     "wait_for=<Future pending cb=[Task.task_wakeup()]>>");
    task_cancel(w, NULL);
    ck_assert_str_eq(task_repr(w, buf, sizeof buf),
                     "<Task cancelling name='w' coro=<waits()> wait_for=<Future cancelled>>");
    run(loop);
    ck_assert_str_eq(task_repr(w, buf, sizeof buf), "<Task cancelled name='w' coro=<waits()>>");
    ck_assert_str_eq(task_repr(b, buf, sizeof buf),
                     "<Task finished name='b' coro=<boom()> exception=RuntimeError('boom')>");
    ck_assert_str_eq(task_repr(r, buf, sizeof buf),
                     "<Task finished name='r' coro=<ret()> result=None>");
    future_exception(task_future(b), NULL);
    task_release(w);
    task_release(b);
    task_release(r);
    future_release(fut);
    finish(loop);
}
END_TEST

/* ---- refusals, the factory ------------------------------------------------ */

/* Task.set_result / set_exception: RuntimeError('Task does not support
 * set_result operation') / '... set_exception operation'. */
START_TEST(task_refuses_set_result)
{
    loop_t *loop = virtual_loop();
    task_t *t = loop_create_task(loop, &frame_new(body_step, "b")->coro);
    errno = 0;
    ck_assert_int_eq(future_set_result(task_future(t), NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(loop_error(loop), "Task does not support set_result operation");
    loop_exception_t e = {.type = "ValueError", .message = "v"};
    ck_assert_int_eq(future_set_exception(task_future(t), &e), -1);
    ck_assert_str_eq(loop_error(loop), "Task does not support set_exception operation");
    ck_assert_int_eq(future_fail(task_future(t), NULL, "x"), -1);
    ck_assert_int_eq(future_done(task_future(t)), 0);
    run(loop);
    task_release(t);
    finish(loop);
}
END_TEST

/* create_task on a closed loop: RuntimeError('Event loop is closed'), and
 * the coroutine is closed (released); NULL arguments the same. */
START_TEST(create_task_refused)
{
    loop_t *loop = virtual_loop();
    int released = 0;
    frame_t *f = frame_new(body_step, "b");
    f->released = &released;
    errno = 0;
    ck_assert_ptr_null(loop_create_task(NULL, &f->coro));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(released, 1);
    errno = 0;
    ck_assert_ptr_null(loop_create_task(loop, NULL));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(loop_close(loop), 0);
    f = frame_new(body_step, "b");
    f->released = &released;
    errno = 0;
    ck_assert_ptr_null(loop_create_task(loop, &f->coro));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(loop_error(loop), "Event loop is closed");
    ck_assert_int_eq(released, 2);
    f = frame_new(body_step, "b");
    f->released = &released;
    ck_assert_ptr_null(task_new(loop, &f->coro, "x"));
    ck_assert_int_eq(released, 3);
    ck_assert_int_eq(nran, 0);
    loop_free(loop);
}
END_TEST

static int factory_calls;

static task_t *named_factory(loop_t *loop, coro_t *coro, void *ctx)
{
    factory_calls++;
    return task_new(loop, coro, ctx);
}

/* loop.set_task_factory(factory): create_task calls it; None restores the
 * default. */
START_TEST(task_factory)
{
    loop_t *loop = virtual_loop();
    factory_calls = 0;
    loop_set_task_factory(loop, named_factory, "made");
    task_t *t = loop_create_task(loop, &frame_new(body_step, "b")->coro);
    ck_assert_int_eq(factory_calls, 1);
    ck_assert_str_eq(task_get_name(t), "made");
    loop_set_task_factory(loop, NULL, NULL);
    task_t *u = loop_create_task(loop, &frame_new(body_step, "b")->coro);
    ck_assert_int_eq(factory_calls, 1);
    ck_assert_int_eq(strncmp(task_get_name(u), "Task-", 5), 0);
    run(loop);
    task_release(t);
    task_release(u);
    finish(loop);
}
END_TEST

/* ---- sleep ------------------------------------------------------------------- */

/* async def body(): note("a"); await sleep(0); note("b"); await sleep(1.5); note("c")
 *     -> a@1 b@2 c@4 at t=1.5: sleep(0) is one tick; sleep(d)'s timer sets
 *        the future at tick 3 (t=1.5), the task wakes at tick 4 */
static coro_status sleeper_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    note("a");
    CORO_CALL(c, sleep_init(&f->sleep, 0));
    note("b");
    CORO_CALL(c, sleep_init(&f->sleep, 1.5));
    note("c t=%.3f", loop_time(loop_of(c)));
    CORO_END(c);
}

START_TEST(sleep_zero_and_sleep_d)
{
    loop_t *loop = virtual_loop();
    task_t *t = loop_create_task(loop, &frame_new(sleeper_step, "s")->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "a@1 b@2 c t=1.500@4");
    ck_assert_uint_eq(loop_scheduled_len(loop), 0);
    task_release(t);
    finish(loop);
}
END_TEST

static coro_status sleep_long_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_CALL(c, sleep_init(&f->sleep, f->delay));
    note("woke");
    CORO_END(c);
}

static void probe_timers(loop_t *loop, void *arg)
{
    (void)arg;
    note("cancelled_count=%zu sched=%zu", loop_timer_cancelled_count(loop),
         loop_scheduled_len(loop));
}

static void cancel_then_probe(loop_t *loop, void *arg)
{
    ck_assert_int_eq(task_cancel(arg, NULL), 1);
    loop_call_soon(loop, probe_timers, NULL);
}

/* Cancelling a sleeper cancels its timer (sleep's `finally: h.cancel()`).
 *     t = create_task(sleep(10)); call_soon(c) where c() does t.cancel(); call_soon(probe)
 *     -> cancelled_count=1 sched=1@2 cancelled@3; then sched=0 count=0,
 *        and no time passes */
START_TEST(cancel_sleeper_cancels_its_timer)
{
    loop_t *loop = virtual_loop();
    frame_t *f = frame_new(sleep_long_step, "s");
    f->delay = 10;
    task_t *t = loop_create_task(loop, &f->coro);
    loop_call_soon(loop, cancel_then_probe, t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    note("cancelled");
    ck_assert_str_eq(ran, "cancelled_count=1 sched=1@2 cancelled@3");
    ck_assert_int_eq(future_cancelled(task_future(t)), 1);
    ck_assert_uint_eq(loop_scheduled_len(loop), 0);
    ck_assert_uint_eq(loop_timer_cancelled_count(loop), 0);
    ck_assert(loop_time(loop) == 0.0);
    task_release(t);
    finish(loop);
}
END_TEST

/* sleep(NaN): refused when it runs, ValueError (task.h's rule, after
 * DESIGN 4's "a NaN delay is refused": 3.11's sleep has no such check, a
 * later CPython raises ValueError; only the type is pinned). */
START_TEST(sleep_nan_refused)
{
    loop_t *loop = virtual_loop();
    frame_t *f = frame_new(sleep_long_step, "s");
    f->delay = NAN;
    task_t *t = loop_create_task(loop, &f->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "");
    ck_assert_int_eq(strncmp(outcome(task_future(t)), "ValueError: ", 12), 0);
    task_release(t);
    finish(loop);
}
END_TEST

/* ---- wait_for ----------------------------------------------------------- */

/* async def inner(): try: await sleep(d) / except CancelledError: note(...); raise
 *                    else note("inner"); return 3 */
static coro_status inner_sleep_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, sleep_init(&f->sleep, f->delay));
    if (c->failed) {
        note("inner_cancelled");
        return reraise(c);
    }
    note("inner");
    CORO_RETURN(c, (void *)(intptr_t)3);
    CORO_END(c);
}

/* async def outer(): ti = create_task(inner()); v = await wait_for(ti, timeout) */
static coro_status wait_for_task_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    if (f->other == NULL) {
        frame_t *in = frame_new(f->inner_step != NULL ? f->inner_step : inner_sleep_step, "inner");
        in->delay = f->delay;
        f->other = loop_create_task(loop_of(c), &in->coro);
    }
    CORO_TRY_CALL(c, wait_for_init(&f->wait_for, task_future(f->other), (double)f->i / 10));
    if (c->failed) {
        note("%s inner_done=%d inner_cancelled=%d t=%.3f", c->error.type,
             future_done(task_future(f->other)), future_cancelled(task_future(f->other)),
             loop_time(loop_of(c)));
        return reraise(c);
    }
    note("got%d sched=%zu cnt=%zu t=%.3f", (int)(intptr_t)c->value, loop_scheduled_len(loop_of(c)),
         loop_timer_cancelled_count(loop_of(c)), loop_time(loop_of(c)));
    CORO_END(c);
}

/* The timeout first: inner is cancelled, and wait_for waits until it is
 * done (it takes a tick to clean up) before TimeoutError.
 *     inner sleeps 10; await wait_for(ti, 1)
 *     -> inner_cancelled@5 TimeoutError() inner_done=True inner_cancelled=True@7 */
START_TEST(wait_for_timeout)
{
    loop_t *loop = virtual_loop();
    frame_t *f = frame_new(wait_for_task_step, "outer");
    f->delay = 10;
    f->i = 10; /* timeout 1.0 */
    task_t *t = loop_create_task(loop, &f->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "inner_cancelled@5 TimeoutError inner_done=1 inner_cancelled=1 t=1.000@7");
    ck_assert_str_eq(outcome(task_future(t)), "TimeoutError: ");
    task_release(t);
    finish(loop);
}
END_TEST

/* async def stubborn(): try: await sleep(d) / except CancelledError: return 5 */
static coro_status stubborn_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, sleep_init(&f->sleep, f->delay));
    if (c->failed) {
        note("inner caught");
        coro_clear_error(c);
        CORO_RETURN(c, (void *)(intptr_t)5);
    }
    CORO_END(c);
}

/* The timeout fires, but the inner task catches its cancellation and
 * returns: 3.11's wait_for returns `fut.result()` after _cancel_and_wait,
 * no TimeoutError.  Python 3.11:
 *     stubborn sleeps 10, returns 5 when cancelled; await wait_for(ti, 1)
 *     -> inner caught@5 got5 sched=0 cnt=0 t=1.0@7 */
START_TEST(wait_for_timeout_but_inner_returns)
{
    loop_t *loop = virtual_loop();
    frame_t *f = frame_new(wait_for_task_step, "outer");
    f->delay = 10;
    f->i = 10;
    f->inner_step = stubborn_step;
    task_t *t = loop_create_task(loop, &f->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "inner caught@5 got5 sched=0 cnt=0 t=1.000@7");
    task_release(t);
    finish(loop);
}
END_TEST

/* The inner task first: its result, and the timeout's timer cancelled.
 *     inner sleeps 0.5 and returns 3; await wait_for(ti, 1)
 *     -> inner@4 got3 sched=1 cnt=1@6 */
START_TEST(wait_for_inner_first)
{
    loop_t *loop = virtual_loop();
    frame_t *f = frame_new(wait_for_task_step, "outer");
    f->delay = 0.5;
    f->i = 10;
    task_t *t = loop_create_task(loop, &f->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "inner@4 got3 sched=1 cnt=1 t=0.500@6");
    ck_assert_str_eq(outcome(task_future(t)), "result=0");
    run(loop); /* the cancelled timer goes without any wait */
    ck_assert(loop_time(loop) == 0.5);
    task_release(t);
    finish(loop);
}
END_TEST

/* async def outer(): try: await wait_for(fut, 0) / except TimeoutError: ...
 *                    then await wait_for(done_fut, 0)
 *     -> timeout fut_cancelled=True@3 got4@3 */
static coro_status wait_for_zero_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, wait_for_init(&f->wait_for, f->fut, 0));
    note("%s fut_cancelled=%d", c->failed ? c->error.type : "no error", future_cancelled(f->fut));
    coro_clear_error(c);
    future_release(f->fut);
    f->fut = loop_create_future(loop_of(c));
    future_set_result(f->fut, (void *)(intptr_t)4);
    CORO_CALL(c, wait_for_init(&f->wait_for, f->fut, 0));
    note("got%d", (int)(intptr_t)c->value);
    CORO_END(c);
}

START_TEST(wait_for_timeout_zero)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    task_t *t = loop_create_task(loop, &frame_on(wait_for_zero_step, "outer", fut)->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "TimeoutError fut_cancelled=1@3 got4@3");
    ck_assert(loop_time(loop) == 0.0);
    task_release(t);
    future_release(fut);
    finish(loop);
}
END_TEST

/* async def body(): note("start"); v = await wait_for(fut, 1); note(...) */
static coro_status wait_for_done_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    note("start");
    CORO_CALL(c, wait_for_init(&f->wait_for, f->fut, 1));
    note("got%d sched=%zu cnt=%zu", (int)(intptr_t)c->value, loop_scheduled_len(loop_of(c)),
         loop_timer_cancelled_count(loop_of(c)));
    CORO_END(c);
}

/* 3.11's wait_for has no shortcut for a done future when timeout > 0: it
 * still makes the waiter and the timer, and fut's done callback (scheduled
 * at once) releases the waiter a tick later.  Python 3.11:
 *     fut.set_result(4); await wait_for(fut, 1)
 *     -> start@1 got4 sched=1 cnt=1@3 */
START_TEST(wait_for_done_future_with_timeout)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    future_set_result(fut, (void *)(intptr_t)4);
    task_t *t = loop_create_task(loop, &frame_on(wait_for_done_step, "body", fut)->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_str_eq(ran, "start@1 got4 sched=1 cnt=1@3");
    task_release(t);
    future_release(fut);
    finish(loop);
}
END_TEST

/* await wait_for(fut, f->delay), the outcome logged */
static coro_status wait_for_delay_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, wait_for_init(&f->wait_for, f->fut, f->delay));
    note("%s fut_cancelled=%d", c->failed ? c->error.type : "no error", future_cancelled(f->fut));
    coro_clear_error(c);
    CORO_END(c);
}

/* A negative timeout is 0 (3.11: `if timeout <= 0`): TimeoutError at once,
 * the future cancelled, as wait_for_timeout_zero.  NaN: refused when it
 * runs, ValueError (task.h's rule, after DESIGN 4's; 3.11 has no check),
 * and the future is left alone. */
START_TEST(wait_for_negative_and_nan_timeouts)
{
    double delays[] = {-1, NAN};
    const char *want[] = {"TimeoutError fut_cancelled=1@3", "ValueError fut_cancelled=0@1"};
    for (int i = 0; i < 2; i++) {
        loop_t *loop = virtual_loop();
        future_t *fut = loop_create_future(loop);
        frame_t *f = frame_on(wait_for_delay_step, "outer", fut);
        f->delay = delays[i];
        task_t *t = loop_create_task(loop, &f->coro);
        ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
        ck_assert_str_eq(ran, want[i]);
        ck_assert_uint_eq(loop_scheduled_len(loop), 0);
        task_release(t);
        future_release(fut);
        finish(loop);
    }
}
END_TEST

/* async def outer(): try: await wait_for(fut, 10)
 *                    except CancelledError: note(...); raise */
static coro_status wait_for_cancelled_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, wait_for_init(&f->wait_for, f->fut, 10));
    if (c->failed) {
        note("%s fut_cancelled=%d", c->error.type, future_cancelled(f->fut));
        return reraise(c);
    }
    CORO_END(c);
}

static void note_and_cancel(loop_t *loop, void *arg)
{
    (void)loop;
    note("cancel");
    ck_assert_int_eq(task_cancel(arg, NULL), 1);
}

/* Cancelling the task that waits cancels the inner future too, and waits
 * for it before re-raising.
 *     -> cancel@1 cancelled fut_cancelled=True@4 outer_cancelled@5 */
START_TEST(wait_for_cancelled_cancels_inner)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    task_t *t = loop_create_task(loop, &frame_on(wait_for_cancelled_step, "outer", fut)->coro);
    loop_call_soon(loop, note_and_cancel, t);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    note("outer_cancelled");
    ck_assert_str_eq(ran, "cancel@1 CancelledError fut_cancelled=1@4 outer_cancelled@5");
    ck_assert_int_eq(future_cancelled(task_future(t)), 1);
    ck_assert_int_eq(future_cancelled(fut), 1);
    ck_assert(loop_time(loop) == 0.0);
    task_release(t);
    future_release(fut);
    finish(loop);
}
END_TEST

/* ---- run_until_complete ----------------------------------------------------- */

static coro_status yield_then_return_step(coro_t *c)
{
    CORO_BEGIN(c);
    CORO_YIELD(c);
    CORO_RETURN(c, (void *)(intptr_t)7);
    CORO_END(c);
}

/* Returns once the future is done: its done callback stops the loop, one
 * tick after the future completes.  The loop is not closed. */
START_TEST(run_until_complete_returns_when_done)
{
    loop_t *loop = virtual_loop();
    task_t *t = loop_create_task(loop, &frame_new(yield_then_return_step, "y")->coro);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0);
    ck_assert_int_eq(ticks, 3);
    ck_assert_str_eq(outcome(task_future(t)), "result=7");
    ck_assert_int_eq(loop_get_state(loop), LOOP_NEW);
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), 0); /* done: one tick */
    task_release(t);

    future_t *fut = loop_create_future(loop); /* a plain future too */
    loop_call_soon(loop, set_one, fut);
    ck_assert_int_eq(loop_run_until_complete(loop, fut), 0);
    ck_assert_str_eq(outcome(fut), "result=1");
    future_release(fut);
    finish(loop);
}
END_TEST

static coro_status raise_ki_step(coro_t *c)
{
    CORO_BEGIN(c);
    note("ki");
    CORO_RAISE(c, LOOP_KEYBOARD_INTERRUPT, "k");
    CORO_END(c);
}

static void later(loop_t *loop, void *arg)
{
    (void)arg;
    note("later");
    loop_stop(loop);
}

/* A coroutine that raises KeyboardInterrupt: __step sets it as the task's
 * exception and re-raises it, so it leaves run_until_complete at once (the
 * loop stopped, not closed); the task is done with it.  Python 3.11:
 *     async def ki(): raise KeyboardInterrupt("k"); run_until_complete(t)
 *     -> ki@1, escaped KeyboardInterrupt('k') done=True running=False@1,
 *        t.result() raises it; then call_soon(later) runs at tick 2 */
START_TEST(keyboard_interrupt_from_a_task)
{
    loop_t *loop = virtual_loop();
    task_t *t = loop_create_task(loop, &frame_new(raise_ki_step, "ki")->coro);
    errno = 0;
    ck_assert_int_eq(loop_run_until_complete(loop, task_future(t)), -1);
    ck_assert_int_eq(errno, EINTR);
    note("done=%d running=%d", future_done(task_future(t)), loop_is_running(loop));
    ck_assert_str_eq(outcome(task_future(t)), "KeyboardInterrupt: k");
    loop_call_soon(loop, later, NULL);
    run(loop);
    ck_assert_str_eq(ran, "ki@1 done=1 running=0@1 later@2");
    task_release(t);
    finish(loop);
}
END_TEST

static void stop_loop(loop_t *loop, void *arg)
{
    (void)arg;
    loop_stop(loop);
}

/* base_events.py run_until_complete: `if not future.done(): raise
 * RuntimeError('Event loop stopped before Future completed.')` */
START_TEST(run_until_complete_stopped_early)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    loop_call_soon(loop, stop_loop, NULL);
    errno = 0;
    ck_assert_int_eq(loop_run_until_complete(loop, fut), -1);
    ck_assert_int_eq(errno, EAGAIN);
    ck_assert_str_eq(loop_error(loop), "Event loop stopped before Future completed.");
    char buf[128];
    ck_assert_str_eq(future_repr(fut, buf, sizeof buf), "<Future pending>"); /* callback removed */
    future_release(fut);
    finish(loop);
}
END_TEST

static int nested_rc, nested_errno;
static char nested_error[128];

static void nested_run(loop_t *loop, void *arg)
{
    errno = 0;
    nested_rc = loop_run_until_complete(loop, arg);
    nested_errno = errno;
    snprintf(nested_error, sizeof nested_error, "%s", loop_error(loop));
}

/* _check_closed: 'Event loop is closed'; _check_running: 'This event loop
 * is already running'; ensure_future: 'The future belongs to a different
 * loop than the one specified as the loop argument'. */
START_TEST(run_until_complete_refusals)
{
    loop_t *loop = virtual_loop();
    future_t *fut = loop_create_future(loop);
    loop_call_soon(loop, nested_run, fut);
    run(loop);
    ck_assert_int_eq(nested_rc, -1);
    ck_assert_int_eq(nested_errno, EBUSY);
    ck_assert_str_eq(nested_error, "This event loop is already running");

    loop_t *other = loop_new_virtual();
    future_t *theirs = loop_create_future(other);
    errno = 0;
    ck_assert_int_eq(loop_run_until_complete(loop, theirs), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(loop_error(loop), "The future belongs to a different loop than the one "
                                       "specified as the loop argument");
    future_release(theirs);
    loop_close(other);
    loop_free(other);

    errno = 0;
    ck_assert_int_eq(loop_run_until_complete(loop, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(loop_close(loop), 0);
    errno = 0;
    ck_assert_int_eq(loop_run_until_complete(loop, fut), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(loop_error(loop), "Event loop is closed");
    future_release(fut);
    loop_free(loop);
}
END_TEST

/* ---- loop_run_main --------------------------------------------------------- */

/* async def main(): create_task(leftover(), name="left");
 *                   create_task(quiet(), name="quiet"); await sleep(0); return 7 */
static coro_status leftover_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, sleep_init(&f->sleep, 10));
    if (c->failed && f->i) {
        note("%s: cancelled, raising ValueError", f->label);
        CORO_RAISE(c, "ValueError", "late");
    }
    if (c->failed) {
        note("%s: cleanup", f->label);
        return reraise(c);
    }
    CORO_END(c);
}

static coro_status main_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    if (f->i >= 1) {
        frame_t *left = frame_new(leftover_step, "leftover");
        left->label = "left";
        left->i = f->i >= 2;
        task_release(task_new(loop_of(c), &left->coro, "left"));
        frame_t *quiet = frame_new(leftover_step, "quiet");
        task_release(task_new(loop_of(c), &quiet->coro, "quiet"));
    }
    CORO_CALL(c, sleep_init(&f->sleep, 0));
    if (f->delay < 0)
        CORO_RAISE(c, "ValueError", "main failed");
    CORO_RETURN(c, (void *)(intptr_t)7);
    CORO_END(c);
}

/* asyncio.Runner(loop_factory).run(main()): the result; the loop is
 * closed after (Runner.close). */
START_TEST(run_main_on_result)
{
    loop_t *loop = virtual_loop();
    void *result = NULL;
    loop_exception_t error;
    ck_assert_int_eq(loop_run_main_on(loop, &frame_new(main_step, "main")->coro, &result, &error),
                     0);
    ck_assert_ptr_eq(result, (void *)(intptr_t)7);
    ck_assert_int_eq(loop_is_closed(loop), 1);
    loop_free(loop);
}
END_TEST

START_TEST(run_main_on_error)
{
    loop_t *loop = logged_loop();
    frame_t *f = frame_new(main_step, "main");
    f->delay = -1;
    loop_exception_t error;
    errno = 0;
    ck_assert_int_eq(loop_run_main_on(loop, &f->coro, NULL, &error), -1);
    ck_assert_str_eq(error.type, "ValueError");
    ck_assert_str_eq(error.message, "main failed");
    ck_assert_int_eq(loop_is_closed(loop), 1);
    loop_free(loop);
    ck_assert_str_eq(log_text(), ""); /* the error was retrieved: returned */
    log_close();
}
END_TEST

/* Runner.close -> _cancel_all_tasks: the tasks left are cancelled and run
 * until done (their cleanup runs), in creation order here; an error one
 * finishes with goes to the handler.
 *     asyncio.run(main()) where main leaves leftover() (raises ValueError
 *     when cancelled) and quiet() -> "leftover: cancelled, raising
 *     ValueError", "quiet: cleanup", 7, and on the log:
 *       unhandled exception during asyncio.run() shutdown
 *       task: <Task finished name='left' coro=<leftover() done, ...> exception=ValueError('late')>
 *       ... ValueError: late */
START_TEST(run_main_cancels_leftovers)
{
    loop_t *loop = logged_loop();
    frame_t *f = frame_new(main_step, "main");
    f->i = 1;
    void *result = NULL;
    ck_assert_int_eq(loop_run_main_on(loop, &f->coro, &result, NULL), 0);
    ck_assert_ptr_eq(result, (void *)(intptr_t)7);
    ck_assert_int_eq(strstr(ran, "left: cleanup") != NULL, 1);
    ck_assert_int_eq(strstr(ran, "quiet: cleanup") != NULL, 1);
    ck_assert_str_eq(log_text(), "");
    loop_free(loop);
    ck_assert_str_eq(log_text(), ""); /* nothing pending, nothing lost */
    log_close();

    loop = logged_loop();
    f = frame_new(main_step, "main");
    f->i = 2;
    ck_assert_int_eq(loop_run_main_on(loop, &f->coro, &result, NULL), 0);
    ck_assert_ptr_eq(strstr(ran, "left: cancelled, raising ValueError@"), ran);
    ck_assert_int_eq(strstr(ran, "quiet: cleanup") != NULL, 1);
    ck_assert_int_eq(strstr(ran, "left: cancelled") < strstr(ran, "quiet: cleanup"), 1);
    ck_assert_str_eq(log_text(), "unhandled exception during asyncio.run() shutdown\n"
                                 "task: <Task finished name='left' coro=<leftover()> "
                                 "exception=ValueError('late')>\n"
                                 "ValueError: late\n");
    loop_free(loop);
    ck_assert_int_eq(strstr(log_text(), "never retrieved") == NULL, 1);
    log_close();
}
END_TEST

static int refused_rc[2], refused_errno[2], refused_released;
static char refused_message[2][256];

static void run_main_inside(loop_t *loop, void *arg)
{
    (void)loop;
    loop_t *other = arg;
    loop_exception_t error;
    frame_t *f = frame_new(body_step, "main");
    f->released = &refused_released;
    errno = 0;
    refused_rc[0] = loop_run_main(&f->coro, NULL, &error);
    refused_errno[0] = errno;
    snprintf(refused_message[0], sizeof refused_message[0], "%s: %s", error.type, error.message);
    f = frame_new(body_step, "main");
    f->released = &refused_released;
    errno = 0;
    refused_rc[1] = loop_run_main_on(other, &f->coro, NULL, &error);
    refused_errno[1] = errno;
    snprintf(refused_message[1], sizeof refused_message[1], "%s: %s", error.type, error.message);
}

/* runners.py: asyncio.run: "asyncio.run() cannot be called from a running
 * event loop"; Runner.run: "Runner.run() cannot be called from a running
 * event loop".  main is released unrun. */
START_TEST(run_main_refused_inside_a_running_loop)
{
    loop_t *loop = virtual_loop();
    loop_t *other = loop_new_virtual();
    refused_released = 0;
    loop_call_soon(loop, run_main_inside, other);
    run(loop);
    ck_assert_int_eq(refused_rc[0], -1);
    ck_assert_int_eq(refused_errno[0], EBUSY);
    ck_assert_str_eq(refused_message[0],
                     "RuntimeError: asyncio.run() cannot be called from a running event loop");
    ck_assert_int_eq(refused_rc[1], -1);
    ck_assert_int_eq(refused_errno[1], EBUSY);
    ck_assert_str_eq(refused_message[1],
                     "RuntimeError: Runner.run() cannot be called from a running event loop");
    ck_assert_int_eq(refused_released, 2);
    ck_assert_int_eq(nran, 0); /* neither body ran */
    loop_close(other);
    loop_free(other);
    finish(loop);
}
END_TEST

/* main awaits a future nobody sets; a callback raises SIGINT.  Runner's
 * _on_sigint cancels the main task; run() then sees CancelledError with
 * _interrupt_count > 0 and uncancel() == 0: KeyboardInterrupt. */
static void raise_sigint(loop_t *loop, void *arg)
{
    (void)loop;
    (void)arg;
    note("SIGINT");
    raise(SIGINT);
}

static coro_status interrupted_main_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    f->fut = loop_create_future(loop_of(c));
    loop_call_soon(loop_of(c), raise_sigint, NULL);
    CORO_TRY_AWAIT(c, f->fut);
    note("main: %s", c->error.type);
    return reraise(c);
    CORO_END(c);
}

START_TEST(sigint_cancels_main)
{
    struct sigaction old, dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    ck_assert_int_eq(sigaction(SIGINT, &dfl, &old), 0); /* nobody else handles it */
    labels_reset();
    ticks = 0;
    loop_exception_t error;
    errno = 0;
    int rc = loop_run_main(&frame_new(interrupted_main_step, "main")->coro, NULL, &error);
    int err = errno;
    struct sigaction after;
    sigaction(SIGINT, &old, &after);
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(err, EINTR);
    ck_assert_str_eq(error.type, "KeyboardInterrupt");
    ck_assert_str_eq(ran, "SIGINT@0 main: CancelledError@0");
    ck_assert(after.sa_handler == SIG_DFL); /* the runner put it back */
}
END_TEST

/* main catches the first cancellation (Ctrl-C) and waits again; the
 * second SIGINT: Runner._on_sigint's `raise KeyboardInterrupt()` leaves
 * run_forever at once.  Runner.close then cancels main, still pending, and
 * runs it until it is done: nothing is left behind (valgrind).
 *     asyncio.run(main()) with two Ctrl-C -> KeyboardInterrupt */
static coro_status stubborn_main_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    f->fut = loop_create_future(loop_of(c));
    loop_call_soon(loop_of(c), raise_sigint, NULL);
    CORO_TRY_AWAIT(c, f->fut);
    note("main: %s, waits again", c->error.type);
    coro_clear_error(c);
    future_release(f->fut);
    f->fut = loop_create_future(loop_of(c));
    loop_call_soon(loop_of(c), raise_sigint, NULL);
    CORO_TRY_AWAIT(c, f->fut);
    note("main: %s at shutdown", c->error.type);
    return reraise(c);
    CORO_END(c);
}

static coro_status forgiving_main_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    f->fut = loop_create_future(loop_of(c));
    loop_call_soon(loop_of(c), raise_sigint, NULL);
    CORO_TRY_AWAIT(c, f->fut);
    note("main: %s, returns 5", c->error.type);
    coro_clear_error(c);
    CORO_RETURN(c, (void *)(intptr_t)5);
    CORO_END(c);
}

/* main catches the Ctrl-C's cancellation and returns: Runner.run's
 * `return self._loop.run_until_complete(task)` returns its value -- the
 * KeyboardInterrupt is only raised for a main that ends cancelled.
 * Python 3.11: main() calls call_soon(os.kill, pid, SIGINT), awaits a
 * future, catches CancelledError and returns 5 -> asyncio.run() is 5. */
START_TEST(sigint_caught_by_main)
{
    struct sigaction old, dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    ck_assert_int_eq(sigaction(SIGINT, &dfl, &old), 0);
    labels_reset();
    ticks = 0;
    void *result = NULL;
    loop_exception_t error;
    int rc = loop_run_main(&frame_new(forgiving_main_step, "main")->coro, &result, &error);
    sigaction(SIGINT, &old, NULL);
    ck_assert_int_eq(rc, 0);
    ck_assert_ptr_eq(result, (void *)(intptr_t)5);
    ck_assert_str_eq(ran, "SIGINT@0 main: CancelledError, returns 5@0");
}
END_TEST

START_TEST(second_sigint_is_keyboard_interrupt)
{
    struct sigaction old, dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    ck_assert_int_eq(sigaction(SIGINT, &dfl, &old), 0);
    labels_reset();
    ticks = 0;
    loop_exception_t error;
    errno = 0;
    int rc = loop_run_main(&frame_new(stubborn_main_step, "main")->coro, NULL, &error);
    int err = errno;
    sigaction(SIGINT, &old, NULL);
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(err, EINTR);
    ck_assert_str_eq(error.type, "KeyboardInterrupt");
    ck_assert_str_eq(ran, "SIGINT@0 main: CancelledError, waits again@0 SIGINT@0 "
                          "main: CancelledError at shutdown@0");
}
END_TEST

/* A callback raises KeyboardInterrupt('cb16') (or SystemExit) while main
 * runs: it leaves run_until_complete and asyncio.run as it is, message
 * and all, after Runner.close has cancelled main.  Python 3.11:
 *     async def main(): loop.call_soon(raiser); await asyncio.sleep(10)
 *     def raiser(): raise KeyboardInterrupt("cb16")
 *     asyncio.Runner(loop_factory=counted).run(main())
 *     -> raiser@2 main: CancelledError@3, then KeyboardInterrupt('cb16') */
static void raise_escaping(loop_t *loop, void *arg)
{
    loop_raise(loop, arg, "%s", "cb16");
}

static coro_status escaped_main_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    loop_call_soon(loop_of(c), raise_escaping, (void *)f->label);
    CORO_TRY_CALL(c, sleep_init(&f->sleep, 10));
    note("main: %s", c->failed ? c->error.type : "no error");
    return c->failed ? reraise(c) : CORO_RETURNED;
    CORO_END(c);
}

START_TEST(keyboard_interrupt_from_a_callback_keeps_its_message)
{
    const char *types[] = {"KeyboardInterrupt", "SystemExit"};
    for (int i = 0; i < 2; i++) {
        loop_t *loop = virtual_loop();
        frame_t *f = frame_new(escaped_main_step, "main");
        f->label = types[i];
        loop_exception_t error;
        errno = 0;
        int rc = loop_run_main_on(loop, &f->coro, NULL, &error);
        int err = errno;
        loop_free(loop); /* first: a failed check below leaks nothing (CK_FORK=no) */
        ck_assert_int_eq(rc, -1);
        ck_assert_int_eq(err, EINTR);
        ck_assert_str_eq(error.type, types[i]);
        ck_assert_str_eq(error.message, "cb16");
        ck_assert_str_eq(ran, "main: CancelledError@3"); /* Runner.close cancelled main */
    }
}
END_TEST

/* main stops the loop: run_until_complete's "Event loop stopped before
 * Future completed." leaves Runner.run; Runner.close then cancels main and
 * closes the loop.  Python 3.11 (Runner with a tick-counting loop):
 *     async def main1(): loop.stop(); await asyncio.sleep(0)
 *     -> main1: CancelledError@2, then RuntimeError('Event loop stopped
 *        before Future completed.') */
static coro_status stopping_main_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    loop_stop(loop_of(c));
    CORO_TRY_CALL(c, sleep_init(&f->sleep, 0));
    note("main: %s", c->failed ? c->error.type : "no error");
    return c->failed ? reraise(c) : CORO_RETURNED;
    CORO_END(c);
}

START_TEST(run_main_stopped_early)
{
    loop_t *loop = logged_loop();
    loop_exception_t error;
    int rc = loop_run_main_on(loop, &frame_new(stopping_main_step, "main")->coro, NULL, &error);
    int closed = loop_is_closed(loop);
    loop_free(loop);
    ck_assert_int_eq(rc, -1);
    ck_assert_str_eq(error.type, "RuntimeError");
    ck_assert_str_eq(error.message, "Event loop stopped before Future completed.");
    ck_assert_str_eq(ran, "main: CancelledError@2");
    ck_assert_int_eq(closed, 1);
    ck_assert_str_eq(log_text(), "");
    log_close();
}
END_TEST

/* An error raised while Runner.close runs replaces main's outcome
 * (runners.py run(): `with Runner(...) as runner: return runner.run(main)`
 * -- __exit__'s close() raises over the return).  Python 3.11:
 *     async def leftover(): try: await sleep(10)
 *         except CancelledError: call_soon(raiser); raise
 *     async def main2(): create_task(leftover()); await sleep(0); return 7
 *     raiser: raise KeyboardInterrupt("late")
 *     -> leftover cancelled@4 raiser@5, KeyboardInterrupt('late') instead of 7 */
static void raise_late(loop_t *loop, void *arg)
{
    (void)arg;
    note("raiser");
    loop_raise(loop, LOOP_KEYBOARD_INTERRUPT, "late");
}

static coro_status late_leftover_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    CORO_TRY_CALL(c, sleep_init(&f->sleep, 10));
    if (c->failed) {
        note("leftover cancelled");
        loop_call_soon(loop_of(c), raise_late, NULL);
        return reraise(c);
    }
    CORO_END(c);
}

static coro_status main2_step(coro_t *c)
{
    frame_t *f = (frame_t *)c;
    CORO_BEGIN(c);
    task_release(loop_create_task(loop_of(c), &frame_new(late_leftover_step, "leftover")->coro));
    CORO_CALL(c, sleep_init(&f->sleep, 0));
    CORO_RETURN(c, (void *)(intptr_t)7);
    CORO_END(c);
}

START_TEST(error_in_close_replaces_the_result)
{
    loop_exception_t error;
    labels_reset();
    ticks = 0; /* a loop of its own, on the real clock: no ticks counted */
    errno = 0;
    void *result = NULL;
    int rc = loop_run_main(&frame_new(main2_step, "main")->coro, &result, &error);
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(errno, EINTR);
    ck_assert_str_eq(error.type, "KeyboardInterrupt");
    ck_assert_str_eq(error.message, "late");
    ck_assert_str_eq(ran, "leftover cancelled@0 raiser@0");
}
END_TEST

/* The same through loop_run_main_on, "Runner(loop_factory=...).run(main)
 * followed by its close()": in Python either way -- `with Runner(...) as
 * r: return r.run(main)`, or r.run(main) then r.close() -- the
 * KeyboardInterrupt that close() raises reaches the caller; it is never
 * dropped.  (The Python twin above, with a tick-counting loop factory.) */
START_TEST(error_in_close_reaches_run_main_on)
{
    loop_t *loop = logged_loop();
    loop_exception_t error;
    errno = 0;
    int rc = loop_run_main_on(loop, &frame_new(main2_step, "main")->coro, NULL, &error);
    int err = errno;
    int closed = loop_is_closed(loop);
    loop_free(loop);
    ck_assert_str_eq(ran, "leftover cancelled@4 raiser@5");
    ck_assert_int_eq(closed, 1);
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(err, EINTR);
    ck_assert_str_eq(error.type, "KeyboardInterrupt");
    ck_assert_str_eq(error.message, "late");
    log_close();
}
END_TEST

/* asyncio.run(main()) on a loop of its own (the real clock: main only
 * yields once, no time passes): main's result. */
START_TEST(run_main_result)
{
    void *result = NULL;
    loop_exception_t error;
    ck_assert_int_eq(loop_run_main(&frame_new(main_step, "main")->coro, &result, &error), 0);
    ck_assert_ptr_eq(result, (void *)(intptr_t)7);
    errno = 0;
    ck_assert_int_eq(loop_run_main(NULL, &result, &error), -1);
    ck_assert_int_eq(errno, EINVAL);
}
END_TEST

static Suite *task_suite(void)
{
    Suite *s = suite_create("task");
    TCase *tc = tcase_create("coro");
    tcase_add_test(tc, await_done_future_costs_no_tick);
    tcase_add_test(tc, await_pending_future_wakes_a_tick_later);
    tcase_add_test(tc, coro_call_costs_no_tick);
    tcase_add_test(tc, coro_call_error_propagates);
    tcase_add_test(tc, try_await_sees_the_error_and_clears_it);
    tcase_add_test(tc, bare_yield_requeues);
    tcase_add_test(tc, self_await_refused);
    tcase_add_test(tc, future_of_another_loop_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("cancel");
    tcase_add_test(tc, cancel_before_first_step);
    tcase_add_test(tc, cancel_while_awaiting_a_future);
    tcase_add_test(tc, cancel_while_awaiting_a_task);
    tcase_add_test(tc, cancel_after_the_future_is_set);
    tcase_add_test(tc, task_cancels_itself);
    tcase_add_test(tc, cancel_the_awaited_task_only);
    tcase_add_test(tc, cancel_after_finish);
    tcase_add_test(tc, catch_cancellation_and_return);
    tcase_add_test(tc, cancel_twice_then_catch);
    tcase_add_test(tc, cancel_while_yielding);
    tcase_add_test(tc, gather_cancel_takes_the_last_childs_message);
    tcase_add_test(tc, cancel_a_task_awaiting_gather);
    tcase_add_test(tc, stop_iteration_leaving_a_coroutine);
    suite_add_tcase(s, tc);
    tc = tcase_create("reports");
    tcase_add_test(tc, task_exception_never_retrieved);
    tcase_add_test(tc, task_exception_retrieved_not_reported);
    tcase_add_test(tc, task_destroyed_but_pending);
    tcase_add_test(tc, task_never_started_destroyed);
    suite_add_tcase(s, tc);
    tc = tcase_create("registry");
    tcase_add_test(tc, current_task_inside_and_outside);
    tcase_add_test(tc, all_tasks_in_creation_order);
    tcase_add_test(tc, task_names);
    tcase_add_test(tc, task_repr_strings);
    tcase_add_test(tc, task_refuses_set_result);
    tcase_add_test(tc, create_task_refused);
    tcase_add_test(tc, task_factory);
    suite_add_tcase(s, tc);
    tc = tcase_create("sleep_wait_for");
    tcase_add_test(tc, sleep_zero_and_sleep_d);
    tcase_add_test(tc, cancel_sleeper_cancels_its_timer);
    tcase_add_test(tc, sleep_nan_refused);
    tcase_add_test(tc, wait_for_timeout);
    tcase_add_test(tc, wait_for_inner_first);
    tcase_add_test(tc, wait_for_timeout_but_inner_returns);
    tcase_add_test(tc, wait_for_timeout_zero);
    tcase_add_test(tc, wait_for_done_future_with_timeout);
    tcase_add_test(tc, wait_for_negative_and_nan_timeouts);
    tcase_add_test(tc, wait_for_cancelled_cancels_inner);
    suite_add_tcase(s, tc);
    tc = tcase_create("run");
    tcase_add_test(tc, run_until_complete_returns_when_done);
    tcase_add_test(tc, run_until_complete_stopped_early);
    tcase_add_test(tc, keyboard_interrupt_from_a_task);
    tcase_add_test(tc, run_until_complete_refusals);
    tcase_add_test(tc, run_main_on_result);
    tcase_add_test(tc, run_main_on_error);
    tcase_add_test(tc, run_main_cancels_leftovers);
    tcase_add_test(tc, run_main_refused_inside_a_running_loop);
    tcase_add_test(tc, sigint_cancels_main);
    tcase_add_test(tc, sigint_caught_by_main);
    tcase_add_test(tc, second_sigint_is_keyboard_interrupt);
    tcase_add_test(tc, run_main_result);
    tcase_add_test(tc, keyboard_interrupt_from_a_callback_keeps_its_message);
    tcase_add_test(tc, run_main_stopped_early);
    tcase_add_test(tc, error_in_close_replaces_the_result);
    tcase_add_test(tc, error_in_close_reaches_run_main_on);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(task_suite());
}
