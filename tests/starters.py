#!/usr/bin/env python3
"""starters.py check|sync [--rev=REV] [STAGE [EXERCISE]] -- keep exercise files equal to their stage.

An exercise's starter (code/NN-slug/exercises/K-name/) and its answer
(code/NN-slug/exercises/answers/K-name/) hold copies of stage files (a file
is a copy when code/NN-slug/ has a file of the same name) with the exercise's
part taken out or solved.  That part is marked, in the exercise's copy only,
by whole-line markers (a file may have several regions, never nested):

    /* @exercise begin */           (also  // @exercise begin  and  # @exercise begin)
    ...the starter's or the answer's own lines...
    /* @exercise end */

(inside a block comment, write the marker as a comment line: " * @exercise end").

Everything outside the regions must be the stage file's text, line for line.
Each region stands for the run of stage lines between the outside lines
around it.  Its place in the stage file is found like a patch's context:
the region starts right after the last lines before it (3 of them, more if 3
occur more than once) and ends right before the first lines after it (the
same), searched from the previous region's end; a region at the file's start
or end is anchored there.  Book markers (@region/@end) are ordinary lines
here: a copy has exactly the stage's markers outside its regions.

  check   (run by `make check`) prints, for every copy that differs from its
          stage outside its regions, the diff that `sync` would apply, and
          exits 1.
  sync    rewrites every copy from its stage file's current text, keeping its
          regions.  When the copy is as committed and matched its stage as of
          that commit, each region's place is carried from that stage to the
          current one through their diff (the region must sit between two
          lines the diff keeps side by side); otherwise it is found by
          context, as check does.  It refuses (and leaves the file alone)
          when it cannot place a region: the stage changed the lines right
          around it, or they are not in the stage any more, or occur more
          than once.  Then make those lines what the stage has now, by hand,
          and run it again.  It prints REVIEW and a diff for each region
          whose stage lines (those it replaces) changed since the copy was
          last committed: the region's text is kept as it is, and may need
          the same change by hand.  Review the result with `git diff` and
          `make exercise CH=NN [ANSWERS=1]`.

A copy without regions must equal its stage file.  With --rev=REV (e.g.
--rev=HEAD), check and sync take the stage files as committed in REV instead
of the working tree's (while the stages hold uncommitted edits).
STAGE is NN or NN-slug; EXERCISE is the folder's name (e.g. 1-poll); the
default is every exercise of every stage.  Developer command, e.g.
    tests/starters.py check
    tests/starters.py sync 06
"""
import difflib
import os
import re
import subprocess
import sys

MARKER = re.compile(r"^\s*(?:/\*|//|#|\*)\s*@exercise\s+(begin|end)\s*(?:\*/)?\s*$")
CONTEXT = 3


class Refused(Exception):
    pass


def parse(lines):
    """Split LINES into (outside, regions, marks): outside[0..n] are the
    chunks around the n regions, regions[i] a region's lines, marks[i] its
    (begin, end) marker lines."""
    outside, regions, marks = [[]], [], []
    current = None
    for no, line in enumerate(lines, 1):
        m = MARKER.match(line)
        if m is None:
            if "@exercise" in line:
                raise Refused("line %d: not a marker, though it says @exercise "
                              "(a marker is a whole line: /* @exercise begin */)" % no)
            (outside[-1] if current is None else current).append(line)
        elif m.group(1) == "begin":
            if current is not None:
                raise Refused("line %d: @exercise begin inside a region" % no)
            if regions and not outside[-1]:
                raise Refused("line %d: a region right after another one: "
                              "make them one region" % no)
            current, begin, begin_no = [], line, no
        else:
            if current is None:
                raise Refused("line %d: @exercise end without a begin" % no)
            regions.append(current)
            marks.append((begin, line, begin_no))
            outside.append([])
            current = None
    if current is not None:
        raise Refused("a region has no @exercise end")
    return outside, regions, marks


def occurrences(needle, hay, start):
    k = len(needle)
    return [p for p in range(start, len(hay) - k + 1) if hay[p:p + k] == needle]


def find(chunk, stage, start, tail, what):
    """Where CHUNK's last (TAIL) or first lines occur in STAGE from START on:
    the end of the match for a tail, its start for a head."""
    k = min(CONTEXT, len(chunk))
    while True:
        ctx = chunk[-k:] if tail else chunk[:k]
        found = occurrences(ctx, stage, start)
        if len(found) == 1:
            return found[0] + k if tail else found[0]
        if not found or k == len(chunk):
            shown = "".join("    | " + l for l in ctx)
            if not shown.endswith("\n"):
                shown += "\n"
            raise Refused("%s: these %d line(s) %s\n%s"
                          % (what, len(ctx),
                             "are not in the stage file where they should be"
                             if not found else
                             "occur %d times in the stage file: cannot tell "
                             "which is meant" % len(found), shown))
        k += 1


def place(copy, stage):
    """COPY's regions and where each goes in STAGE: (regions, marks, spans),
    spans[i] = (a, b), the stage lines region i replaces being stage[a:b]."""
    outside, regions, marks = parse(copy)
    n = len(regions)
    spans, cursor = [], 0
    for i in range(n):
        where = "region %d of %d (@exercise begin at line %d)" % (i + 1, n, marks[i][2])
        before, after = outside[i], outside[i + 1]
        a = 0 if i == 0 and not before else \
            find(before, stage, cursor, True, where + ", the lines before it")
        b = len(stage) if i == n - 1 and not after else \
            find(after, stage, a, False, where + ", the lines after it")
        spans.append((a, b))
        cursor = b
    return regions, marks, spans


def assemble(stage, regions, marks, spans):
    out, cursor = [], 0
    for region, mark, (a, b) in zip(regions, marks, spans):
        out += stage[cursor:a] + [mark[0]] + region + [mark[1]]
        cursor = b
    return out + stage[cursor:]


def synced(copy, stage):
    """The text COPY (lines) should have: STAGE's lines with each of COPY's
    regions put in its place; and the stage lines each region replaces."""
    regions, marks, spans = place(copy, stage)
    return assemble(stage, regions, marks, spans), [stage[a:b] for a, b in spans]


def carry(old, new, spans, marks):
    """The spans of regions placed in OLD, carried over to NEW through the
    diff between the two.  The line just before a region and the line just
    after it must be lines that the diff keeps (and, for a region that
    replaces no line, nothing may have been put between them); else Refused.
    The lines between them in NEW are what the region now replaces."""
    kept = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            kept.update(zip(range(i1, i2), range(j1, j2)))
    kept[-1], kept[len(old)] = -1, len(new)  # the file's two ends stay put

    def refuse(i, which, p):
        j = min(kept.get(q, len(new)) for q in range(p, len(old) + 1) if q in kept)
        near = difflib.unified_diff(old[max(p - 4, 0):p + 4], new[max(j - 4, 0):j + 4],
                                    "stage as then", "stage now", n=8)
        raise Refused("region %d of %d (@exercise begin at line %d): the stage changed "
                      "the lines %s it (since the copy's last commit); make the lines "
                      "around the region what the stage has now, by hand, and run sync "
                      "again.  Around there:\n%s"
                      % (i + 1, len(spans), marks[i][2], which,
                         "".join("    | " + l if l.endswith("\n") else "    | " + l + "\n"
                                 for l in near)))

    out = []
    for i, (a, b) in enumerate(spans):
        if a - 1 not in kept:
            refuse(i, "just before", a)
        if b not in kept:
            refuse(i, "just after", b)
        a2, b2 = kept[a - 1] + 1, kept[b]
        if a == b and a2 != b2:
            refuse(i, "at the place of", a)
        out.append((a2, b2))
    return out


def resync(copy, copy_path, stage_path, stage):
    """sync's text for COPY, and its REVIEW notes [(region number, diff)].
    If the copy is in sync with its stage as of the copy's last commit, its
    regions are carried from that stage to STAGE through their diff;
    otherwise (or without a commit) they are placed in STAGE by context."""
    base = subprocess.run(["git", "log", "-1", "--format=%H", "--", copy_path],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
    old = None
    if base:
        try:
            old = read(stage_path, base)
            regions, marks, old_spans = place(copy, old)
            if assemble(old, regions, marks, old_spans) != copy:
                old = None
        except (Refused, subprocess.CalledProcessError):
            old = None
    if old is not None:
        spans = carry(old, stage, old_spans, marks)
        olds = [old[a:b] for a, b in old_spans]
    else:
        regions, marks, spans = place(copy, stage)
        olds = None
        if base:  # the regions of the copy as committed, in the stage as then
            try:
                _, olds = synced(read(copy_path, base), read(stage_path, base))
            except (Refused, subprocess.CalledProcessError):
                pass
            if olds is not None and len(olds) != len(regions):
                olds = None
    news = [stage[a:b] for a, b in spans]
    if olds is None:
        notes = [(0, "    cannot tell whether the stage changed the lines its regions "
                  "replace: its regions, as of %s, do not fit %s as of then\n"
                  % (base[:12] if base else "its last commit", stage_path))]
    else:
        notes = [(i + 1, "".join(difflib.unified_diff(
                     olds[i], news[i], "%s as of %s" % (stage_path, base[:12]), stage_path)))
                 for i in range(len(news)) if olds[i] != news[i]]
    return assemble(stage, regions, marks, spans), notes


def read(path, rev=None):
    if rev:
        text = subprocess.run(["git", "show", "%s:%s" % (rev, path)], check=True,
                              stdout=subprocess.PIPE).stdout.decode("utf-8")
        return text.splitlines(keepends=True)
    with open(path, encoding="utf-8", newline="") as f:
        return f.read().splitlines(keepends=True)


def copies(root, stage_arg, ex_arg):
    """(copy, stage file) of every copy, in a stable order."""
    code = os.path.join(root, "code")
    stages = sorted(d for d in os.listdir(code) if re.match(r"\d\d-", d))
    if stage_arg:
        stages = [d for d in stages if d == stage_arg or d[:2] == stage_arg]
        if not stages:
            sys.exit("starters.py: no stage '%s' under code/" % stage_arg)
    result = []
    for st in stages:
        ex_root = os.path.join(code, st, "exercises")
        if not os.path.isdir(ex_root):
            continue
        dirs = [os.path.join(ex_root, e) for e in sorted(os.listdir(ex_root)) if e != "answers"]
        ans = os.path.join(ex_root, "answers")
        if os.path.isdir(ans):
            dirs += [os.path.join(ans, e) for e in sorted(os.listdir(ans))]
        if ex_arg:
            dirs = [d for d in dirs if os.path.basename(d) == ex_arg]
            if not dirs:
                sys.exit("starters.py: stage %s has no exercise '%s'" % (st, ex_arg))
        for d in dirs:
            if not os.path.isdir(d):
                continue
            for f in sorted(os.listdir(d)):
                s = os.path.join(code, st, f)
                if os.path.isfile(os.path.join(d, f)) and os.path.isfile(s):
                    result.append((os.path.join(d, f), s))
    return result


def main(argv):
    rev = None
    if len(argv) > 2 and argv[2].startswith("--rev="):
        rev = argv.pop(2)[len("--rev="):]
    if len(argv) < 2 or argv[1] not in ("check", "sync") or len(argv) > 4:
        print(__doc__.split("\n\n")[0] + "\n(see the header of tests/starters.py)", file=sys.stderr)
        return 2
    mode = argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    bad = review = 0
    failed = []
    pairs = copies(".", argv[2] if len(argv) > 2 else None, argv[3] if len(argv) > 3 else None)
    for copy_path, stage_path in pairs:
        copy_path, stage_path = os.path.normpath(copy_path), os.path.normpath(stage_path)
        copy, stage = read(copy_path), read(stage_path, rev)
        try:
            if mode == "check":
                want, _ = synced(copy, stage)
            else:
                want, notes = resync(copy, copy_path, stage_path, stage)
        except Refused as e:
            bad += 1
            failed.append(copy_path)
            print("%s: cannot place its @exercise regions in %s: %s"
                  % (copy_path, stage_path, e), end="" if str(e).endswith("\n") else "\n")
            if mode == "check":
                print("    (its whole diff from the stage file:)")
                sys.stdout.writelines(difflib.unified_diff(
                    stage, copy, stage_path, copy_path))
            continue
        if mode == "sync":
            for i, diff in notes:
                review += 1
                print("%s: REVIEW region %d: the stage changed the lines it replaces "
                      "since the copy's last commit; does the region need the same change?"
                      % (copy_path, i) if i else "%s: REVIEW:" % copy_path)
                sys.stdout.write(diff)
        if want == copy:
            continue
        if mode == "check":
            bad += 1
            failed.append(copy_path)
            print("%s: differs from %s outside its @exercise regions "
                  "(`tests/starters.py sync` would apply this diff):" % (copy_path, stage_path))
            sys.stdout.writelines(difflib.unified_diff(
                copy, want, copy_path, copy_path + " (synced)"))
        else:
            with open(copy_path, "w", encoding="utf-8", newline="") as f:
                f.writelines(want)
            print("synced %s from %s" % (copy_path, stage_path))
    if mode == "check" and not bad:
        print("%d copies of stage files match their stage outside their "
              "@exercise regions" % len(pairs))
    if bad:
        print("%d of %d copies %s:\n    %s" % (
            bad, len(pairs), "differ from their stage (run tests/starters.py sync)"
            if mode == "check" else "could not be synced (left as they were)",
            "\n    ".join(failed)))
    if review:
        print("%d region(s) to REVIEW (above): sync kept their text as it was" % review)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
