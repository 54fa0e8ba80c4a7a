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
