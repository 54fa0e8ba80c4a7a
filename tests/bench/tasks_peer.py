"""tasks_peer.py -- the asyncio and uvloop side of chapter 09's bench_tasks.

bench_tasks (code/09-tasks/bench_tasks.c) runs this script once per round
and workload, in a new process each time, exactly as it runs its own C
side; the three workloads are written the same way in both languages, line
for line (read them side by side):

  create N   create and complete N tasks, each `await asyncio.sleep(0)` then
             return; the main task creates them BATCH at a time and awaits
             each (a task already done is awaited without a suspension,
             Future.__await__'s `if not self.done()`): ns per task;
  chain N    a chain of N awaits.  "A chain of awaits" in asyncio terms: N
             futures, each awaited by a task and completed by the task that
             the previous future woke.  Two tasks hand a baton to each other:
             each creates a future, completes the one the other task awaits,
             then awaits its own.  So every await suspends, and resumes only
             after the one before it did: set_result, a done callback
             scheduled, one Task step.  ns per await;
  memory N   N pending tasks, each suspended at `await gate` (one future they
             all wait for): bytes per task as the process's resident memory
             grows (first pass, cold), and as tracemalloc counts the bytes
             Python allocated (second pass, on warm free lists).

usage: tasks_peer.py asyncio|uvloop WORKLOAD N
       tasks_peer.py --versions       python and uvloop versions, one line

Prints one line: WORKLOAD COUNT VALUE [VALUE2], COUNT being what the
workload did (tasks completed, awaits resumed, tasks pending) so that the
caller can check it (make check's smoke run does, at a tiny N).  Time is the
process's CPU time (user + system) over the workload alone, not Python's
start-up: the same clock the C side reads.  Exit status 3: uvloop is not
installed.
"""
import asyncio
import gc
import os
import platform
import sys
import time
import tracemalloc

BATCH = 1000


# ---- create: N tasks, each awaits sleep(0) then returns ---------------------

async def child():
    await asyncio.sleep(0)


async def create(n):
    loop = asyncio.get_running_loop()
    batch = [None] * BATCH
    completed = 0
    t0 = time.process_time_ns()
    for start in range(0, n, BATCH):
        k = min(BATCH, n - start)
        for i in range(k):
            batch[i] = loop.create_task(child())
        for i in range(k):
            await batch[i]
            completed += 1
            batch[i] = None
    elapsed = time.process_time_ns() - t0
    return completed, elapsed / n


# ---- chain: N awaits, each future completed by the task the previous woke ---

class Baton:
    def __init__(self, fut, remaining):
        self.fut = fut              # the future the waiting task awaits
        self.remaining = remaining  # awaits still to make
        self.awaits = 0             # awaits resumed


async def runner(loop, baton):
    while True:
        prev = baton.fut
        if baton.remaining == 0:
            # The last link: wake the other task, which then finds none left.
            if not prev.done():
                prev.set_result(None)
            return
        baton.remaining -= 1
        baton.fut = mine = loop.create_future()
        prev.set_result(None)
        await mine
        baton.awaits += 1


async def chain(n):
    loop = asyncio.get_running_loop()
    t0 = time.process_time_ns()
    baton = Baton(loop.create_future(), n)
    a = loop.create_task(runner(loop, baton))
    b = loop.create_task(runner(loop, baton))
    await a
    await b
    elapsed = time.process_time_ns() - t0
    return baton.awaits, elapsed / n


# ---- memory: N tasks pending at `await gate` --------------------------------

async def pending(gate):
    await gate


def rss_bytes():
    """The resident set, from /proc (Linux); -1 elsewhere."""
    try:
        with open('/proc/self/statm') as f:
            return int(f.read().split()[1]) * os.sysconf('SC_PAGESIZE')
    except OSError:
        return -1


async def fill(n, tasks, gate):
    """Create n tasks on gate and let each run to its await; return how many are pending."""
    loop = asyncio.get_running_loop()
    for i in range(n):
        tasks[i] = loop.create_task(pending(gate))
    await asyncio.sleep(0)  # one turn: every task runs its first step, to `await gate`
    return sum(1 for t in tasks if not t.done())


async def drain(n, tasks, gate):
    gate.set_result(None)
    for i in range(n):
        await tasks[i]
        tasks[i] = None


async def memory(n):
    loop = asyncio.get_running_loop()
    tasks = [None] * n
    # First pass: what the process's resident memory grows by, cold.
    gate = loop.create_future()
    gc.collect()
    rss0 = rss_bytes()
    count = await fill(n, tasks, gate)
    rss = (rss_bytes() - rss0) / n if rss0 >= 0 else -1
    await drain(n, tasks, gate)
    # Second pass: the bytes Python allocated for them, as tracemalloc counts.
    gate = loop.create_future()
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    count2 = await fill(n, tasks, gate)
    traced = (tracemalloc.get_traced_memory()[0] - base) / n
    tracemalloc.stop()
    await drain(n, tasks, gate)
    return min(count, count2), traced, rss


WORKLOADS = {'create': create, 'chain': chain, 'memory': memory}


def versions():
    try:
        import uvloop
        uv = uvloop.__version__
    except ImportError:
        uv = 'not installed'
    return f'python {platform.python_version()} ({sys.executable}); uvloop {uv}'


def main(argv):
    if argv[1:] == ['--versions']:
        print(versions())
        return 0
    if len(argv) != 4 or argv[1] not in ('asyncio', 'uvloop') or argv[2] not in WORKLOADS:
        print(__doc__.split('usage: ')[1].split('\n\n')[0], file=sys.stderr)
        return 2
    factory = None
    if argv[1] == 'uvloop':
        try:
            import uvloop
        except ImportError:
            print('tasks_peer: uvloop is not installed', file=sys.stderr)
            return 3
        factory = uvloop.new_event_loop
    workload, n = argv[2], int(argv[3])
    with asyncio.Runner(loop_factory=factory) as r:
        result = r.run(WORKLOADS[workload](n))
    count, values = result[0], result[1:]
    print(workload, count, *(f'{v:.1f}' for v in values))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
