#!/bin/sh
# mutate.sh [NN | ID...] [--sample] -- make mutate [STAGE=NN]: plant each mutant of
# tests/mutants/NN-slug.txt (a plausible bug: file, exact original text,
# replacement, why) in a scratch copy of the repository, one at a time, run
# that stage's tests on it (tests/check.sh mutant NN: gcc only, 100 random
# scenarios instead of 500, a 60 s limit a test, stopping at the first FAIL),
# and print its fate: killed, and by which test, or SURVIVED.  A mutant marked
# "equivalent: REASON" in its catalogue cannot be observed by any test; it does
# not count, and it is an error if a test kills it after all.  First, the
# stage's copy without a mutant must pass (the control).  Ends with the
# kill rate of each stage, and fails if any mutant survived, or if an original
# text no longer occurs exactly once in its file (the catalogue is stale).
#   --sample   only the mutants marked "sample: yes" (make check runs them)
#   ID...      only those mutants, e.g. 05-head-pop-count (make mutate ID=...)
# MUTATE_N (default 100) random scenarios, MUTATE_TIME_LIMIT (default 60) s.
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
: "${SUITES:?run me through make (make mutate), which reads tests/suites.mk}"
sample=""; only=""; ids=""
for a; do
    case $a in
    --sample) sample=--sample ;;
    [0-9][0-9]) only=$a ;;
    [0-9][0-9]-*) ids="$ids $a"; only=${a%%-*} ;;
    *) echo "usage: tests/mutate.sh [NN | ID...] [--sample]" >&2; exit 2 ;;
    esac
done
export CONFORMANCE_N=${MUTATE_N:-100} CONFORMANCE_SEED=1
export TEST_TIME_LIMIT=${MUTATE_TIME_LIMIT:-60}
MUT="$PYTHON tests/mutants/mutants.py"
root=$BUILD/mutate
status=0 found=0
t_all=$(date +%s)
for cat in tests/mutants/${only:-[0-9][0-9]}-*.txt; do
    [ -f "$cat" ] || continue
    found=1
    st=$(basename "$cat" .txt); n=$(stage_num "$st")
    [ -d "code/$st" ] || { echo "mutate: $cat: no folder code/$st"; exit 2; }
    $MUT check "$cat" "code/$st" || { echo "mutate: $cat is stale: fix it"; exit 2; }
    killed=0 survived=0 equivalent=0
    # The control: unless only a sample or named mutants run, the copy
    # without a mutant must pass, or no kill would mean anything.
    if [ -z "$sample$ids" ]; then
        dir=$root/$st-control
        rm -rf "$dir"; mkdir -p "$dir/code"
        cp -R "code/$st" "$dir/code/" && cp -R tests "$dir/" || exit 2
        t0=$(date +%s)
        # Twice, if need be: one failure may be a flaky test.
        if ! (cd "$dir" && BUILD=build tests/check.sh mutant "$n") >"$dir/log" 2>&1 &&
           ! (cd "$dir" && BUILD=build tests/check.sh mutant "$n") >"$dir/log2" 2>&1; then
            echo "ERROR     $st fails its own tests without a mutant, twice: see $dir/log*;" \
                 "its mutants are not run"
            status=2
            continue
        fi
        [ -f "$dir/log2" ] && echo "control   $st failed once, passed again: $(sed -n 's/^FAIL: //p' "$dir/log" | head -n 1)"
        echo "control   $st without a mutant passes ($(( $(date +%s) - t0 )) s)"
        rm -rf "$dir"
    fi
    for id in ${ids:-$($MUT list "$cat" $sample)}; do
        dir=$root/$id
        rm -rf "$dir"; mkdir -p "$dir/code"
        cp -R "code/$st" "$dir/code/" && cp -R tests "$dir/" &&
            $MUT apply "$cat" "$id" "$dir/code/$st" || exit 2
        t0=$(date +%s)
        (cd "$dir" && BUILD=build tests/check.sh mutant "$n") >"$dir/log" 2>&1
        took=$(( $(date +%s) - t0 ))
        killer=$(sed -n 's/^FAIL: //p' "$dir/build/check/mutant-$n/results.txt" 2>/dev/null | head -n 1)
        equiv=$($MUT show "$cat" "$id" | sed -n 's/^equivalent: //p')
        if [ -n "$killer" ] && [ -n "$equiv" ]; then
            echo "KILLED, BUT MARKED EQUIVALENT: $id, by $killer ($took s): fix $cat"
            status=1
        elif [ -n "$killer" ]; then
            timed=""
            grep -q 'timed out after' "$dir/log" && timed=", timed out"
            echo "killed    $id  by: $killer ($took s$timed)"
            killed=$((killed + 1))
        elif ! tail -n 1 "$dir/log" | grep -q ' passed, 0 failed$'; then
            echo "ERROR     $id: its run stopped before its tests ended, and failed none: $dir/log"
            status=1
        elif [ -n "$equiv" ]; then
            echo "equivalent $id: $equiv"
            equivalent=$((equivalent + 1))
        else
            echo "SURVIVED  $id ($took s): $($MUT show "$cat" "$id" | sed -n 's/^why: //p')"
            echo "          its run: $dir/log"
            survived=$((survived + 1)); status=1
        fi
        # Keep the run of a survivor for a look; drop the rest (100 MB each).
        [ -n "$killer" ] && [ -z "${MUTATE_KEEP:-}" ] && rm -rf "$dir"
    done
    counted=$((killed + survived))
    [ $counted -gt 0 ] && echo "$st: $killed of $counted mutants killed ($(( 100 * killed / counted ))%), $equivalent equivalent"
done
[ $found -eq 1 ] || { echo "mutate: no catalogue tests/mutants/${only:-NN}-*.txt"; exit 2; }
echo "mutate: $(( $(date +%s) - t_all )) s"
exit $status
