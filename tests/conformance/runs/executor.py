"""Article 004, 9.5 (事件循环阻塞导致超时不准), before and after: demo_executor's twin.

1. A heartbeat every 0.1 s, and a request that at 0.22 s does 0.35 s of
   blocking work in its coroutine: the loop is stuck until 0.57, the beat
   due at 0.30 comes 270 ms late, and every beat after it is shifted.
2. The same work through loop.run_in_executor: a pool thread does it, the
   loop goes on, every beat is on time, and the result comes home at 0.57.
3. 9.5's own program: wait_for(blocked_coro(), timeout=1), where
   blocked_coro does time.sleep(5).  The timeout cannot fire while the
   loop is blocked; when the loop runs again, at 5 s, the coroutine is done
   and wait_for returns its result: 3.11 prints no 超时.
4. The fix: the sleep in the executor.  超时 at 1 s -- but a thread cannot
   be cancelled: asyncio.run returns at 5 s, when its
   shutdown_default_executor has waited for the job.

All on a virtual clock, so that the trace is the same on every run.  Work
done in the loop's thread moves the clock by its length (as chapter 08's
`block` does).  Work in a pool thread waits on a gate instead, which the
loop's wait opens when the virtual clock reaches the work's end; the wait
then blocks for real in the selector until the job's result has come home
through call_soon_threadsafe (the self-pipe).  And before the loop waits
at all, a pool thread has picked the job up: whether wait_for's
cancellation in 4 finds the job still queued (and so cancels it) or
already running (and cannot) must not depend on how fast a thread starts.
With real threads and real time, when the result arrives relative to the
beats would vary from run to run; this way the other thread acts at fixed
moments, and the scheduling is all CPython's.
"""
import asyncio
import selectors
import threading

from virtual_loop import VirtualLoop, log


class Work:
    """A job: the sum of the squares below n, taking `seconds` to compute."""
    def __init__(self, n, seconds):
        self.n, self.seconds = n, seconds
        self.loop = None                 # done in this loop's thread: move its clock
        self.started = threading.Event() # done in a pool thread: say it started,
        self.gate = threading.Event()    # ...and wait for the loop,
        self.ends_at = None              # ...which opens the gate at this time


def work(w):
    total = sum(i * i for i in range(w.n))
    if w.loop is not None:
        w.loop._vnow += w.seconds        # time.sleep(w.seconds), on the virtual clock
    else:
        w.started.set()
        w.gate.wait()
    return total


class ExecutorLoop(VirtualLoop):
    """VirtualLoop whose wait also stands for the pool thread's work."""
    def __init__(self):
        super().__init__()
        self.job = None                  # the Work a pool thread is doing
        self._selector.select = self._wait

    def _wait(self, timeout=None):
        sel, job = self._selector, self.job
        sel.ticks += 1
        if job is not None:
            job.started.wait()           # a pool thread has picked the job up
        if job is not None and (timeout is None or self._vnow + timeout >= job.ends_at):
            self._vnow = job.ends_at     # the work is done now:
            self.job = None
            job.gate.set()
            timeout = None               # block until its result comes home
        elif timeout is not None:
            self._vnow += timeout
            timeout = 0
        return selectors.SelectSelector.select(sel, timeout)


async def heartbeat(beats):
    loop = asyncio.get_running_loop()
    due = loop.time()
    for i in range(1, beats + 1):
        late = loop.time() - due
        if late < 0.0005:
            log("beat %2d" % i)
        else:
            log("beat %2d  due at %.3f: %3.0f ms late" % (i, due, late * 1000))
        due = loop.time() + 0.1
        await asyncio.sleep(0.1)


async def request(in_executor):
    loop = asyncio.get_running_loop()
    await asyncio.sleep(0.22)
    w = Work(1000, 0.35)
    if in_executor:
        log("request: 0.35 s of work, in the executor")
        w.ends_at = loop.time() + w.seconds
        loop.job = w
        total = await loop.run_in_executor(None, work, w)
    else:
        log("request: 0.35 s of work, in the coroutine")
        w.loop = loop
        total = work(w)
    log("request: done, %d" % total)


async def beats_and_request(in_executor):
    beats = asyncio.create_task(heartbeat(8))
    await request(in_executor)
    await beats


async def blocked_coro():            # 9.5 as printed, time.sleep(5) on the virtual clock
    w = Work(0, 5)
    w.loop = asyncio.get_running_loop()
    work(w)
    return


async def main_9_5():
    try:
        result = await asyncio.wait_for(blocked_coro(), timeout=1)
        log("wait_for returned %r: no 超时" % result)
    except asyncio.TimeoutError:
        log("超时")


async def main_fixed():
    loop = asyncio.get_running_loop()
    w = Work(0, 5)
    w.ends_at = loop.time() + w.seconds
    loop.job = w
    try:
        result = await asyncio.wait_for(loop.run_in_executor(None, work, w), timeout=1)
        log("wait_for returned %r: no 超时" % result)
    except asyncio.TimeoutError:
        log("超时")


def run(title, coro):
    print("-- " + title)
    loops = []

    def factory():
        loops.append(ExecutorLoop())
        return loops[-1]

    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(coro)
    print("asyncio.run returned at %.3f" % loops[0].time())


run("the work blocks the loop", beats_and_request(False))
run("the same work in the executor", beats_and_request(True))
run("article 004, 9.5: wait_for(blocked_coro(), timeout=1)", main_9_5())
run("the fix: wait_for(loop.run_in_executor(None, time.sleep, 5), timeout=1)", main_fixed())
