#!/usr/bin/python3
"""Write random, valid scenarios for the conformance check.

    gen_scenarios.py --seed S --count N --out DIR [--stage N]

Writes DIR/s0000.scn ... DIR/s{N-1}.scn.  File i depends only on (S, i, stage),
so `--count 10` writes the first ten files of `--count 1000`.  Stages below 05
get no `cancel` lines; stage 03 gets no nested `soon` (it has no snapshot yet,
so a nested soon runs in the same tick there: chapter 04's lesson).  Every scenario is small (5-40 action lines, some with
30+ equal deadlines) and ends after a few ticks of virtual time.

The mix is chosen to hit what makes conformance hard: exact ties between
deadlines (heapq is not FIFO), sums that round (0.1 + 0.2 != 0.3), deadlines
closer than the clock resolution (1e-09), zero and negative delays, io bytes
that arrive exactly on a timer's deadline, children scheduled from callbacks,
stop in the middle of a tick, and cancels of timers that already ran.

Stage 09 on, three scenarios in four are task programs (TaskGen): tasks
creating tasks, coro calls 1-3 deep, futures set, failed and cancelled from
callbacks and from other tasks, cancels racing completions, wait_for
timeouts equal to the sleeps they wait for, gathers of failing children
(both forms), catch, and run_until / main at the end.  Delays come from a
few values (0, 0.1, 0.2, 0.3), so task wake-ups and timers tie on purpose.
The fourth scenario is drawn as for stage 08.
"""

import argparse
import os
import random
import sys

# Numbers whose sums round interestingly, exact ties, sub-resolution gaps.
DELAYS = ["0", "0", "0", "-0", "-1", "-0.5", "-2", "0.1", "0.2", "0.3", "0.1", "0.3",
          "0.05", "0.03", "0.001", "1e-9", "5e-10", "2e-9", "1", "1", "1.0", "1.5", "2",
          "0.7", "0.6", "3", "10", "0.25", "1e-3", "100"]
WHENS = ["0", "0.1", "0.2", "0.3", "0.3", "0.30000000000000004", "0.6", "1", "1", "1.0",
         "1.000000001", "1.0000000005", "0.5", "2", "-1", "0.05", "0.03", "1.5", "3",
         "0.9999999999", "10"]
IO_WHENS = ["0", "0.03", "0.05", "0.1", "0.3", "0.30000000000000004", "1", "1", "1.0",
            "2", "0.5", "-1", "1.000000001", "0.6"]
NAMES = ["a", "b", "c", "t", "x", "cb", "timer", "later_", "soon_", "Tx"]
# Stage 08: how long a callback blocks (around slow_callback_duration, 0.1 s,
# and on either side of it by one ulp), when a signal arrives.
BLOCKS = ["0", "0.05", "0.1", "0.1", "0.09999999999999999", "0.10000000000000002",
          "0.15", "0.3", "1", "0.099", "2"]
SIGNAL_WHENS = ["0", "0.1", "0.3", "1", "1", "1.0", "2", "0.5", "3", "-1", "1.000000001"]


class Gen:
    def __init__(self, rng, stage):
        self.r = rng
        self.stage = stage
        self.n = 0
        self.timer_labels = []
        self.lines = 0
        self.allow_stop = rng.random() < 0.2   # stop ends a scenario early: keep it rare

    def label(self):
        self.n += 1
        r = self.r
        if r.random() < 0.02:             # the longest legal label
            base = "L%d_" % self.n
            return base + "x" * (32 - len(base))
        return "%s%d" % (r.choice(NAMES), self.n)

    def timer(self, depth, tie=None):
        """One soon/later/at line as a tree: (text, [children])."""
        r = self.r
        lab = self.label()
        self.timer_labels.append(lab)
        self.lines += 1
        if tie is not None:
            text = "%s %s %s" % (tie[0], tie[1], lab)
        else:
            k = r.random()
            # Stage 03 has no snapshot yet: a nested soon runs in the same
            # tick there, which is chapter 04's lesson, not a mismatch.
            if k < 0.3 and (depth == 0 or self.stage >= 4):
                text = "soon %s" % lab
                # Stage 06 on: call_soon_threadsafe from the loop's own thread
                # (the only draw stages below 06 never make, so their files stay).
                if self.stage >= 6 and r.random() < 0.4:
                    text = "threadsafe %s" % lab
            elif k < 0.7:
                text = "later %s %s" % (r.choice(DELAYS), lab)
            else:
                text = "at %s %s" % (r.choice(WHENS), lab)
        kids = self.children(depth + 1)
        return (text, kids)

    def children(self, depth):
        r = self.r
        kids = []
        if depth > 3 or self.lines >= 38 or r.random() < 0.55:
            return kids
        for _ in range(r.randint(1, 3)):
            if self.lines >= 38:
                break
            if self.stage >= 8 and r.random() < 0.3:   # the loop's life (chapter 08)
                kids.append(self.life(depth))
                continue
            k = r.random()
            if k < 0.04 and self.allow_stop:
                kids.append(("stop", []))
                self.lines += 1
            elif k < 0.12 and self.stage >= 5:
                kids.append(("cancel", []))    # label filled in later
                self.lines += 1
            else:
                kids.append(self.timer(depth))
        return kids

    def life(self, depth):
        """Stage 08, inside a callback: fail, escape, block, debug mode, a
        handler, run / close (refused while running), signal handlers."""
        r = self.r
        self.lines += 1
        k = r.random()
        if k < 0.22:
            return ("raise", [])
        if k < 0.27:
            return ("interrupt", [])
        if k < 0.52:
            return ("block %s" % r.choice(BLOCKS), [])
        if k < 0.60:
            return ("debug %s" % r.choice(["0", "1", "1"]), [])
        if k < 0.68:
            return ("handler %s" % r.choice(["default", "custom", "failing"]), [])
        if k < 0.72:
            return ("run", [])
        if k < 0.74:
            return ("close", [])
        if k < 0.82:
            return ("sigremove", [])
        lab = self.label()
        self.timer_labels.append(lab)
        return ("sighandler %s" % lab, self.children(depth + 1))

    def top_life(self):
        """Stage 08, at top level: signals arriving, handlers, debug mode, a
        run in the middle of the setup, rarely a close."""
        r = self.r
        self.lines += 1
        k = r.random()
        if k < 0.35:
            return ("signal %s" % r.choice(SIGNAL_WHENS), [])
        if k < 0.6:
            lab = self.label()
            self.timer_labels.append(lab)
            return ("sighandler %s" % lab, self.children(1))
        if k < 0.72:
            return ("debug %s" % r.choice(["0", "1"]), [])
        if k < 0.84:
            return ("handler %s" % r.choice(["default", "custom", "failing"]), [])
        if k < 0.97:
            return ("run", [])
        return ("close", [])

    def scenario(self):
        r = self.r
        if self.stage >= 9 and r.random() < 0.75:
            return TaskGen(r).scenario()
        items = []                             # top-level trees, in order
        io = []                                # io labels
        profile = r.random()
        if profile >= 0.9 and self.stage >= 5:
            return self.render(self.rebuild())
        target = r.randint(5, 40)
        if profile < 0.15:                     # many equal deadlines
            target = r.randint(30, 40)
            when = r.choice(["1", "1.0", "0.3", "0", "2"])
            for i in range(target - r.randint(0, 4)):
                if r.random() < 0.8:
                    tie = ("at", when) if r.random() < 0.6 else ("later", when)
                else:
                    tie = None
                items.append(self.timer(3 if r.random() < 0.8 else 1, tie))
                if self.lines >= target:
                    break
        while self.lines < target:
            if self.stage >= 8 and r.random() < 0.15:
                items.append(self.top_life())
                continue
            k = r.random()
            if k < 0.15:
                if io and r.random() < 0.4:
                    lab = r.choice(io)         # a repeated io line: no children
                    items.append(("io %s %s" % (r.choice(IO_WHENS), lab), []))
                    self.lines += 1
                elif len(io) < 4:
                    lab = "io%d" % len(io)
                    io.append(lab)
                    self.lines += 1
                    items.append(("io %s %s" % (r.choice(IO_WHENS), lab), self.children(1)))
            elif k < 0.17 and self.allow_stop:
                items.append(("stop", []))
                self.lines += 1
            elif k < 0.22 and self.stage >= 5:
                items.append(("cancel", []))
                self.lines += 1
            else:
                items.append(self.timer(0))
        return self.render(items)

    def rebuild(self):
        """Stage 05 on, one scenario in ten: 95-170 timers on a few equal
        deadlines, 30-90 % of them cancelled (before the run, from a callback
        in the first tick, or from a timer that fires later), so that step 1
        of a tick often rebuilds the heap (more than 100 scheduled, more than
        half cancelled) and heapify's order of the ties shows in the trace."""
        r = self.r
        whens = r.sample(["0.5", "1", "1.0", "2", "3", "0.3", "10", "0"], r.randint(1, 3))
        items, labels = [], []
        for _ in range(r.randint(95, 170)):
            lab = self.label()
            self.timer_labels.append(lab)
            labels.append(lab)
            kids = []
            if r.random() < 0.05:              # a callback that schedules one more tie
                kid = self.label()
                self.timer_labels.append(kid)
                kids.append(("later %s %s" % (r.choice(whens), kid), []))
            verb = r.choice(["later", "at", "at"])
            items.append(("%s %s %s" % (verb, r.choice(whens), lab), kids))
        frac = r.uniform(0.3, 0.9)
        cancels = [("cancel %s" % lab, []) for lab in labels if r.random() < frac]
        r.shuffle(cancels)
        cut = r.randint(0, len(cancels))
        items += cancels[:cut]                 # before the run
        rest = cancels[cut:]
        if rest:
            if r.random() < 0.5:               # in the first tick
                items.append(("soon %s" % self.label(), rest))
            else:                              # from a timer, later on
                items.append(("later %s %s" % (r.choice(["0.1", "0.4", "1"]), self.label()), rest))
        return items

    def render(self, items):
        r = self.r
        out = []
        if r.random() < 0.3:
            out.append("# generated scenario")
        step = r.choice([2, 2, 4, 1, 3])

        def emit(tree, depth):
            text, kids = tree
            if text == "cancel":
                text = "cancel %s" % r.choice(self.timer_labels) if self.timer_labels else "stop"
            line = " " * (step * depth) + text
            if r.random() < 0.05:
                line += "   # a comment"
            out.append(line)
            if r.random() < 0.03:
                out.append("")
            for kid in kids:
                emit(kid, depth + 1)

        for tree in items:
            emit(tree, 0)
        return "\n".join(out) + "\n"


# Stage 09: delays of sleeps, wait_for timeouts and timers, so that they tie.
TASK_DELAYS = ["0", "0", "0.1", "0.1", "0.2", "0.2", "0.3", "0.1", "0.5", "1"]


class TaskGen:
    """A random task program (stage 09): a few coros, futures and tasks, the
    callbacks that set, fail and cancel them, and a run at the end."""

    MAX_LINES = 45

    def __init__(self, rng):
        self.r = rng
        self.n = 0
        self.lines = 0
        self.coros = []            # coro labels, in order of definition
        self.futures = []          # future labels
        self.tasks = []            # task labels
        # Tasks whose body is written already: the only ones a body may wait
        # for.  A task never waits for itself or for a task that waits for
        # it, so there are no cycles of waits (cancelling one would recurse
        # through gather.cancel and task.cancel without end, in CPython too).
        self.done = []
        self.timers = []           # soon / later / at labels
        self.values = ["v", "w", "ok", "x1", "res"]

    def label(self, prefix):
        self.n += 1
        return "%s%d" % (prefix, self.n)

    def delay(self):
        return self.r.choice(TASK_DELAYS)

    def awaitable(self, coros):
        """A label to await, gather or wait for: a future, a task or a coro."""
        r = self.r
        pool = [("f", self.futures), ("t", self.done), ("c", coros)]
        pool = [p for p in pool if p[1]]
        if not pool:
            return None
        return r.choice(r.choice(pool)[1])

    def body(self, depth, coros, owner_is_coro=False):
        """The lines of a body: (text, [children]) trees.  coros: the coro
        labels it may use (defined before it: no recursion)."""
        r = self.r
        out = []
        for _ in range(r.randint(0, 5)):
            if self.lines >= self.MAX_LINES:
                break
            self.lines += 1
            k = r.random()
            if k < 0.22:
                out.append(("sleep %s" % self.delay(), []))
            elif k < 0.34 and (self.futures or self.done):
                out.append(("await %s" % r.choice(self.futures + self.done), []))
            elif k < 0.42 and coros:
                out.append(("call %s" % r.choice(coros), []))
            elif k < 0.52:
                args = [self.awaitable(coros) for _ in range(r.randint(1, 3))]
                args = [a for a in args if a]
                if args:
                    verb = r.choice(["gather", "gather_exceptions"])
                    out.append(("%s %s" % (verb, " ".join(args)), []))
                else:
                    out.append(("sleep 0", []))
            elif k < 0.60:
                x = self.awaitable(coros)
                out.append(("wait_for %s %s" % (x, self.delay()) if x else "sleep 0.1", []))
            elif k < 0.66:
                out.append(("catch", []))
            elif k < 0.70:
                out.append(("raise", []))
            elif k < 0.74:
                out.append(("return %s" % r.choice(self.values), []))
            elif k < 0.80 and depth < 2:
                lab = self.label("t")
                self.tasks.append(lab)
                out.append(("task %s" % lab, self.body(depth + 1, coros)))
                self.done.append(lab)
            elif k < 0.84:
                lab = self.label("f")
                self.futures.append(lab)
                out.append(("future %s" % lab, []))
            elif k < 0.98:
                out.append(self.poke(depth))
            else:
                out.append(("stop", []))
        return out

    def poke(self, depth):
        """A line that acts on futures and tasks: set, fail, cancel, or a
        callback (soon / later / at) that does, at a time that ties."""
        r = self.r
        k = r.random()
        if k < 0.25 and self.futures:
            return ("set %s %s" % (r.choice(self.futures), r.choice(self.values)), [])
        if k < 0.35 and self.futures:
            return ("fail %s" % r.choice(self.futures), [])
        if k < 0.55 and (self.futures or self.tasks):
            return ("cancel %s" % r.choice(self.futures + self.tasks), [])
        lab = self.label(r.choice(["cb", "tm"]))
        self.timers.append(lab)
        verb = r.random()
        if verb < 0.1:
            text = "threadsafe %s" % lab
        elif verb < 0.3:
            text = "soon %s" % lab
        elif verb < 0.8:
            text = "later %s %s" % (self.delay(), lab)
        else:
            text = "at %s %s" % (self.delay(), lab)
        kids = []
        for _ in range(r.randint(1, 2)):
            if self.lines >= self.MAX_LINES:
                break
            self.lines += 1
            q = r.random()
            if q < 0.1:
                kids.append(("raise", []))
                break
            if q < 0.13:                  # escapes run_until_complete / asyncio.run
                kids.append(("interrupt", []))
                break
            if q < 0.18:                  # the callback runs a while (debug mode names it)
                kids.append(("block %s" % r.choice(["0.05", "0.1", "0.2"]), []))
                continue
            if q < 0.2 and depth < 2:
                t = self.label("t")
                self.tasks.append(t)
                kids.append(("task %s" % t, self.body(depth + 1, self.coros)))
                self.done.append(t)
            else:
                kids.append(self.poke(depth + 1) if depth < 2 else ("stop", []))
        return (text, kids)

    def scenario(self):
        r = self.r
        items = []
        if r.random() < 0.2:
            items.append(("handler %s" % r.choice(["default", "custom", "failing"]), []))
        if r.random() < 0.1:
            items.append(("debug 1", []))
        for _ in range(r.randint(0, 3)):               # coros: each may use the earlier ones
            lab = self.label("c")
            self.lines += 1
            items.append(("coro %s" % lab, self.body(1, list(self.coros), True)))
            self.coros.append(lab)
        for _ in range(r.randint(0, 3)):
            lab = self.label("f")
            self.futures.append(lab)
            self.lines += 1
            items.append(("future %s" % lab, []))
        for _ in range(r.randint(1, 4)):
            if r.random() < 0.3 and self.lines < self.MAX_LINES:
                self.lines += 1
                items.append(self.poke(0))
            lab = self.label("t")
            self.tasks.append(lab)
            self.lines += 1
            items.append(("task %s" % lab, self.body(1, self.coros)))
            self.done.append(lab)
        for _ in range(r.randint(0, 3)):
            if self.lines < self.MAX_LINES:
                self.lines += 1
                items.append(self.poke(0))
        k = r.random()
        targets = self.coros + self.futures + self.tasks
        if r.random() < 0.04:                           # the runs below are refused
            items.append(("close", []))
        if k < 0.35 and self.coros:
            items.append(("main %s" % r.choice(self.coros), []))
        elif k < 0.65 and targets:
            items.append(("run_until %s" % r.choice(targets), []))
            if r.random() < 0.3 and self.coros:
                items.append(("main %s" % r.choice(self.coros), []))
        elif k < 0.75:
            items.append(("run", []))
            if targets and r.random() < 0.5:
                items.append(("run_until %s" % r.choice(targets), []))
        return self.render(items)

    def render(self, items):
        r = self.r
        out = ["# generated task program"] if r.random() < 0.3 else []
        step = r.choice([2, 2, 4, 1, 3])

        def emit(tree, depth):
            text, kids = tree
            out.append(" " * (step * depth) + text)
            for kid in kids:
                emit(kid, depth + 1)

        for tree in items:
            emit(tree, 0)
        return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--stage", type=int, default=99)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.count):
        rng = random.Random("%d:%d:%d" % (a.seed, a.stage, i))
        text = Gen(rng, a.stage).scenario()
        with open(os.path.join(a.out, "s%04d.scn" % i), "w", encoding="ascii", newline="\n") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
