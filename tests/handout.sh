#!/bin/sh
# handout.sh NN [OUT] -- a handout of chapter NN's exercises for students:
# OUT (default $BUILD/handout/handout-NN-slug.tar.gz) holds, under
# handout-NN-slug/,
#   code/NN-slug/            the stage's program and its exercise starters
#                            (no exercises/answers/)
#   tests/NN-slug/exercises/ the exercises' tests, and what they read
#   tests/support/ tests/lib.sh tests/exercise.sh tests/summary.sh
#   chapter/NN-slug.md       the chapter, its includes resolved (pandoc)
#   chapter/NN-slug.html     the same as one HTML page
#   Makefile README.md       `make test`, `make test EX=K-name`
# and no answers: tests/handout-verify.py proves it (no answers/ folder, no
# answer file, no line of an answer's own text, no answer's predicted output)
# before the archive is written; a leak is an error and no archive is left.
#   handout.sh --test   builds chapter 04's handout, unpacks it in an empty
#                       folder, and runs its own commands there: the stage
#                       builds, every starter compiles and fails its test
#                       (run by make check).
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
PYTHON=${PYTHON:-/usr/bin/python3}

if [ "${1:-}" = --test ]; then
    here=$(pwd)
    tmp=$(mktemp -d) || exit 2
    trap 'rm -rf "$tmp"' EXIT
    tests/handout.sh 04 "$tmp/h.tar.gz" || exit 1
    mkdir "$tmp/empty" && cd "$tmp/empty" || exit 2
    tar xzf ../h.tar.gz || exit 1
    cd handout-04-* || exit 1
    ls -R . | grep -n answers && { echo "an answers entry in the archive"; exit 1; }
    # The verifier sees a leak: one line of an answer's own part, pasted
    # into a copy of the chapter.
    mkdir -p "$tmp/leaky" && cp -R . "$tmp/leaky/" &&
    grep -m 1 'loop_call_later' "$here/code/04-snapshot/exercises/answers/2-tasks/task.c" \
        >>"$tmp/leaky/chapter/04-snapshot.md" || exit 2
    (cd "$here" && "$PYTHON" tests/handout-verify.py 04-snapshot "$tmp/leaky") >"$tmp/leaky.log"
    [ $? -eq 1 ] && grep -q 'ANSWER LEAK: chapter/04-snapshot.md: holds the line' "$tmp/leaky.log" ||
        { cat "$tmp/leaky.log"; echo "handout-verify.py missed a pasted answer line"; exit 1; }
    # A fresh shell: nothing from this repository's environment.
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp" make -s >build.log 2>&1 ||
        { cat build.log; echo "the handout's make failed"; exit 1; }
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp" make -s test >test.log 2>&1
    rc=$?
    cat test.log
    [ $rc -ne 0 ] || { echo "make test passed on the starters"; exit 1; }
    n=$(ls tests/04-*/exercises/*.c | wc -l)
    [ "$(grep -c '^FAIL: .* (not solved yet)$' test.log)" -eq "$n" ] ||
        { echo "expected each of the $n starters to compile and fail its test"; exit 1; }
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$tmp" EX=2-tasks make -s test >one.log 2>&1
    [ "$(grep -c '^FAIL: ' one.log)" -eq 1 ] && grep -q '^FAIL: 2-tasks (not solved yet)$' one.log ||
        { cat one.log; echo "make test EX=2-tasks did not run that exercise alone"; exit 1; }
    echo "handout of chapter 04: builds alone; its $n starters compile and fail"
    exit 0
fi

ch=${1:-}
[ -n "$ch" ] || { echo "usage: make handout CH=NN [OUT=file.tar.gz]" >&2; exit 2; }
stage=$(cd code && ls -d "$ch"-* 2>/dev/null | head -n 1)
[ -n "$stage" ] || { echo "handout.sh: no chapter '$ch' under code/ (try CH=04)" >&2; exit 2; }
[ -n "$(exercises "$stage")" ] || { echo "handout.sh: chapter $stage has no exercises" >&2; exit 2; }
out=${2:-$BUILD/handout/handout-$stage.tar.gz}
case $out in */) out=${out}handout-$stage.tar.gz ;; esac
[ -d "$out" ] && out=$out/handout-$stage.tar.gz
name=handout-$stage
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
top=$tmp/$name
mkdir -p "$top/code" "$top/tests/$stage" "$top/chapter"

# The stage, without its answers and without build products.
cp -R "code/$stage" "$top/code/" || exit 2
rm -rf "$top/code/$stage/exercises/answers"
cp -R "tests/$stage/exercises" "$top/tests/$stage/" || exit 2
cp -R tests/support "$top/tests/" && cp tests/lib.sh tests/exercise.sh tests/summary.sh "$top/tests/" || exit 2
# What the tests read besides their own folder: the pinned CPython traces of
# conformance scenarios (chapter 03's exercise 2 checks its driver on them).
for t in tests/$stage/exercises/*.c; do
    grep -q '"tests/conformance/scenarios/%s' "$t" || continue
    mkdir -p "$top/tests/conformance/scenarios"
    # the names are in the test's `pinned` array
    for n in $(sed -n '/pinned\[\] = {/,/};/p' "$t" | grep -o '"[^"]*"' | tr -d '"'); do
        cp tests/conformance/scenarios/"$n".scn tests/conformance/scenarios/"$n".trace \
            "$top/tests/conformance/scenarios/" || exit 2
    done
done

# The chapter: its includes resolved, as Markdown and as one HTML page.
md=chapters/$stage.md
if [ -f "$md" ] && command -v pandoc >/dev/null; then
    pandoc --from=markdown --metadata-file=book/metadata.yaml --lua-filter=book/filters/include.lua \
        --to=markdown -o "$top/chapter/$stage.md" "$md" &&
    pandoc --from=markdown --metadata-file=book/metadata.yaml --lua-filter=book/filters/include.lua \
        --to=html5 --standalone --toc --metadata title="$(sed -n 's/^# *//p' "$md" | head -n 1)" \
        -o "$top/chapter/$stage.html" "$md" || { echo "handout.sh: pandoc failed on $md" >&2; exit 1; }
elif [ -f "$md" ]; then
    cp "$md" "$top/chapter/$stage.md"  # without pandoc: the source, includes unresolved
fi

list=$(exercises "$stage" | tr '\n' ' ')
cat >"$top/Makefile" <<EOF
# Chapter $ch's exercises, a handout: see README.md.
#   make                   build the chapter's program (into build/$stage/)
#   make test              every exercise's test against your files
#   make test EX=K-name    one exercise's test (exercises: $list)
all:
	@\$(MAKE) -s -C code/$stage O=\$(CURDIR)/build/$stage
test:
	@BUILD=build tests/exercise.sh $ch
.PHONY: all test
EOF
cat >"$top/README.md" <<EOF
# Chapter $ch: exercises

The chapter is \`chapter/$stage.html\` (or \`chapter/$stage.md\`); its
program is \`code/$stage/\`, complete as it stands at the chapter's end;
its exercises are at the end of the chapter.

For each exercise, edit the files of its folder \`code/$stage/exercises/K-name/\`
(they are copies of the program's files, or new files, with the exercise's
part left to you: look for TODO), then run its test:

\`\`\`sh
make                # builds the chapter's program once (needs gcc, make, pkg-config, check)
make test EX=NAME   # one exercise, NAME one of: $list
make test           # every exercise; the last line says "N passed, N failed"
\`\`\`

A test prints its first failing check with what it expected; each test file
\`tests/$stage/exercises/NAME.c\` says, at its top, what it checks. Every
exercise fails until you solve it. On Debian or Ubuntu:
\`sudo apt-get install -y build-essential pkg-config check\`.

To hand in: the folders \`code/$stage/exercises/K-name/\` you changed, one
folder per exercise, inside a folder with your name.
EOF

# Prove there is no answer in it, then write the archive.
"$PYTHON" tests/handout-verify.py "$stage" "$top" || { echo "handout.sh: no archive written" >&2; exit 1; }
mkdir -p "$(dirname "$out")" || exit 2
(cd "$tmp" && tar --owner=0 --group=0 --sort=name -czf handout.tar.gz "$name") && mv "$tmp/handout.tar.gz" "$out" || exit 1
echo "$out: chapter $ch's handout ($(tar tzf "$out" | grep -vc '/$') files), no answers in it"
