"""Exercise 2 (chapter 10)'s outcomes, asserted on CPython 3.11: a loop run by
a thread of its own, and this thread handing it coroutines.  Run it:
    /usr/bin/python3 tests/10-threads/exercises/2-threadsafe.py
it prints nothing when every assertion holds."""
import asyncio
import concurrent.futures
import threading

loop = asyncio.new_event_loop()
runner = threading.Thread(target=loop.run_forever)
runner.start()


async def add(a, b, fail):
    assert threading.current_thread() is runner     # on the loop's thread
    assert asyncio.current_task() is not None       # as a task
    await asyncio.sleep(0.01)
    if fail:
        raise ValueError(f"no {a}+{b}")
    return a + b


# The result, and the error, come back to the calling thread.
assert asyncio.run_coroutine_threadsafe(add(40, 2, False), loop).result(timeout=5) == 42
f = asyncio.run_coroutine_threadsafe(add(1, 2, True), loop)
try:
    f.result(timeout=5)
    raise AssertionError("no error")
except ValueError as e:
    assert str(e) == "no 1+2"

started, saw_cancel = threading.Event(), threading.Event()


async def hang():
    started.set()
    try:
        await loop.create_future()
    except asyncio.CancelledError:
        saw_cancel.set()
        raise


# A timeout is the waiter's: the coroutine goes on; a cancel reaches it.
f = asyncio.run_coroutine_threadsafe(hang(), loop)
assert started.wait(timeout=5)
try:
    f.result(timeout=0.05)
    raise AssertionError("no timeout")
except concurrent.futures.TimeoutError:
    pass
assert not f.done()
assert f.cancel()
assert saw_cancel.wait(timeout=5)

# Cancelled before the loop's thread made the task: the cancel is sent
# home behind the task's first step, so the coroutine starts, and meets
# CancelledError at its first await.
started.clear()
saw_cancel.clear()
gate_in, gate_open = threading.Event(), threading.Event()
loop.call_soon_threadsafe(lambda: (gate_in.set(), gate_open.wait()))
assert gate_in.wait(timeout=5)
f = asyncio.run_coroutine_threadsafe(hang(), loop)
assert f.cancel()
gate_open.set()
assert saw_cancel.wait(timeout=5)
assert started.is_set()
assert f.cancelled()

loop.call_soon_threadsafe(loop.stop)
runner.join()
loop.close()

# A closed loop is refused.
coro = hang()
try:
    asyncio.run_coroutine_threadsafe(coro, loop)
    raise AssertionError("not refused")
except RuntimeError as e:
    assert str(e) == "Event loop is closed"
coro.close()
