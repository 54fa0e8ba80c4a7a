"""loops.py -- chapter 11's benchmarks: every loop on every workload, side by side.

`make bench` runs this after building the contenders (tests/bench.sh):

  stages 01..11   tests/bench/loop_bench.c, compiled once per stage against that
                  stage's libloop.a (BIN/loop_bench-NN); the task workloads from
                  stage 09 on through the stage's own bench_tasks --one
  libuv, libev,   tests/bench/peer_uv.c, peer_ev.c, peer_event.c (BIN/peer_*),
  libevent        each in its library's idiom, epoll backend
  asyncio,        tests/bench/loops_peer.py and tasks_peer.py, run by PYTHON
  uvloop

Every contender is a program taking WORKLOAD N that prints one line,
`WORKLOAD COUNT VALUE...`, or exits 3 when it has no such workload (stage 02
has no timers).  This script checks COUNT against what the workload must do
(callbacks run, timers fired, tasks completed): a run that did less is a
failure, not a fast run.  One measurement is one new process; a round runs
every workload once per contender, the contenders of each workload in a new
random order, so that a slow minute of the machine falls on all of them alike.
Each row of the data file is the median of the rounds, their min and max, and
the ratio of the median to the newest stage's.  Time is the process's CPU time
over the workload alone (the programs read it themselves), so start-up and
sleeping are not counted.

usage: loops.py --bin DIR --build DIR --out FILE [--rounds R] [--scale S]
                [--only W,W...] [--seed X]
  --bin     where tests/bench.sh put loop_bench-NN and peer_*
  --build   the stages' build folder (BUILD/NN-slug/bench_tasks)
  --out     the data file (book/data/loops.dat); a summary table goes next to
            it, FILE with -summary.txt instead of .dat
  --scale   multiply every N (at least 10): make check's smoke run uses 0.01
            with one round, and checks every count without timing anything
"""
import argparse
import os
import platform
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYTHON = os.environ.get('PYTHON', '/usr/bin/python3')

# name, N, the count a run must report (from N), unit, what the run does.
WORKLOADS = [
    ('batch', 1000000, lambda n: n, 'ns per callback',
     'queue N callbacks, then run them'),
    ('chain', 1000000, lambda n: n, 'ns per callback',
     'one callback re-queues itself until it ran N times'),
    ('timers', 1000000, lambda n: n, 'CPU ns per timer',
     'N timers at random deadlines in [0,1) s, all fired'),
    ('churn', 1000000, lambda n: n, 'ns per schedule + cancel',
     'N times: schedule a timer and cancel it at once'),
    ('churn_half', 1000000, lambda n: n, 'ns per timer scheduled',
     'schedule N timers at 10 + [0,1) s, cancel every second one, run one turn'),
    ('pingpong', 200000, lambda n: n, 'ns per round trip',
     'one-byte round trips on a socketpair, both ends in the loop'),
    ('xthread', 1000000, lambda n: n, 'ns per post',
     'another thread posts N callbacks, every one run in order'),
    ('timer_bytes', 1000000, lambda n: n, 'bytes per pending timer',
     'N timers pending: heap growth (+ caller-owned watchers) / N'),
    ('tasks_create', 1000000, lambda n: n, 'ns per task',
     'create and complete N tasks (await sleep(0), return)'),
    ('tasks_chain', 1000000, lambda n: n, 'ns per await',
     'a chain of N awaits: two tasks pass a baton through futures'),
    ('task_bytes', 100000, lambda n: n, 'bytes per pending task',
     'N tasks pending on one future: allocator bytes / N'),
    ('q2', 1000, lambda n: n, 'ms, as loop.time() measures it (wall)',
     "article 004's 题目2: gather N tasks that each await sleep(0.01)"),
    ('q2_cpu', 1000, lambda n: n, 'CPU ms of the same stretch',
     "题目2's run again, its CPU time: what the loop itself costs"),
]
TASKS = {'tasks_create': 'create', 'tasks_chain': 'chain', 'task_bytes': 'memory'}
# Workloads of coroutines and tasks: the C libraries have none (exit 3 for them).
CORO = set(TASKS) | {'q2', 'q2_cpu'}


def stages():
    return sorted(d for d in os.listdir(os.path.join(ROOT, 'code'))
                  if d[:2].isdigit() and d[2] == '-')


class Contender:
    """One loop: its label in the figures, its kind (for the colour), and how
    to run WORKLOAD N with it (None: it has no such workload)."""

    def __init__(self, label, kind, command, env=None):
        self.label, self.kind, self._command, self.env = label, kind, command, env

    def command(self, workload, n):
        return self._command(workload, n)


def contenders(args):
    found = []
    for st in stages():
        num = int(st[:2])
        prog = os.path.join(args.bin, f'loop_bench-{st[:2]}')
        tasks = os.path.join(args.build, st, 'bench_tasks')
        has_tasks = os.path.exists(os.path.join(ROOT, 'code', st, 'bench_tasks.c'))

        def command(w, n, prog=prog, tasks=tasks, has_tasks=has_tasks):
            if w in TASKS:
                return [tasks, '--one', TASKS[w], str(n)] if has_tasks else None
            return [prog, w, str(n)]
        # Stages 07 on choose their backend: the peers run on epoll, so do they.
        env = {'LOOP_BACKEND': 'epoll'} if num >= 7 else None
        found.append(Contender(f'{num:02d}', 'stage', command, env))
    for lib in ('uv', 'ev', 'event'):
        prog = os.path.join(args.bin, f'peer_{lib}')
        found.append(Contender(f'lib{lib}', 'c-peer',
                               lambda w, n, prog=prog: None if w in CORO else [prog, w, str(n)]))
    for loop in ('asyncio', 'uvloop'):
        def command(w, n, loop=loop):
            if w in TASKS:
                return [PYTHON, os.path.join(HERE, 'tasks_peer.py'), loop, TASKS[w], str(n)]
            return [PYTHON, os.path.join(HERE, 'loops_peer.py'), loop, w, str(n)]
        found.append(Contender(loop, 'py-peer', command))
    found[len(stages()) - 1].kind = 'newest'
    return found


class Failure(Exception):
    pass


def measure(contender, workload, n, expected):
    """One run in a new process: its VALUE, or None (exit 3: no such workload)."""
    cmd = contender.command(workload, n)
    if cmd is None:
        return None
    env = dict(os.environ, **(contender.env or {}))
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise Failure(f'{contender.label} {workload} {n}: no answer in 600 s')
    if p.returncode == 3:
        return None
    name = TASKS.get(workload, workload)
    fields = p.stdout.split()
    if p.returncode != 0 or len(fields) < 3 or fields[0] != name:
        raise Failure(f'{contender.label} {workload} {n}: exit {p.returncode}, '
                      f'printed {p.stdout.strip()!r}, said {p.stderr.strip()!r}')
    if int(fields[1]) != expected:
        raise Failure(f'{contender.label} {workload} {n}: counted {fields[1]}, '
                      f'expected {expected}')
    return float(fields[2])


# @region rounds
def run(cs, workloads, rounds, scale, seed, log):
    """results[workload][label] = the values of the rounds, in order."""
    rng = random.Random(seed)
    results = {w[0]: {} for w in workloads}
    applies = {}  # (workload, label) -> False once it said exit 3
    for r in range(rounds):
        t0 = time.monotonic()
        for name, n0, count, _, _ in workloads:
            n = max(10, round(n0 * scale))
            order = list(cs)
            rng.shuffle(order)
            for c in order:
                if applies.get((name, c.label), True) is False:
                    continue
                v = measure(c, name, n, count(n))
                applies[(name, c.label)] = v is not None
                if v is not None:
                    results[name].setdefault(c.label, []).append(v)
        log(f'round {r + 1}/{rounds}: {time.monotonic() - t0:.0f} s')
    return results
# @end rounds

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return '?'


def header(args, seed, load0):
    cpu = sh("sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1")
    pkgs = sh("dpkg-query -W -f='${Package} ${Version}, ' libuv1-dev libev-dev libevent-dev "
              "python3-uvloop 2>/dev/null")
    return [
        f'# {os.path.relpath(args.out, ROOT)}, written by make bench (tests/bench/loops.py) '
        f'on {time.strftime("%Y-%m-%d", time.gmtime())}',
        f'# machine: {platform.system()} {platform.release()} {platform.machine()}, '
        f'{os.cpu_count()} cores, {cpu}',
        f'# compiler: {sh(os.environ.get("CC", "cc") + " --version | head -n 1")}; '
        f'flags: {os.environ.get("CFLAGS", "-O2 -g")}',
        f'# peers: {pkgs.rstrip(", ")}; python {platform.python_version()}',
        f'# {args.rounds} rounds, SCALE={args.scale}; in each round every workload runs once per '
        f'contender, each run a new process,',
        f'# the contenders in a new random order (Python random, seed {seed})',
        '# time: the process\'s CPU time (user + system, all threads) over the workload alone',
        f'# load average (1 min): {load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end',
        '# each row: contender, median of the rounds, min, max, median / newest stage\'s median,',
        '# kind (0 a stage, 1 the newest stage, 2 a C library, 3 Python)',
    ]


KINDS = {'stage': 0, 'newest': 1, 'c-peer': 2, 'py-peer': 3}


def write(args, cs, workloads, results, head):
    newest = [c.label for c in cs if c.kind == 'newest'][0]
    lines = list(head)
    med = {}
    for i, (name, n0, _, unit, what) in enumerate(workloads):
        n = max(10, round(n0 * args.scale))
        rows = results[name]
        med[name] = {label: statistics.median(v) for label, v in rows.items()}
        base = med[name].get(newest)
        lines += ['', ''] if i else ['']
        lines.append(f'# index {i}: {name}: {what}, N = {n}; {unit}')
        lines.append(f'# {"contender":<12} {"median":>10} {"min":>10} {"max":>10} '
                     f'{"x newest":>9} kind')
        for c in cs:
            if c.label not in rows:
                continue
            v = rows[c.label]
            ratio = f'{med[name][c.label] / base:9.2f}' if base else '        -'
            lines.append(f'{chr(34) + c.label + chr(34):<14} {med[name][c.label]:10.1f} '
                         f'{min(v):10.1f} {max(v):10.1f} {ratio} {KINDS[c.kind]}')
    with open(args.out + '.tmp', 'w') as f:
        f.write('\n'.join(lines) + '\n')
    os.replace(args.out + '.tmp', args.out)
    summary(args, cs, workloads, med, newest, head)


def summary(args, cs, workloads, med, newest, head):
    """The appendix's table: one row per workload, the newest stage and the
    stage before it, the peers, and the two ratios the issue asks about."""
    prev = f'{int(newest) - 1:02d}'
    cols = [prev, newest, 'libuv', 'libev', 'libevent', 'asyncio', 'uvloop']
    out = [h for h in head if not h.startswith('# each row') and not h.startswith('# kind')]
    out.append('# medians; "C best" = the fastest (or smallest) of libuv, libev, libevent')
    w0 = max(len(w[0]) for w in workloads)
    out.append(f'{"workload":<{w0}} ' + ' '.join(f'{c:>9}' for c in cols) +
               f' {newest + "/C best":>11} {"asyncio/" + newest:>11}')
    for name, *_ in workloads:
        m = med[name]
        cells = ' '.join(f'{m[c]:9.1f}' if c in m else f'{"-":>9}' for c in cols)
        peers = [m[c] for c in ('libuv', 'libev', 'libevent') if c in m]
        best = f'{m[newest] / min(peers):10.2f}x' if peers and newest in m else f'{"-":>11}'
        py = (f'{m["asyncio"] / m[newest]:10.1f}x' if 'asyncio' in m and newest in m
              else f'{"-":>11}')
        out.append(f'{name:<{w0}} {cells} {best} {py}')
    path = args.out[:-4] + '-summary.txt' if args.out.endswith('.dat') else args.out + '.txt'
    with open(path, 'w') as f:
        f.write('\n'.join(out) + '\n')


def main(argv):
    ap = argparse.ArgumentParser(usage=__doc__.split('usage: ')[1].split('\n\n')[0])
    ap.add_argument('--bin', required=True)
    ap.add_argument('--build', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--scale', type=float, default=1.0)
    ap.add_argument('--only', default='')
    ap.add_argument('--seed', type=int, default=None)
    args = ap.parse_args(argv[1:])
    if args.rounds < 1 or args.scale <= 0:
        ap.error('--rounds must be >= 1 and --scale > 0')
    workloads = [w for w in WORKLOADS if not args.only or w[0] in args.only.split(',')]
    if not workloads:
        ap.error(f'--only: no such workload; they are {", ".join(w[0] for w in WORKLOADS)}')
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    load0 = os.getloadavg()[0]
    cs = contenders(args)
    log = lambda s: print(f'loops.py: {s}', file=sys.stderr, flush=True)
    try:
        results = run(cs, workloads, args.rounds, args.scale, seed, log)
    except Failure as e:
        print(f'loops.py: FAILED: {e}', file=sys.stderr)
        return 1
    write(args, cs, workloads, results, header(args, seed, load0))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
