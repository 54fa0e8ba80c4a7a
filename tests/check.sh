#!/bin/sh
# check.sh MODE [NN] -- every test of every stage (or of stage NN only), in
# one of these modes:
#   all       (make check) gcc build: unit suites, pinned outputs, the
#             exercises (answers pass, starters fail), the book's filter test;
#             the clang build of every stage, warning-free
#   sanitize  (make check-sanitize) suites and pinned outputs under
#             ASan+UBSan on every stage, and under TSan on threaded stages
#   valgrind  (make check-valgrind) suites and pinned outputs under memcheck,
#             and the threaded stages' stress suite under helgrind
#   fuzz      (make fuzz FUZZ_SECONDS=300) libFuzzer on each scenario parser;
#             check-sanitize runs it for 10 s a stage
#   conformance  (make conformance N= SEED=) many random scenarios per stage
#             against CPython; the first mismatch is shrunk and printed
#   mutant    (make mutate, tests/mutate.sh) what "all" runs for one stage,
#             gcc only, stopping at the first FAIL
# With NN (make check STAGE=05), only that stage: its build, suites, pinned
# outputs, conformance (fixed and random) and exercises, and its clang build.
# Every test has a time limit (tests/lib.sh, test_limit): past it, it FAILs.
# Ends with tests/summary.sh's line "N passed, N failed".
# The Makefile exports SUITES, each suite's NAME_FROM / NAME_UNTIL and
# THREADED_FROM from tests/suites.mk.
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
mode=${1:-all}
only=${2:-}
: "${SUITES:?run me through make (make check), which reads tests/suites.mk}"
results=$BUILD/check/$mode${only:+-$only}
export CHECK_RESULTS="$results/results.txt" CHECK_LOGS="$results/logs"
rm -rf "$results"
: "${CONFORMANCE_N:=500}" "${CONFORMANCE_SEED:=1}"
STAGES=$(cd code && ls -d [0-9][0-9]-* 2>/dev/null)
if [ -n "$only" ]; then
    STAGES=$(cd code && ls -d "$only"-* 2>/dev/null)
    [ -n "$STAGES" ] || { echo "check.sh: no stage '$only' under code/ (try 05)" >&2; exit 2; }
fi

# suites_for STAGE: the suites that apply to that stage.
suites_for() {
    n=$(stage_num "$1")
    for s in $SUITES; do
        eval "from=\${${s}_FROM:-99} until=\${${s}_UNTIL:-99}"
        [ "$n" -ge "$from" ] && [ "$n" -le "$until" ] && echo "$s"
    done
}

# The sanitizer and valgrind runs (the "tools": asan, tsan, valgrind) cost ten
# to fifty times what the gcc build does.  They skip what the same tool runs
# elsewhere anyway, and only that; the gcc build runs everything everywhere.
# Each cut below says why it loses nothing (run_backends: exactly what it
# leaves to the gcc build).  `make check-sanitize STAGE=NN`
# (one stage, $only) skips nothing: there every stage counts as the newest.
tool() { case $1 in asan|tsan|valgrind) return 0 ;; esac; return 1; }
newest() { [ -n "$only" ] || [ "$1" = "$(echo "$STAGES" | tail -n 1)" ]; }

# own_suites VARIANT STAGE: the suites to run.  The gcc build runs every suite
# that applies (suites_for).  A tool runs on each stage the suites written for
# it (NAME_FROM is that stage), and every suite on the newest stage: each
# suite still runs under every tool on its own stage and on the newest.
own_suites() {
    if ! tool "$1" || newest "$2"; then
        suites_for "$2"
        return
    fi
    n=$(stage_num "$2")
    for s in $(suites_for "$2"); do
        eval "from=\${${s}_FROM}"
        [ "$from" -eq "$n" ] && echo "$s"
    done
}

# inherited STAGE NAME: the stage's pinned output NAME is a copy of the
# previous stage's: the same .out, the same .cmd once each names its own
# stage's folder, and the same files of its folder that the .cmd names
# (stage 10 began as a copy of 09: 51 of its 56 pinned outputs are copies).
inherited() {
    ih_prev=$(cd code && ls -d [0-9][0-9]-* | sed -n "/^$1\$/{x;p;q;};h")
    [ -n "$ih_prev" ] && [ -f "tests/$ih_prev/$2.cmd" ] || return 1
    cmp -s "tests/$1/$2.out" "tests/$ih_prev/$2.out" || return 1
    [ "$(sed "s|tests/$1/|tests/$ih_prev/|g" "tests/$1/$2.cmd")" = "$(cat "tests/$ih_prev/$2.cmd")" ] || return 1
    for ih_f in $(grep -o "tests/$1/[^ ]*" "tests/$1/$2.cmd"); do
        cmp -s "$ih_f" "tests/$ih_prev/${ih_f#tests/$1/}" || return 1
    done
}

# own_pinned VARIANT STAGE: the pinned outputs to run (NAME of
# tests/STAGE/NAME.cmd).  gcc: all.  A tool, like own_suites: each pinned
# output on the stage that wrote or changed it, and all on the newest stage.
# A copy on a stage in between is the same command expecting the same bytes,
# already run under this tool where it was written and on the newest stage;
# the stage's own code runs under the tool in its own suites, its own
# pinned outputs and its conformance run.
own_pinned() {
    for c in tests/$2/*.cmd; do
        [ -f "$c" ] || continue
        p=$(basename "$c" .cmd)
        if tool "$1" && ! newest "$2" && inherited "$2" "$p"; then
            continue
        fi
        echo "$p"
    done
}

# chooses_backend STAGE NAME: the pinned output's .cmd picks its selector
# itself (--backend=NAME, or LOOP_BACKEND=NAME of its own).  A tool runs it
# on the first backend only: on the others, LOOP_BACKEND changes only which
# selector loop_new() opens before --backend= replaces it (check_selector
# moves a loop across every backend, under every tool), or nothing at all.
chooses_backend() { grep -q -e '--backend=' -e 'LOOP_BACKEND=' "tests/$1/$2.cmd"; }

# run_backends VARIANT STAGE: the selector backends to run the stage's tests
# on (suites, conformance, pinned outputs).  gcc: all of them.  A tool, on a
# stage in between whose selector sources (selector*.c) are the same bytes
# as the previous stage's: the first backend only.  Those bytes run under
# the tool on every backend, every suite and every scenario on the stage
# that last changed them and on the newest stage (07 and 10 today); the
# stage's own code runs under the tool on its first backend; what is not
# repeated is that stage's loop with the other selectors under the tool,
# which the gcc build still runs (its suites, scenarios, pinned outputs).
run_backends() {
    rb_all=$(backends "$2")
    if tool "$1" && ! newest "$2"; then
        rb_prev=$(cd code && ls -d [0-9][0-9]-* | sed -n "/^$2\$/{x;p;q;};h")
        rb_same=${rb_prev:+yes}
        [ "$(cd "code/$2" && ls selector*.c 2>/dev/null)" = "$(cd "code/$rb_prev" 2>/dev/null && ls selector*.c 2>/dev/null)" ] ||
            rb_same=""
        for f in $(cd "code/$2" && ls selector*.c 2>/dev/null); do
            cmp -s "code/$2/$f" "code/$rb_prev/$f" || rb_same=""
        done
        if [ -n "$rb_same" ] && [ -n "$(cd "code/$2" && ls selector*.c 2>/dev/null)" ]; then
            echo "$rb_all" | awk '{print $1}'
            return
        fi
    fi
    echo "$rb_all"
}

# stage_tests VARIANT: build, suites, conformance and pinned outputs of every
# stage.  A stage with several selector backends (its Makefile's SELECTORS,
# from chapter 07 on) runs them all once per backend, chosen by LOOP_BACKEND.
stage_tests() {
    variant "$1"
    for st in $STAGES; do
        if [ "$1" = tsan ] && [ "$(stage_num "$st")" -lt "$THREADED_FROM" ]; then
            continue
        fi
        record "$1: build $st" build_stage "$st" || continue
        suites=""
        for s in $(own_suites "$1" "$st"); do
            record "$1: build check_$s for $st" build_suite "$s" "$st" && suites="$suites $s"
        done
        if [ -f "code/$st/trace.c" ]; then  # the scenarios, once for all backends
            fixed=$(fixed_scenarios "$st")
            random=$(random_scenarios "$st" "$CONFORMANCE_SEED" "$CONFORMANCE_N")
        fi
        pinned=$(own_pinned "$1" "$st")
        first=$(backends "$st" | awk '{print $1}')
        for backend in $(run_backends "$1" "$st"); do
            use_backend "$backend"
            for s in $suites; do
                record "$1: check_$s on $st$on" $RUNNER "$OUT/unit/check_$s-$st"
            done
            if [ -f "code/$st/trace.c" ]; then
                record "$1: conformance $st$on: scenario files" conform "$st" "$fixed"
                [ "$1" != valgrind ] &&
                record "$1: conformance $st$on: $CONFORMANCE_N random scenarios" conform "$st" "$random"
            fi
            for p in $pinned; do
                if tool "$1" && [ "$backend" != "$first" ] && chooses_backend "$st" "$p"; then
                    continue
                fi
                record "$1: pinned $st/$p$on" run_pinned "$st" "$p"
            done
        done
        unset LOOP_BACKEND
    done
}

# exercise_tests VARIANT [starters]: every chapter's worked answers pass; with
# "starters", every starter still compiles and fails its test, and starters and
# answers differ from their stage's files only in their @exercise regions.
exercise_tests() {
    variant "$1"
    for st in $STAGES; do
        for ex in $(exercises "$st"); do
            record "$1: exercise $st/$ex: answer builds" build_exercise "$st" "$ex" answer &&
            record "$1: exercise $st/$ex: answer passes" $RUNNER "$OUT/exercises/$st/answer/$ex"
            [ "${2:-}" = starters ] || continue
            record "$1: exercise $st/$ex: starter builds" build_exercise "$st" "$ex" starter &&
            record "$1: exercise $st/$ex: starter still fails its test" not "$OUT/exercises/$st/starter/$ex"
            record "exercise $st/$ex: starter and answer are the stage's files outside @exercise regions" \
                "$PYTHON" tests/starters.py check "$st" "$ex"
        done
    done
}

# fuzz_all: libFuzzer, FUZZ_SECONDS each, on every distinct scenario parser.
# Stages whose parser is the same source (fuzz_scenario.c and scenario.c
# with every header they include, preprocessed: lib.sh, fuzz_key) build the
# same fuzz target; it is fuzzed once, on the newest of them, and the record
# names the others (03-05 share one, 06-07 one, 09-10 one).
fuzz_all() {
    for st in $STAGES; do
        [ -f "code/$st/fuzz_scenario.c" ] && echo "$(fuzz_key "$st") $st"
    done | awk '{ newest[$1] = $2; all[$1] = all[$1] " " $2 }
                END { for (k in newest) print newest[k] ":" all[k] }' | sort |
    while IFS=: read -r st all; do
        same=$(for s in $all; do [ "$s" = "$st" ] || printf ' %s' "$s"; done)
        record "fuzz: scenario parser of $st${same:+ (the same source as$same)}, $FUZZ_SECONDS s" \
            fuzz "$st" "$FUZZ_SECONDS"
    done
}

case $mode in
all)
    stage_tests gcc
    exercise_tests gcc starters
    # The benchmarks cannot rot (DESIGN 9): each at a tiny size, every
    # contender's count checked, nothing timed.
    for st in $STAGES; do
        [ -f "code/$st/bench_tasks.c" ] &&
        record "bench: $st/bench_tasks --smoke (C, asyncio, uvloop: counts only, no timing)" bench_smoke "$st"
    done
    variant clang
    for st in $STAGES; do
        record "clang: build $st" build_stage "$st"
    done
    [ -n "$only" ] && { tests/summary.sh "$CHECK_RESULTS"; exit; }
    # Chapter 11's comparison at 1% of its sizes, one round: every program of
    # every contender builds and does exactly its count (no time is judged).
    record "bench: make bench SCALE=0.01 (every stage, libuv, libev, libevent, asyncio, uvloop: counts only)" \
        env SCALE=0.01 tests/bench.sh
    record "book: include filter" tests/book/filter-test.sh
    record "book: epubcheck passes the EPUB (0 errors, 0 warnings); the PDF sets Chinese in a CJK font" tests/book/outputs-test.sh
    record "exercise copies: tests/starters.py's own test" tests/starters-test.sh
    # The classroom kit, on chapter 04: the handout (no answer in it; it
    # builds alone; its starters fail) and the grader on a made-up class.
    record "classroom: make handout CH=04, alone in an empty folder" tests/handout.sh --test
    record "classroom: make grade on the fixture class (tests/grade/)" tests/grade.sh --test
    record "classroom: the cheats of tests/grade/cheats/ fail their tests" tests/grade.sh --cheats
    record "conformance: the pinned traces are what CPython prints" pinned_traces
    # The C demos' Python twins (a "# twin: NAME" line in the run's .cmd):
    # C and CPython print the same bytes (lib.sh, twin).
    for c in tests/conformance/runs/*.cmd; do
        r=$(basename "$c" .cmd)
        if grep -q '^# twin: ' "$c"; then
            record "twin: $r: C and CPython print the same" twin "$r"
        else  # not a twin; passes unless a stage pins the same name
            twin "$r" >/dev/null || record "twin: $r: a run named as a C demo's pinned output says '# twin:'" twin "$r"
        fi
    done
    record "time limits: a test that hangs FAILs" tests/limits-test.sh
    # A sample of tests/mutants/ (those marked "sample: yes"), so that the
    # catalogue cannot rot: each sampled mutant must still apply and be killed.
    for st in $STAGES; do
        [ -f "tests/mutants/$st.txt" ] &&
        record "mutants: the sample of $st is killed" tests/mutate.sh "$(stage_num "$st")" --sample
    done
    ;;
mutant)
    # A mutant is one planted bug in a copy (tests/mutate.sh): the first FAIL
    # kills it.  Exercises: the answers only (a starter fails anyway, and its
    # drift check would see the mutant itself).
    export CHECK_STOP_AT_FAIL=1
    stage_tests gcc
    for st in $STAGES; do
        for ex in $(exercises "$st"); do
            record "gcc: exercise $st/$ex: answer builds" build_exercise "$st" "$ex" answer &&
            record "gcc: exercise $st/$ex: answer passes" "$OUT/exercises/$st/answer/$ex"
        done
    done
    ;;
sanitize)
    stage_tests asan
    exercise_tests asan
    stage_tests tsan
    : "${FUZZ_SECONDS:=10}"
    fuzz_all
    ;;
fuzz)
    TEST_TIME_LIMIT=$(( ${FUZZ_SECONDS:=300} + 180 ))
    fuzz_all
    ;;
valgrind)
    stage_tests valgrind
    exercise_tests valgrind
    # Threaded stages: the suites that run threads under helgrind too
    # (check_threadsafe from 06, check_stress and check_executor from 10;
    # each scales itself down when CK_FORK=no, which variant valgrind sets),
    # where valgrind ran them (own_suites: their own stage and the newest).
    for st in $STAGES; do
        [ "$(stage_num "$st")" -ge "$THREADED_FROM" ] || continue
        for s in $(own_suites valgrind "$st"); do
            case $s in threadsafe|stress|executor) ;; *) continue ;; esac
            [ -x "$OUT/unit/check_$s-$st" ] || continue
            record "helgrind: check_$s on $st" \
                valgrind --tool=helgrind -q --error-exitcode=99 "$OUT/unit/check_$s-$st"
        done
    done
    ;;
conformance)
    # make conformance N=... SEED=...: many random scenarios per stage; the
    # first mismatch of a stage is shrunk to a minimal scenario.  The time
    # limit grows with N (about 100 scenarios a second).
    variant gcc
    TEST_TIME_LIMIT=$(( 180 + CONFORMANCE_N / 20 ))
    for st in $STAGES; do
        [ -f "code/$st/trace.c" ] || continue
        build_stage "$st" || exit 2
        list=$(random_scenarios "$st" "$CONFORMANCE_SEED" "$CONFORMANCE_N")
        for backend in $(backends "$st"); do
            use_backend "$backend"
            t0=$(date +%s)
            record "conformance $st$on: $CONFORMANCE_N random scenarios, seed $CONFORMANCE_SEED" conform "$st" "$list" ||
                "$PYTHON" $CONF/minimize.py "$OUT/$st/trace" "$(stage_num "$st")" "$(cat "$OUT/conformance/$st/first-mismatch")"
            echo "    $st$on: $(( $(date +%s) - t0 )) s"
        done
        unset LOOP_BACKEND
    done
    ;;
*)
    echo "usage: tests/check.sh all|sanitize|valgrind|fuzz|conformance|mutant [NN]" >&2
    exit 2
    ;;
esac
tests/summary.sh "$CHECK_RESULTS"
