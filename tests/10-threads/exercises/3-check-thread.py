"""Exercise 3 (chapter 10)'s outcomes, asserted on CPython 3.11: debug mode's
thread check (base_events._check_thread).  Run it:
    /usr/bin/python3 tests/10-threads/exercises/3-check-thread.py
it prints nothing when every assertion holds."""
import asyncio
import threading

MESSAGE = "Non-thread-safe operation invoked on an event loop other than the current one"


def held(debug):
    """A loop running in a thread of its own, held in a callback."""
    loop = asyncio.new_event_loop()
    loop.set_debug(debug)
    inside, release = threading.Event(), threading.Event()
    loop.call_soon(lambda: (inside.set(), release.wait()))   # not running yet: allowed
    t = threading.Thread(target=loop.run_forever)
    t.start()
    assert inside.wait(timeout=5) and loop.is_running()
    return loop, release, t


def finish(loop, release, t):
    loop.call_soon_threadsafe(loop.stop)
    release.set()
    t.join()
    loop.close()


ran = []

# The loop's own thread may schedule, in debug mode too.
loop, release, t = held(True)
loop.call_soon_threadsafe(lambda: (loop.call_soon(ran.append, 1),
                                   loop.call_later(0.001, ran.append, 2),
                                   loop.call_at(loop.time(), ran.append, 3)))
release.set()
loop.call_soon_threadsafe(loop.call_later, 0.05, loop.stop)
t.join()
loop.close()
assert sorted(ran) == [1, 2, 3], ran

# Another thread is refused while it runs; call_soon_threadsafe is not.
loop, release, t = held(True)
for call in (lambda: loop.call_soon(print), lambda: loop.call_later(1, print),
             lambda: loop.call_at(0, print)):
    try:
        call()
        raise AssertionError("not refused")
    except RuntimeError as e:
        assert str(e) == MESSAGE
loop.call_soon_threadsafe(ran.append, 4)
finish(loop, release, t)
assert ran[-1] == 4

# A loop that does not run has no thread: anyone may schedule on it.
loop = asyncio.new_event_loop()
loop.set_debug(True)
loop.call_soon(ran.append, 5)
loop.call_soon(loop.stop)
t = threading.Thread(target=loop.run_forever)
t.start()
t.join()
loop.call_soon(ran.append, 6)
loop.call_soon(loop.stop)
loop.run_forever()
loop.close()
assert ran[-2:] == [5, 6]

# Without debug mode nothing is checked (the loop waits in a callback, so
# the call is not a race); turned on while it runs, the check is on.
loop, release, t = held(False)
loop.call_soon(ran.append, 7)
loop.set_debug(True)
try:
    loop.call_soon(ran.append, 8)
    raise AssertionError("not refused")
except RuntimeError as e:
    assert str(e) == MESSAGE
finish(loop, release, t)
assert ran[-1] == 7
