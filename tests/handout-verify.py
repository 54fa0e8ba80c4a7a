#!/usr/bin/env python3
"""handout-verify.py STAGE TREE -- prove that a handout tree holds no answer.

Run by tests/handout.sh before it writes the archive; exits 1 and names each
leak.  An answer leaks through
  - a path: any file or folder named answers (exercises/answers/,
    chapters/answers/), or any file equal to an answer file (unless that
    answer file is its starter's or its stage's file unchanged);
  - its text: a line of an answer's own part (inside its @exercise regions;
    the whole file when it is not a copy of a stage file) that is not also a
    line of the starter or of the stage, found as a line of any text file of
    the tree (HTML with its tags taken out); trivial lines (under 12
    characters without spaces, or only punctuation) do not count;
  - its output: the text of an answer region's string literals, put
    together (a predicted trace), or a section of an answer text file
    (predictions.txt's "== NAME" parts), found in any file of the tree.
"""
import html
import os
import re
import sys

MARK = re.compile(r"^\s*(?:/\*|//|#|\*)\s*@exercise\s+(begin|end)\s*(?:\*/)?\s*$")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def own_lines(path, stage_dir):
    """The lines of an answer file that are the answer's own."""
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    if not os.path.exists(os.path.join(stage_dir, os.path.basename(path))):
        return lines  # a new file: all of it is the answer
    out, inside = [], False
    for line in lines:
        m = MARK.match(line)
        if m:
            inside = m.group(1) == "begin"
        elif inside:
            out.append(line)
    return out


def norm(line):
    return " ".join(line.split())


def significant(line):
    s = norm(line)
    return len(s.replace(" ", "")) >= 12 and re.search(r"[A-Za-z0-9]", s) is not None


def unescape(s):
    return s.encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")


def tree_texts(tree):
    for dirpath, dirnames, files in os.walk(tree):
        for name in dirnames + files:
            if name == "answers":
                yield os.path.join(dirpath, name), None
        for name in files:
            p = os.path.join(dirpath, name)
            try:
                with open(p, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            if b"\0" in data:
                continue
            text = data.decode("utf-8", "replace")
            if name.endswith(".html"):
                text = html.unescape(re.sub(r"<[^>]*>", "", text))
            yield p, text


def main():
    stage, tree = sys.argv[1], sys.argv[2]
    stage_dir = os.path.join("code", stage)
    answers = os.path.join(stage_dir, "exercises", "answers")
    known = set()  # lines a student may see anyway: the stage's and the starters'
    for dirpath, _, files in os.walk(stage_dir):
        if dirpath.startswith(answers):
            continue
        for name in files:
            with open(os.path.join(dirpath, name), errors="replace") as f:
                known.update(norm(l) for l in f.read().splitlines())
    secrets, blocks, contents = {}, {}, {}
    for ex in sorted(os.listdir(answers)):
        for name in sorted(os.listdir(os.path.join(answers, ex))):
            path = os.path.join(answers, ex, name)
            with open(path, "rb") as f:
                data = f.read()
            # Equal to its starter or to the stage's file: not the answer's own.
            same = [os.path.join(stage_dir, "exercises", ex, name), os.path.join(stage_dir, name)]
            if not any(os.path.exists(o) and open(o, "rb").read() == data for o in same):
                contents[data] = path
            own = own_lines(path, stage_dir)
            for line in own:
                if significant(line) and norm(line) not in known:
                    secrets.setdefault(norm(line), path)
            literal = "".join(unescape(s) for l in own for s in STRING.findall(l))
            if len(literal) >= 40:
                blocks[literal] = path
            if not name.endswith((".c", ".h")):  # predictions.txt: "== NAME" sections
                block = []
                for line in own + ["=="]:
                    if line.startswith("=="):
                        text = "".join(l.rstrip() + "\n" for l in block)
                        if len(text) >= 40:
                            blocks[text] = path
                        block = []
                    elif line.strip() and not line.startswith("#"):
                        block.append(line)
    leaks = []
    for p, text in tree_texts(tree):
        rel = os.path.relpath(p, tree)
        if text is None:
            leaks.append("%s: a folder or file named answers" % rel)
            continue
        if text.encode() in contents:
            leaks.append("%s: a copy of %s" % (rel, contents[text.encode()]))
        for line in text.splitlines():
            n = norm(line)
            if n in secrets:
                leaks.append("%s: holds the line \"%s\" of %s" % (rel, n, secrets[n]))
        flat = text.replace("\r", "")
        for block, src in blocks.items():
            if block in flat or norm(block) in norm(flat):
                leaks.append("%s: holds the output predicted by %s" % (rel, src))
    for leak in leaks:
        print("ANSWER LEAK: " + leak)
    print("handout-verify: %d answer lines and %d predicted outputs looked for in %s: %d leaks"
          % (len(secrets), len(blocks), tree, len(leaks)))
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
