"""Exercise 09.2's five programs on CPython's asyncio: the outcomes the C test
asserts, asserted here against the real Task.cancel().  Run it with
    python3 tests/09-tasks/exercises/2-task-cancel.py
(no output: every assert holds on 3.11)."""
import asyncio

log = []


async def waiter(fut, catch):
    log.append("start")
    try:
        v = await fut
        log.append(f"got:{v}")
    except asyncio.CancelledError as e:
        log.append(f"caught:CancelledError:{e}")
        if not catch:
            raise
        await asyncio.sleep(0)
        return 42
    return v


def run(catch, at, set_first, msgs, early=None):
    """A loop, a future, a task waiting for it; at time `at` optionally set
    the future's result, then cancel the task with each message.  Returns
    (log, outcome, the future's state)."""
    log.clear()
    loop = asyncio.new_event_loop()
    fut = loop.create_future()
    t = loop.create_task(waiter(fut, catch))

    def timer():
        if set_first:
            fut.set_result(7)
        for m in msgs:
            log.append(f"cancel={int(t.cancel(m))}")
    if early is not None:
        assert t.cancel(early) is True and not t.done()
    else:
        loop.call_later(at, timer)
    try:
        outcome = f"result:{loop.run_until_complete(t)}"
    except asyncio.CancelledError:
        outcome = "cancelled"
    requests = t.cancelling()
    assert t.cancel() is False  # done: nothing to cancel
    assert t.cancelling() == requests  # and not counted
    state = "cancelled" if fut.cancelled() else f"result:{fut.result()}" if fut.done() else "pending"
    loop.close()
    return " ".join(log), outcome, state, requests


# cancel_cancels_the_awaited_future
assert run(False, 1.0, False, ["bye"]) == \
    ("start cancel=1 caught:CancelledError:bye", "cancelled", "cancelled", 1)
# must_cancel_when_the_future_is_done_already
assert run(False, 1.0, True, ["bye"]) == \
    ("start cancel=1 caught:CancelledError:bye", "cancelled", "result:7", 1)
# cancelled_before_its_first_step
assert run(True, None, False, [], early="early") == ("", "cancelled", "pending", 1)
# caught_twice_cancelled_is_one_error
assert run(True, 1.0, False, ["one", "two"]) == \
    ("start cancel=1 cancel=1 caught:CancelledError:one", "result:42", "cancelled", 2)
# a_caught_cancel_with_another_message
assert run(True, 2.5, True, ["late"]) == \
    ("start cancel=1 caught:CancelledError:late", "result:42", "result:7", 1)


# cancel_of_a_failed_task_retrieves_nothing_but_silences_it: cancel() on a
# task done with an error returns False, and clears _log_traceback first,
# so no "Task exception was never retrieved" is reported for it.
async def fails():
    raise ValueError("lost")


def reports_after(cancel_it):
    import gc
    reports = []
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(lambda loop, context: reports.append(context["message"]))
    t = loop.create_task(fails())
    loop.run_until_complete(asyncio.sleep(0.01))
    assert t.done() and t.cancelling() == 0
    if cancel_it:
        assert t.cancel() is False and t.cancelling() == 0
    del t
    gc.collect()
    loop.close()
    return reports


assert reports_after(False) == ["Task exception was never retrieved"]
assert reports_after(True) == []
