#!/bin/sh
# exercise.sh NN [answers] -- build and run chapter NN's exercise tests (EX=K-name: one), against
# the starter files (they fail until you solve them) or the worked answers.
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
ch=${1:-}
[ -n "$ch" ] || { echo "usage: make exercise CH=NN [ANSWERS=1]   (e.g. CH=01)" >&2; exit 2; }
kind=starter
[ "${2:-}" = answers ] && kind=answer
stage=$(cd code && ls -d "$ch"-* 2>/dev/null | head -n 1)
[ -n "$stage" ] || { echo "exercise.sh: no chapter '$ch' under code/ (try CH=01)" >&2; exit 2; }
list=$(exercises "$stage")
[ -n "$list" ] || { echo "exercise.sh: chapter $stage has no exercises" >&2; exit 2; }
# EX=2-tasks: that exercise only.
if [ -n "${EX:-}" ]; then
    echo " $list " | tr '\n' ' ' | grep -q " $EX " ||
        { echo "exercise.sh: chapter $stage has no exercise '$EX' (it has:" $list")" >&2; exit 2; }
    list=$EX
fi
variant gcc
build_stage "$stage" || exit 2
export CHECK_RESULTS="$BUILD/check/exercise-$ch-$kind/results.txt" CHECK_LOGS="$BUILD/check/exercise-$ch-$kind/logs"
rm -rf "$BUILD/check/exercise-$ch-$kind"
mkdir -p "$(dirname "$CHECK_RESULTS")"
for ex in $list; do
    echo "== $stage: exercise $ex ($kind: code/$stage/exercises/$( [ $kind = answer ] && echo answers/)$ex/)"
    if build_exercise "$stage" "$ex" "$kind"; then
        # Not through record, so the student sees every assertion message;
        # under the same time limit (tests/lib.sh), so a loop that spins FAILs.
        timeout -k 5 "$(test_limit)" "$OUT/exercises/$stage/$kind/$ex"
        rc=$?
        if [ $rc -eq 0 ]; then
            echo "PASS: $ex" >>"$CHECK_RESULTS"; echo "PASS: $ex"
        elif [ $rc -eq 124 ]; then
            echo "FAIL: $ex" >>"$CHECK_RESULTS"; echo "FAIL: $ex (timed out after $(test_limit) s)"
        else
            echo "FAIL: $ex" >>"$CHECK_RESULTS"; echo "FAIL: $ex (not solved yet)"
        fi
    else
        echo "FAIL: $ex" >>"$CHECK_RESULTS"; echo "FAIL: $ex (does not compile)"
    fi
done
tests/summary.sh "$CHECK_RESULTS"
