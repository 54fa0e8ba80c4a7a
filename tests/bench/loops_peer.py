"""loops_peer.py -- the asyncio and uvloop side of chapter 11's loop benchmarks.

tests/bench/loops.py (make bench) runs this script once per round, loop and
workload, in a new process each time, exactly as it runs the C peers
(peer_uv, peer_ev, peer_event) and every stage's loop_bench; the protocol,
the same for all of them, is tests/bench/BENCH.md's.  Each workload is
written in asyncio's own idiom, the code an asyncio user would write:

  batch N       loop.call_soon N times before run_forever; the last callback
                stops the loop: ns per callback;
  chain N       one callback that loop.call_soon's itself until it has run N
                times: ns per callback;
  q2 N, q2_cpu N  article 004's 题目2: main() gathers N tasks that each
                await asyncio.sleep(0.01), timed with loop.time() as the
                article does: q2 prints the ms it measures (wall), q2_cpu
                the CPU ms of the same stretch (N = 1000, the article's);
  timers N      loop.call_later(d_i) N times, d_i random in [0, 1) s, then run
                until all fired: CPU ns per timer;
  churn N       N times call_later(d_i) and cancel the handle at once, then
                run the loop once (call_soon(loop.stop)), which is when asyncio
                throws the cancelled handles out of its heap: ns per pair;
  churn_half N  call_later N timers at 10 + d_i s, cancel those with odd i,
                run one turn of the loop (call_soon(loop.stop)): none is
                due yet; ns per scheduled timer;
  pingpong N    a socketpair, both ends non-blocking, loop.add_reader on each;
                one byte goes back and forth N times: ns per round trip;
  xthread N     a threading.Thread posts N callbacks with
                call_soon_threadsafe, each run in the order posted: ns per
                post (CPU time of both threads);
  timer_bytes   has no Python counterpart: exit status 3.

usage: loops_peer.py asyncio|uvloop WORKLOAD N
       loops_peer.py --versions       python and uvloop versions, one line

Prints one line: WORKLOAD COUNT VALUE, COUNT being what the run counted
(callbacks run, timers fired or scheduled, round trips, posts run), which
the driver checks.  Exit status 1 if this script's own check fails (a wrong
count, a timer fired out of its deadline's order, a post run out of order,
a timer that should not have fired), 2 on bad arguments, 3 when uvloop is
not installed or the workload has no Python counterpart.

Time is the process's CPU time (time.process_time_ns(), user + system, all
threads: the clock the C side reads) over the timed region alone.  What the
timed region uses that is not the loop's work is made before it: the delays
(BENCH.md's generator), the list that keeps the timer handles, the
socketpair.

Timers and deadlines: call_later reads the loop's clock at every call (in
asyncio; uvloop reads libuv's cached time, refreshed as it goes), and
scheduling a million timers takes a second or more, so a timer scheduled
late with a small d_i rightly fires after one scheduled early with a larger
d_i.  The order check therefore compares the deadlines the loop computed,
handle.when(), not the d_i: a timer must not fire more than 2 ms before the
one fired before it.  uvloop rounds a delay to whole milliseconds and turns
one that rounds to 0 (d_i < 0.5 ms, about 500 of a million) into call_soon,
whose Handle has no deadline: those run in the loop's first turns, after
the timers already due, unchecked for order but counted.

The garbage collector stays on, as in any asyncio program: while a million
handles are pending, the full collections it triggers cost about 1 us of
asyncio's ~2.2 us per call_later (measured with gc.disable(), not used here).

versions() and the usage text repeat tasks_peer.py's few lines on purpose:
importing tasks_peer would work, but ties two programs of two chapters
together for ten lines.
"""
import asyncio
import gc
import platform
import socket
import sys
import threading
import time

TOLERANCE = 0.002  # seconds a timer may fire before the previous one's deadline
MASK64 = 0xFFFFFFFFFFFFFFFF


class CheckFailed(Exception):
    pass


def delays(n):
    """BENCH.md's delays: one LCG step, then the top 53 bits as a fraction of 1 s."""
    out = [0.0] * n
    x = 1
    for i in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) & MASK64
        out[i] = (x >> 11) * 2.0 ** -53
    return out


# ---- batch: N callbacks queued before the loop runs ------------------------

def batch(loop, n):
    ran = 0

    def callback():
        nonlocal ran
        ran += 1
        if ran == n:
            loop.stop()

    t0 = time.process_time_ns()
    for _ in range(n):
        loop.call_soon(callback)
    loop.run_forever()
    elapsed = time.process_time_ns() - t0
    return ran, elapsed


# ---- chain: one callback re-queues itself ----------------------------------

def chain(loop, n):
    ran = 0

    def callback():
        nonlocal ran
        ran += 1
        if ran < n:
            loop.call_soon(callback)
        else:
            loop.stop()

    t0 = time.process_time_ns()
    loop.call_soon(callback)
    loop.run_forever()
    elapsed = time.process_time_ns() - t0
    return ran, elapsed


# ---- timers: call_later, run until all fired ---------------------------------

def timers(loop, n):
    d = delays(n)
    handles = [None] * n
    fired = 0
    last = float('-inf')

    def callback(i):
        nonlocal fired, last
        when = getattr(handles[i], 'when', None)
        handles[i] = None  # the handle dies here, as it would in a user's program
        if when is not None:
            when = when()
            if when < last - TOLERANCE:
                raise CheckFailed(f'timer {i} (deadline {when:.6f}) fired after one '
                                  f'with deadline {last:.6f}')
            last = when
        fired += 1
        if fired == n:
            loop.stop()

    t0 = time.process_time_ns()
    for i in range(n):
        handles[i] = loop.call_later(d[i], callback, i)
    loop.run_forever()
    elapsed = time.process_time_ns() - t0
    return fired, elapsed


# ---- churn_half: N timers 10 s out, the odd ones cancelled, one turn ---------

def churn_half(loop, n):
    d = delays(n)
    handles = [None] * n
    fired = 0

    def callback():
        nonlocal fired
        fired += 1

    t0 = time.process_time_ns()
    for i in range(n):
        handles[i] = loop.call_later(10.0 + d[i], callback)
    for i in range(1, n, 2):
        handles[i].cancel()
        handles[i] = None
    loop.call_soon(loop.stop)
    loop.run_forever()
    elapsed = time.process_time_ns() - t0
    if fired:
        raise CheckFailed(f'{fired} timers fired in the first turn')
    for h in handles:
        if h is not None:
            h.cancel()
    return n, elapsed


# ---- churn: schedule and cancel at once, then one run of the loop -----------

def churn(loop, n):
    d = delays(n)
    fired = 0

    def callback():
        nonlocal fired
        fired += 1

    t0 = time.process_time_ns()
    for i in range(n):
        loop.call_later(d[i], callback).cancel()
    loop.call_soon(loop.stop)
    loop.run_forever()
    elapsed = time.process_time_ns() - t0
    if fired:
        raise CheckFailed(f'{fired} cancelled timers fired')
    return n, elapsed


# ---- pingpong: one byte back and forth on a socketpair ----------------------

def pingpong(loop, n):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.setblocking(False)
    b.setblocking(False)
    trips = 0

    def on_b():
        if b.recv(1) != b'x':
            raise CheckFailed('B read no byte')
        b.send(b'x')

    def on_a():
        nonlocal trips
        if a.recv(1) != b'x':
            raise CheckFailed('A read no byte')
        trips += 1
        if trips < n:
            a.send(b'x')
        else:
            loop.stop()

    try:
        t0 = time.process_time_ns()
        loop.add_reader(a.fileno(), on_a)
        loop.add_reader(b.fileno(), on_b)
        a.send(b'x')
        loop.run_forever()
        elapsed = time.process_time_ns() - t0
    finally:
        loop.remove_reader(a.fileno())
        loop.remove_reader(b.fileno())
        a.close()
        b.close()
    return trips, elapsed


# ---- xthread: another thread posts N callbacks ------------------------------

def xthread(loop, n):
    ran = 0

    def callback(i):
        nonlocal ran
        if i != ran:
            raise CheckFailed(f'post {i} ran as number {ran}')
        ran += 1
        if ran == n:
            loop.stop()

    def poster():
        post = loop.call_soon_threadsafe
        for i in range(n):
            post(callback, i)

    t0 = time.process_time_ns()
    thread = threading.Thread(target=poster)
    thread.start()
    loop.run_forever()
    elapsed = time.process_time_ns() - t0
    thread.join()
    return ran, elapsed


# ---- q2, q2_cpu: article 004's 题目2, as the article writes it ---------------

def q2_run(loop, n):
    """main() of 题目2 on this loop (asyncio.run's Runner does the same):
    the stretch main measures with loop.time(), wall and CPU, in ns."""
    async def task():
        await asyncio.sleep(0.01)

    async def main():
        start = loop.time()
        c0 = time.process_time_ns()
        results = await asyncio.gather(*[task() for _ in range(n)])
        c1 = time.process_time_ns()
        end = loop.time()
        return len(results), round((end - start) * 1e9), c1 - c0

    return loop.run_until_complete(main())


def q2(loop, n):
    count, wall, _ = q2_run(loop, n)
    return count, wall


def q2_cpu(loop, n):
    count, _, cpu = q2_run(loop, n)
    return count, cpu


WORKLOADS = {'batch': batch, 'chain': chain, 'timers': timers, 'churn': churn,
             'churn_half': churn_half, 'pingpong': pingpong, 'xthread': xthread,
             'q2': q2, 'q2_cpu': q2_cpu}
NOT_IN_PYTHON = {'timer_bytes'}
# These print the whole run in ms (题目2 prints its 耗时), not ns per N.
WHOLE_RUN_MS = {'q2', 'q2_cpu'}


def versions():
    try:
        import uvloop
        uv = uvloop.__version__
    except ImportError:
        uv = 'not installed'
    return f'python {platform.python_version()} ({sys.executable}); uvloop {uv}'


def usage():
    print(__doc__.split('usage: ')[1].split('\n\n')[0], file=sys.stderr)
    return 2


def run(loop, workload, n):
    """Run one workload on loop; a failed check in a callback stops the loop."""
    failures = []

    def on_error(loop, context):
        failures.append(context.get('exception') or context.get('message'))
        loop.stop()

    loop.set_exception_handler(on_error)
    gc.collect()  # start every run with the same, empty, young generation
    count, elapsed = WORKLOADS[workload](loop, n)
    if failures:
        raise CheckFailed(failures[0])
    return count, elapsed


def main(argv):
    if argv[1:] == ['--versions']:
        print(versions())
        return 0
    if len(argv) != 4 or argv[1] not in ('asyncio', 'uvloop'):
        return usage()
    workload = argv[2]
    if workload not in WORKLOADS and workload not in NOT_IN_PYTHON:
        return usage()
    if not (argv[3].isascii() and argv[3].isdigit()) or int(argv[3]) <= 0:
        return usage()
    n = int(argv[3])
    if workload in NOT_IN_PYTHON:
        return 3
    factory = asyncio.new_event_loop
    if argv[1] == 'uvloop':
        try:
            import uvloop
        except ImportError:
            print('loops_peer: uvloop is not installed', file=sys.stderr)
            return 3
        factory = uvloop.new_event_loop
    loop = factory()
    try:
        count, elapsed = run(loop, workload, n)
    except CheckFailed as e:
        print(f'loops_peer: {argv[1]} {workload} {n}: {e}', file=sys.stderr)
        return 1
    finally:
        loop.close()
    expected = n  # every workload counts N: calls run, timers fired or scheduled, trips, posts
    if count != expected:
        print(f'loops_peer: {argv[1]} {workload} {n}: counted {count}, expected {expected}',
              file=sys.stderr)
        return 1
    value = elapsed / 1e6 if workload in WHOLE_RUN_MS else elapsed / n
    print(workload, count, f'{value:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
