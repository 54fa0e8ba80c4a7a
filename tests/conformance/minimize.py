#!/usr/bin/python3
"""Shrink a scenario on which a C trace program and CPython disagree.

    minimize.py TRACE_BINARY STAGE SCENARIO

Deletes lines (a line together with its indented children) for as long as
the two still disagree and CPython still accepts the scenario, then prints
the smallest scenario found, followed by both traces as comments.  Greedy
one-pass-at-a-time deletion (ddmin with chunk size 1): small enough for
scenarios of at most 40 lines.
"""
import io
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpython_trace  # noqa: E402


def cpython(data, stage):
    out, err = io.StringIO(), io.BytesIO()
    rc = cpython_trace.run_one("scenario.scn", data, stage, out, err)
    return rc, out.getvalue(), err.getvalue().decode()


def c_trace(binary, data):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "scenario.scn")
        with open(path, "wb") as f:
            f.write(data)
        p = subprocess.run([binary, "scenario.scn"], cwd=d, capture_output=True, timeout=60)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def blocks(lines):
    """(start, end) of every line with its children."""
    def indent(s):
        return len(s) - len(s.lstrip(" "))
    out = []
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            out.append((i, i + 1))
            continue
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or indent(lines[j]) > indent(line)):
            j += 1
        out.append((i, j))
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, stage = os.path.abspath(sys.argv[1]), int(sys.argv[2])
    lines = open(sys.argv[3], "rb").read().decode().split("\n")

    def differs(ls):
        data = "\n".join(ls).encode()
        ref = cpython(data, stage)
        return ref[0] == 0 and ref != c_trace(binary, data)

    if not differs(lines):
        sys.exit("minimize.py: the two agree on %s (or CPython rejects it)" % sys.argv[3])
    shrunk = True
    while shrunk:
        shrunk = False
        for start, end in reversed(blocks(lines)):
            trial = lines[:start] + lines[end:]
            if differs(trial):
                lines, shrunk = trial, True
                break
    data = "\n".join(lines).encode()
    print("\n".join(lines).rstrip("\n"))
    for who, (rc, out, err) in (("CPython", cpython(data, stage)), ("C", c_trace(binary, data))):
        print("# --- %s (exit %d):" % (who, rc))
        for line in (out + err).splitlines():
            print("#   " + line)


if __name__ == "__main__":
    main()
