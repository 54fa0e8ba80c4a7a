"""Exercise 09.3's five programs on CPython's asyncio: the outcomes the C test
asserts, asserted here against the real gather().  Run it with
    python3 tests/09-tasks/exercises/3-gather.py
(no output: every assert holds on 3.11).  The loop's clock is virtual, as
the C test's: a wait moves it instead of sleeping."""
import asyncio
import gc
import selectors


class VirtualLoop(asyncio.SelectorEventLoop):
    """time() is a number that only a wait moves."""
    def __init__(self):
        self.now = 0.0
        loop = self

        class Selector(selectors.DefaultSelector):
            def select(self, timeout=None):
                if timeout:
                    loop.now += timeout
                return super().select(0)
        super().__init__(Selector())

    def time(self):
        return self.now


async def child(d, fail=None):
    await asyncio.sleep(d)
    if fail:
        raise ValueError(fail)
    return d


def new_loop():
    loop = VirtualLoop()
    reported = []
    loop.set_exception_handler(lambda l, c: reported.append(c["message"]))
    return loop, reported


def done_at(loop, g, log):
    g.add_done_callback(lambda f: log.append(f"done@{loop.time():.1f}"))


# return_exceptions_waits_for_all_in_their_order
loop, reported = new_loop()
log = []
f = [loop.create_task(child(3)), loop.create_task(child(1, "bad")), loop.create_task(child(5))]
loop.call_later(2.0, f[2].cancel, "stop")
g = asyncio.gather(*f, return_exceptions=True)
done_at(loop, g, log)
r = loop.run_until_complete(g)
assert log == ["done@3.0"] and not g.cancelled()
assert r[0] == 3 and repr(r[1]) == "ValueError('bad')" and isinstance(r[2], asyncio.CancelledError)
del f, g, r
loop.close()
gc.collect()
assert reported == []

# first_error_finishes_it_at_once
loop, reported = new_loop()
log = []
f = [loop.create_task(child(3)), loop.create_task(child(1, "bad")), loop.create_task(child(2, "worse"))]
g = asyncio.gather(*f)
done_at(loop, g, log)
try:
    loop.run_until_complete(g)
    assert False
except ValueError as e:
    assert str(e) == "bad"
assert log == ["done@1.0"] and not f[0].done()
assert loop.run_until_complete(f[0]) == 3 and not f[0].cancelled() and f[2].done()
del f, g
loop.close()
gc.collect()
assert reported == []

# a_cancelled_child_finishes_it_with_cancelled_error
loop, reported = new_loop()
log = []
f = [loop.create_task(child(3)), loop.create_task(child(1))]
loop.call_later(0.5, f[1].cancel, "stop")
g = asyncio.gather(*f)
done_at(loop, g, log)
try:
    loop.run_until_complete(g)
    assert False
except asyncio.CancelledError:
    pass
assert log == ["done@0.5"] and not g.cancelled()           # FINISHED, not CANCELLED
assert isinstance(g.exception(), asyncio.CancelledError)
loop.run_until_complete(f[0])
loop.close()

# safe_close_of_article_004
loop, reported = new_loop()
f = [loop.create_task(child(10)), loop.create_task(child(20)), loop.create_task(child(30, "never"))]
loop.run_until_complete(loop.create_task(child(0.5)))
for t in f:
    assert t.cancel() is True
g = asyncio.gather(*f, return_exceptions=True)
r = loop.run_until_complete(g)
assert loop.time() == 0.5
assert all(isinstance(x, asyncio.CancelledError) for x in r) and all(t.cancelled() for t in f)
loop.close()

# the_gather_cancelled_meanwhile: outer.cancel(msg) cancels the children;
# with return_exceptions, the last child's _done_callback finds
# _cancel_requested and sets outer's exception to a CancelledError (its
# message the children's), not the list of their CancelledErrors.
loop, reported = new_loop()
f = [loop.create_task(child(1)), loop.create_task(child(2))]
g = asyncio.gather(*f, return_exceptions=True)
loop.call_later(0.5, g.cancel, "halt")
try:
    loop.run_until_complete(g)
    assert False
except asyncio.CancelledError as e:
    assert str(e) == "halt"
assert loop.time() == 0.5 and all(t.cancelled() for t in f)
assert not g.cancelled()  # 3.11: FINISHED, with the CancelledError
loop.close()

