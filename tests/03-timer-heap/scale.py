#!/usr/bin/python3
"""scale.py TRACE [N] -- the trace program takes time linear in the size of its scenario.

Writes two scenarios of the same shape, of N and 2N lines (N = 100000), runs
TRACE on each and checks that the larger takes less than three times as long
as the smaller: linear time gives a ratio near 2, a search through every label
defined so far (what the parser once did for each new label) gives 4.  If the
ratio is 3 or more, both run again, up to three times, and each keeps its
least time, so that one slow run on a busy machine does not fail the test.  A ratio measured in one run, not a time limit,
so the speed of the machine cancels out; CPU time rather than wall time, so
that other processes on a loaded machine hardly move it.

The shape has every kind of line the stage knows: soon (with a child), later,
at, io bytes at distinct times (each a tick of its own, so a wait that scans
every byte not yet delivered would be quadratic too), cancel from stage 05
on, threadsafe from stage 06 on.  What it prints (each run's status and the
length of its trace, and the verdict) is pinned by scale.out beside scale.cmd.

scale.cmd runs it through `env`: under `make check-valgrind` the test driver
puts valgrind in front of the command, and valgrind does not follow the exec
of Python by `env` (this test is about time, not memory; the trace program is
checked under valgrind by every other pinned trace).
"""

import os
import resource
import subprocess
import sys
import tempfile

RATIO = 3.0


def scenario(n, stage):
    """n lines: blocks of one line of each kind, the last block cut short."""
    lines = []
    i = 0
    while len(lines) < n:
        lines.append("soon s%d" % i)
        lines.append("  later 0 c%d" % i)
        lines.append("later %g l%d" % ((i % 50) / 1000, i))
        lines.append("at %g a%d" % (0.5 + (i % 50) / 1000, i))
        lines.append("io %.6f r%d" % (i * 1e-6, i % 10))
        if stage >= 5:
            lines.append("cancel l%d" % (i // 2))
        if stage >= 6:
            lines.append("threadsafe t%d" % i)
        i += 1
    return "".join(line + "\n" for line in lines[:n])


def cpu_time(trace, path, out_path):
    """Run trace on path (stdout to out_path); its exit status and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out_path, "wb") as out:
        rc = subprocess.call([trace, path], stdout=out)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return rc, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write("usage: scale.py TRACE [N]\n")
        return 2
    trace = os.path.abspath(argv[1])
    n = int(argv[2]) if len(argv) == 3 else 100000
    stage = int(subprocess.check_output([trace, "--stage-info"]))
    sizes = (n, 2 * n)
    times = {}
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            with open(os.path.join(tmp, "scale-%d.scn" % size), "w") as f:
                f.write(scenario(size, stage))
        for _ in range(3):
            for size in sizes:
                path = os.path.join(tmp, "scale-%d.scn" % size)
                out = os.path.join(tmp, "scale-%d.trace" % size)
                rc, t = cpu_time(trace, path, out)
                times[size] = min(times.get(size, t), t)
                with open(out, "rb") as f:
                    report[size] = (rc, f.read().count(b"\n"))
            if times[2 * n] < RATIO * max(times[n], 1e-3):
                break
    if os.environ.get("SCALE_VERBOSE"):
        sys.stderr.write("CPU time: %.3f s for %d lines, %.3f s for %d: ratio %.2f\n"
                         % (times[n], n, times[2 * n], 2 * n, times[2 * n] / max(times[n], 1e-3)))
    ok = True
    for size in sizes:
        rc, nlines = report[size]
        print("%d lines: exit status %d, %d lines of trace" % (size, rc, nlines))
        ok = ok and rc == 0
    small, large = times[n], times[2 * n]
    if large < RATIO * max(small, 1e-3):
        print("twice the lines, less than %g times the time: yes" % RATIO)
    else:
        ok = False
        print("twice the lines, less than %g times the time: NO (%.3f s against %.3f s)"
              % (RATIO, large, small))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
