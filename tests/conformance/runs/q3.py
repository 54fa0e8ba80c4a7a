"""Article 004, 题目3 (跨线程提交任务): demo_q3's twin.

The main thread runs a loop with a heartbeat task (心跳 every second); a
worker thread, 5 seconds in, hands the loop a coroutine with
asyncio.run_coroutine_threadsafe (it prints 来自子线程 and returns 42,
which the worker gets from the concurrent future's result()); at 10 seconds
the main thread stops the loop, then closes it properly: cancel the
heartbeat and run it to its end, join the worker, close.  Then the mistake
the exercise warns of (避免事件循环提前关闭): the loop stopped at 3 seconds and
closed before the worker's 5 are up -- its submission is refused with
"Event loop is closed".

Why the worker's 5 seconds are virtual here.  With a real time.sleep(5) in
the worker, its submission lands wherever the OS schedules it: in the same
tick as the heartbeat at 5 s or in the next one, and the worker's own
print() anywhere among the loop's lines.  The trace would differ from run
to run, and could only be compared loosely.  So the loop's wait does the
worker's waiting too: when the virtual clock is about to reach t=5, the
wait sets it to 5, opens the worker's gate, and waits (a threading.Event)
until the worker's call_soon_threadsafe has been made; and once the
concurrent future is done, the next wait waits until the worker has printed
what it got.  Every scheduling decision is still CPython's; only the
moments at which the other thread acts are fixed.  `--real` runs the same
with real sleeps, ten times faster (for watching; not pinned).
"""
import asyncio
import selectors
import sys
import threading
import time

from virtual_loop import VirtualLoop, log

REAL = "--real" in sys.argv[1:]
SCALE = 0.1 if REAL else 1.0   # --real: every delay ten times shorter


class Worker:
    """What the two threads share: three one-way signals and the future."""
    def __init__(self, wakes_at):
        self.wakes_at = wakes_at            # its time.sleep(5), on the loop's clock
        self.gate = threading.Event()       # set: its 5 seconds are up
        self.submitted = threading.Event()  # set: run_coroutine_threadsafe returned
        self.printed = threading.Event()    # set: it printed what result() gave it
        self.cf = None                      # the concurrent future it waits on


class Q3Loop(VirtualLoop):
    """VirtualLoop whose wait also stands for the worker's sleep."""
    def __init__(self, worker):
        super().__init__()
        self.worker = worker
        self._selector.select = self._wait    # the one place the loop waits

    def _wait(self, timeout=None):
        w, sel = self.worker, self._selector
        sel.ticks += 1
        if timeout is None:          # the demos never wait for I/O that cannot come
            raise RuntimeError("the loop would block forever")
        if w.cf is not None and w.cf.done() and not w.printed.is_set():
            w.printed.wait()         # the worker got its result: let it print first
        if not w.gate.is_set() and self._vnow + timeout >= w.wakes_at:
            self._vnow = w.wakes_at  # the worker's 5 seconds are up
            w.gate.set()
            w.submitted.wait()       # its call_soon_threadsafe has been made
        else:
            self._vnow += timeout
        return selectors.SelectSelector.select(sel, 0)


def say(text, loop=None):
    if REAL:
        loop = loop or asyncio.get_running_loop()
        print("%6.3f  %s" % ((loop.time() - loop.t0) / SCALE, text), flush=True)
    else:
        log(text, loop)


def worker_says(text):
    print("        worker   %s" % text, flush=True)


async def heartbeat():
    try:
        while True:
            say("心跳")
            await asyncio.sleep(1 * SCALE)
    except asyncio.CancelledError:
        say("heartbeat: cancelled")
        raise


async def from_worker():
    say("来自子线程")
    return 42


def worker_main(loop, w):
    if REAL:
        time.sleep(5 * SCALE)
    else:
        w.gate.wait()
    coro = from_worker()
    try:
        cf = asyncio.run_coroutine_threadsafe(coro, loop)
    except RuntimeError as e:
        coro.close()                     # it will never run: no "never awaited" warning
        worker_says("run_coroutine_threadsafe raised RuntimeError: %s" % e)
        w.submitted.set()
        return
    worker_says("submitted from_worker()")
    w.cf = cf
    w.submitted.set()                    # (after the print: the loop goes on now)
    worker_says("result() returned %d" % cf.result())
    w.printed.set()


def run(stop_at, join_before_close):
    w = Worker(wakes_at=5 * SCALE)
    loop = asyncio.new_event_loop() if REAL else Q3Loop(w)
    loop.t0 = loop.time()
    worker = threading.Thread(target=worker_main, args=(loop, w))
    worker.start()
    hb = loop.create_task(heartbeat())
    loop.call_later(stop_at * SCALE, loop.stop)
    loop.run_forever()
    say("run_forever returned", loop)
    hb.cancel()                          # close properly: the heartbeat's end,
    try:
        loop.run_until_complete(hb)
    except asyncio.CancelledError:
        say("heartbeat task done: cancelled", loop)
    if join_before_close:
        worker.join()                    # ...the worker's,
        loop.close()                     # ...and only then the loop
        print("loop closed after the worker ended")
    else:
        loop.close()                     # the mistake: closed with the worker still to come
        print("loop closed; the worker has not submitted yet")
        w.gate.set()                     # (virtual: its 5 seconds are up now)
        worker.join()
        print("worker joined")


print("-- 题目3: the worker submits at 5 s, the loop stops at 10 s")
run(stop_at=10, join_before_close=True)
print("-- the loop closed too early: stopped at 3 s, closed before the worker's 5 s")
run(stop_at=3, join_before_close=False)
