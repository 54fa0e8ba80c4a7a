# lib.sh -- the shell functions every test driver shares (sourced, not run).
#
# A "variant" is one way of building the stages:
#   gcc    the default compiler and each stage's own flags  -> build/NN-slug
#   clang  the same with CC=clang                           -> build/clang/NN-slug
#   asan   AddressSanitizer + UndefinedBehaviorSanitizer    -> build/asan/NN-slug
#   tsan   ThreadSanitizer                                  -> build/tsan/NN-slug
# valgrind is not a build: it runs the gcc build's binaries under memcheck.

BUILD=${BUILD:-build}
CHECK_CFLAGS=$(pkg-config --cflags check 2>/dev/null)
CHECK_LIBS=$(pkg-config --libs check 2>/dev/null)
WARN="-std=c11 -Wall -Wextra -Werror"

# variant NAME: set CC, CFLAGS, LDFLAGS, OUT (the variant's build root) and
# RUNNER (the command that runs a test binary: empty, or valgrind).
variant() {
    RUNNER=""
    CC=${CC_DEFAULT:-cc}
    CFLAGS="-O2 -g"
    LDFLAGS=""
    case $1 in
    gcc)      OUT=$BUILD ;;
    clang)    OUT=$BUILD/clang; CC=clang ;;
    asan)     OUT=$BUILD/asan
              CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
              LDFLAGS="-fsanitize=address,undefined" ;;
    tsan)     OUT=$BUILD/tsan
              CFLAGS="-O1 -g -fsanitize=thread"; LDFLAGS="-fsanitize=thread" ;;
    valgrind) OUT=$BUILD
              RUNNER="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all" ;;
    *)        echo "lib.sh: unknown variant '$1'" >&2; return 1 ;;
    esac
    # Check forks a child per test by default; valgrind must see the tests
    # themselves, and is slow enough to need Check's timeouts stretched.
    # Sanitizers slow code down several times too, so their Check timeouts
    # stretch as well (Check's default is 4 s a test).
    unset CK_FORK CK_TIMEOUT_MULTIPLIER
    TIME_SCALE=1
    case $1 in
    valgrind)  export CK_FORK=no CK_TIMEOUT_MULTIPLIER=20; TIME_SCALE=20 ;;
    asan|tsan) export CK_TIMEOUT_MULTIPLIER=5; TIME_SCALE=5 ;;
    esac
}

# Time limits: no test may hang a driver.  record gives each test
# TEST_TIME_LIMIT seconds (default 180; the slowest gcc test takes well under
# a minute), conform gives each scenario SCENARIO_TIME_LIMIT (default 10), both
# times the variant's TIME_SCALE, the same stretch Check's own timeouts get.
# A test past its limit is killed with its whole process group and FAILs.
test_limit()     { echo $(( ${TEST_TIME_LIMIT:-180} * ${TIME_SCALE:-1} )); }
scenario_limit() { echo $(( ${SCENARIO_TIME_LIMIT:-10} * ${TIME_SCALE:-1} )); }

stage_num() { printf '%s' "${1%%-*}"; }

# build_stage STAGE: the stage's own Makefile, in the current variant.
build_stage() {
    make -s -C "code/$1" O="$(pwd)/$OUT/$1" CC="$CC" CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS"
}

# lib_srcs STAGE: the stage's library sources (its Makefile's LIB_SRCS).
lib_srcs() { make -s -C "code/$1" print-LIB_SRCS; }

# backends STAGE: the selector backends the stage's Makefile lists
# (SELECTORS, chapter 07 on), or "default" for a stage with just one.
backends() {
    b=$(make -s -C "code/$1" print-SELECTORS)
    echo "${b:-default}"
}

# use_backend NAME: run what follows on that backend (LOOP_BACKEND, read by
# loop_new), and set $on, the " [NAME]" that test names carry.
use_backend() {
    if [ "$1" = default ]; then
        unset LOOP_BACKEND; on=""
    else
        export LOOP_BACKEND=$1; on=" [$1]"
    fi
}

# build_suite SUITE STAGE: tests/unit/check_SUITE.c against the stage's
# libloop.a; prints nothing, leaves $OUT/unit/check_SUITE-STAGE.
build_suite() {
    mkdir -p "$OUT/unit"
    # The suite's own link flags, if tests/suites.mk gives it a NAME_LDFLAGS
    # line (check_oom: -Wl,--wrap=malloc ...), read from there so that a
    # driver run outside make builds it the same way.
    suite_ldflags=$(sed -n "s/^$1_LDFLAGS *:= *//p" tests/suites.mk)
    $CC $WARN $CFLAGS -I "code/$2" -I tests/support $CHECK_CFLAGS -o "$OUT/unit/check_$1-$2" \
        "tests/unit/check_$1.c" "$OUT/$2/libloop.a" $LDFLAGS $suite_ldflags $CHECK_LIBS -lpthread
}

# run_pinned STAGE NAME: run tests/STAGE/NAME.cmd in the stage's build folder
# and compare its output with tests/STAGE/NAME.out exactly.
run_pinned() {
    # A .cmd names files as a reader would from build/NN-slug/, e.g.
    # ../../tests/04-snapshot/x.scn; a link makes the same path work from
    # every other build folder (build/asan/NN-slug/ -> build/tests).
    [ -e "$OUT/$1/../../tests" ] || ln -s "$(pwd)/tests" "$(cd "$OUT/$1/../.." && pwd)/tests"
    cmd=$(cat "tests/$1/$2.cmd")
    expected="$(pwd)/tests/$1/$2.out"
    actual="$OUT/$1/$2.actual"
    (cd "$OUT/$1" && { $RUNNER $cmd 2>&1; rc=$?; [ $rc -eq 0 ] || echo "[exit status $rc]"; }) >"$actual"
    diff -u "$expected" "$actual" && return 0
    echo "(output of '$cmd' in $OUT/$1 differs from tests/$1/$2.out)"
    return 1
}

# bench_smoke STAGE: the stage's bench_tasks --smoke: C, asyncio and uvloop
# (skipped, and said so, if it is not installed) each run every workload at
# a tiny size and must count what they should.  No time is looked at.
bench_smoke() {
    bs_peer=$(pwd)/tests/bench/tasks_peer.py
    (cd "$OUT/$1" && TASKS_PEER=$bs_peer PYTHON=$PYTHON ./bench_tasks --smoke)
}

# build_exercise STAGE EXERCISE KIND: KIND is "starter" (code/STAGE/exercises/EX)
# or "answer" (code/STAGE/exercises/answers/EX).  The exercise's files replace
# the stage's library sources of the same name; its other .c files are added.
build_exercise() {
    dir=code/$1/exercises/$2
    [ "$3" = answer ] && dir=code/$1/exercises/answers/$2
    [ -d "$dir" ] || { echo "no folder $dir"; return 1; }
    srcs=""
    for f in $(lib_srcs "$1"); do
        [ -f "$dir/$f" ] || srcs="$srcs code/$1/$f"
    done
    bin=$OUT/exercises/$1/$3/$2
    mkdir -p "$(dirname "$bin")"
    $CC $WARN $CFLAGS -I "$dir" -I "code/$1" -I tests/support $CHECK_CFLAGS -o "$bin" \
        $srcs "$dir"/*.c "tests/$1/exercises/$2.c" $LDFLAGS $CHECK_LIBS -lpthread
}

# exercises STAGE: the names of the stage's exercises.
exercises() {
    for t in tests/$1/exercises/*.c; do
        [ -f "$t" ] && basename "$t" .c
    done
}

# record NAME CMD [ARGS...]: run one test command, keep its output in
# $CHECK_LOGS, print "PASS: NAME" or "FAIL: NAME" (with the tail of the log on
# failure) and append that line to $CHECK_RESULTS, which summary.sh counts.
# Returns the command's status, so a later step can depend on an earlier one.
# Its variables are prefixed rec_: the commands it runs are often functions of
# this file, which share the shell's globals.
record() {
    rec_name=$1; shift
    rec_log="$CHECK_LOGS/$(printf '%s' "$rec_name" | tr -c 'A-Za-z0-9._-' '_').log"
    mkdir -p "$CHECK_LOGS" "$(dirname "$CHECK_RESULTS")"
    # Run it under timeout(1), which kills the whole process group when the
    # limit passes.  timeout needs a program, so a function of this file runs
    # in a new sh that sources it again, with the variant's variables.
    rec_limit=$(test_limit)
    rec_t0=$(date +%s)
    OUT=${OUT:-} RUNNER=${RUNNER:-} CC=${CC:-cc} CFLAGS=${CFLAGS:-} LDFLAGS=${LDFLAGS:-} \
    TIME_SCALE=${TIME_SCALE:-1} TEST_TIME_LIMIT=${TEST_TIME_LIMIT:-} \
    SCENARIO_TIME_LIMIT=${SCENARIO_TIME_LIMIT:-} timeout -k 10 "$rec_limit" \
        sh -c '. tests/lib.sh && "$@"' record "$@" </dev/null >"$rec_log" 2>&1
    rec_status=$?
    [ $rec_status -eq 124 ] && echo "timed out after $rec_limit s (TEST_TIME_LIMIT)" >>"$rec_log"
    # Each test's wall time, in the results folder's times.txt, and with
    # RECORD_TIMES=FILE (make check-valgrind RECORD_TIMES=/tmp/t) in FILE too,
    # which several runs may share; summary.sh then lists the slowest.
    rec_time="$(( $(date +%s) - rec_t0 )) s  $rec_name"
    echo "$rec_time" >>"$CHECK_LOGS/../times.txt"
    [ -z "${RECORD_TIMES:-}" ] || echo "$rec_time" >>"$RECORD_TIMES"
    # Keep Check's own per-suite summary line visible, as its users expect.
    grep -E '^[0-9]+%: Checks: ' "$rec_log" | sed 's/^/    /'
    if [ $rec_status -eq 0 ]; then
        echo "PASS: $rec_name" | tee -a "$CHECK_RESULTS"
    else
        echo "FAIL: $rec_name" | tee -a "$CHECK_RESULTS"
        tail -n 25 "$rec_log" | sed 's/^/    | /'
        # check.sh mutant: the first FAIL is the verdict; skip the rest.
        [ -z "${CHECK_STOP_AT_FAIL:-}" ] || exit 1
    fi
    return $rec_status
}

# ------------------------------------------------------------- conformance
# The reference is the system Python's asyncio (DESIGN 5.3): /usr/bin/python3.
PYTHON=${PYTHON:-/usr/bin/python3}
CONF=tests/conformance

# applies SCN STAGE: does the scenario's "# stages: A-B" line (B may be empty:
# "and later") include that stage?  No such line: every stage from 03 on.
applies() {
    range=$(sed -n 's/^# stages: *\([0-9]*-[0-9]*\).*/\1/p' "$1" | head -n 1)
    [ -n "$range" ] || return 0
    lo=${range%-*}; hi=${range#*-}
    n=$(stage_num "$2")
    [ "$n" -ge "$lo" ] && [ "$n" -le "${hi:-99}" ]
}

# conform STAGE LIST: run each scenario named in the file LIST (one path a
# line) through the stage's trace program and through CPython (batch
# processes writing NAME.trace and NAME.err) and compare the two folders
# with one diff: the same trace, or the same error line (the C program must
# then exit 2).  Prints each mismatch; the first one is kept as
# $OUT/conformance/STAGE/first-mismatch for `make conformance` to shrink.
conform() {
    st=$1; list=$2
    work=$OUT/conformance/$st
    rm -rf "$work"; mkdir -p "$work/c"
    # CPython's side depends on the scenarios and the stage number only, not
    # on the C backend: it is made once per list, into LIST's name with .py
    # for .list, and the stage's other backends reuse it (a stage with three
    # backends ran the same CPython batch three times).  fixed_scenarios and
    # random_scenarios remove it when they write the list again.
    py=${list%.list}.py
    if ! cmp -s "$list" "$py/list" 2>/dev/null; then
        rm -rf "$py"; mkdir -p "$py/out"
        xargs -n 2000 "$PYTHON" $CONF/cpython_trace.py --stage "$(stage_num "$st")" --out "$py/out" \
            <"$list" 2>/dev/null
        [ $? -le 123 ] || { echo "the CPython runner failed"; rm -rf "$py"; return 1; }
        cp "$list" "$py/list"
    fi
    ln -s "$(cd "$py/out" && pwd)" "$work/py"
    total=0
    : >"$work/mismatches"
    limit=$(scenario_limit)
    while read -r f; do
        total=$((total + 1))
        scn=$(basename "$f" .scn)
        # --foreground: stay in record's process group, which its limit kills.
        timeout --foreground -k 5 "$limit" $RUNNER "$OUT/$st/trace" "$f" >"$work/c/$scn.trace" 2>"$work/c/$scn.err"
        rc=$?
        if [ $rc -eq 124 ]; then  # a trace that spins: stop at the first
            echo "$f" >>"$work/mismatches"
            echo "MISMATCH $f: timed out after $limit s (SCENARIO_TIME_LIMIT)"
            head -n 1 "$work/mismatches" >"$work/first-mismatch"
            return 1
        fi
        # Exit 0 for a trace, 2 for an error line, nothing else.
        if [ -s "$work/py/$scn.err" ]; then want=2; else want=0; fi
        if [ $rc -ne $want ]; then
            echo "$f" >>"$work/mismatches"
            echo "MISMATCH $f: the C trace exited $rc, CPython's runner $want"
        fi
    done <"$list"
    diff -r "$work/py" "$work/c" >"$work/diff" 2>&1
    sed -n 's|^diff -r [^ ]* .*/c/\(.*\)\.[a-z]*$|\1|p' "$work/diff" | sort -u | while read -r scn; do
        f=$(grep "/$scn.scn\$" "$list" | head -n 1)
        echo "$f" >>"$work/mismatches"
        echo "MISMATCH $f (- CPython, + C):"
        diff -u "$work/py/$scn.trace" "$work/c/$scn.trace" | sed -n '3,30p'
        diff -u "$work/py/$scn.err" "$work/c/$scn.err" | sed -n '3,10p'
    done
    bad=$(sort -u "$work/mismatches" | grep -c .)
    head -n 1 "$work/mismatches" >"$work/first-mismatch"
    echo "$total scenarios, $bad mismatches"
    [ "$bad" -eq 0 ] && [ "$total" -gt 0 ]
}

# fixed_scenarios STAGE: write the list of the hand-written scenarios and the
# malformed ones that apply to the stage; print the list's path.
fixed_scenarios() {
    mkdir -p "$OUT/conformance"
    for f in $CONF/scenarios/*.scn $CONF/bad/*.scn; do
        applies "$f" "$1" && echo "$f"
    done >"$OUT/conformance/fixed-$1.list"
    rm -rf "$OUT/conformance/fixed-$1.py"  # conform's CPython side, made anew
    echo "$OUT/conformance/fixed-$1.list"
}

# random_scenarios STAGE SEED COUNT: generate them, write their list; print
# the list's path.
random_scenarios() {
    dir=$OUT/conformance/random-$1-$2
    rm -rf "$dir" "$dir.py"  # and conform's CPython side, made anew
    "$PYTHON" $CONF/gen_scenarios.py --seed "$2" --count "$3" --stage "$(stage_num "$1")" --out "$dir" &&
        find "$dir" -name '*.scn' | sort >"$dir.list"
    echo "$dir.list"
}

# pinned_traces: the .trace and .err files beside the hand-written and the
# malformed scenarios (the book prints them) are what CPython prints today,
# and so are the outputs of the Python programs in tests/conformance/runs/.
pinned_traces() {
    bad=0
    for f in $CONF/scenarios/*.scn $CONF/bad/*.scn; do
        # Run it at the last stage it applies to ("# stages: 03-05": 5).
        stage=$(sed -n 's/^# stages: *[0-9]*-\([0-9]*\).*/\1/p' "$f" | head -n 1)
        stage=${stage:-99}
        if [ -f "${f%.scn}.trace" ]; then
            "$PYTHON" $CONF/cpython_trace.py --stage $stage "$f" 2>&1 | cmp -s - "${f%.scn}.trace"
        else
            "$PYTHON" $CONF/cpython_trace.py --stage $stage "$f" 2>&1 >/dev/null | cmp -s - "${f%.scn}.err"
        fi || { echo "CPython no longer prints ${f%.scn}.trace/.err"; bad=1; }
    done
    # The CPython runs the book quotes (NAME.cmd, run from the repository
    # root, prints NAME.out).  They are facts about Linux (epoll), and never
    # run under valgrind, which is why they are not a stage's pinned outputs.
    [ "$(uname -s)" = Linux ] || return $bad
    for c in $CONF/runs/*.cmd; do
        [ -f "$c" ] || continue
        { sh -c "$(cat "$c")" 2>&1; rc=$?; [ $rc -eq 0 ] || echo "[exit status $rc]"; } |
            cmp -s - "${c%.cmd}.out" || { echo "CPython no longer prints ${c%.cmd}.out"; bad=1; }
    done
    return $bad
}

# twin RUN: tests/conformance/runs/RUN is the Python twin of a C demo when
# its .cmd has a line "# twin: NAME" (after the command, which the book shows
# as the run's first line): RUN.out and the C demo's pinned output, NAME.out
# of the newest stage under tests/ that pins it, are the same bytes.  Both
# are pinned, so they were equal by construction only; this checks it.  A run
# without that line whose name a stage pins as well is refused: a twin must
# say so, or be named otherwise.
twin() {
    tw_cmd=$CONF/runs/$1.cmd
    tw_name=$(sed -n 's/^# twin: *\([A-Za-z0-9_.-]*\).*/\1/p' "$tw_cmd" | head -n 1)
    tw_c=$(ls tests/[0-9][0-9]-*/"${tw_name:-$1}.out" 2>/dev/null | tail -n 1)
    if [ -z "$tw_name" ]; then
        [ -z "$tw_c" ] && return 0
        echo "$tw_c has the name of $CONF/runs/$1.out: add '# twin: $1' to $tw_cmd, or rename one"
        return 1
    fi
    [ -n "$tw_c" ] || { echo "$tw_cmd names twin $tw_name, but no tests/NN-slug/ pins $tw_name.out"; return 1; }
    echo "CPython: $CONF/runs/$1.out"
    echo "C:       $tw_c"
    cmp "$tw_c" "$CONF/runs/$1.out" && return 0
    diff -u "$tw_c" "$CONF/runs/$1.out" | head -n 40
    return 1
}

# fuzz_key STAGE: a checksum of what the stage's fuzz target is made of:
# fuzz_scenario.c and scenario.c after the preprocessor (every header they
# include, no file names or line numbers).  Two stages with the same key
# build the same target (check.sh fuzzes it once).  If clang cannot
# preprocess them, the stage's name goes in too, so the key is its own.
fuzz_key() {
    { clang -E -P -I "code/$1" "code/$1/fuzz_scenario.c" "code/$1/scenario.c" 2>/dev/null ||
        echo "$1"; } | cksum | tr ' ' -
}

# fuzz STAGE SECONDS: libFuzzer (clang) on the stage's scenario parser,
# seeded with every scenario we have; any crash, leak, hang or sanitizer
# report fails it and leaves the input in $BUILD/fuzz/STAGE/.
fuzz() {
    dir=$BUILD/fuzz/$1
    mkdir -p "$dir/corpus"
    for f in $CONF/scenarios/*.scn $CONF/bad/*.scn; do  # names repeat across the two
        cp "$f" "$dir/corpus/$(basename "$(dirname "$f")")-$(basename "$f")"
    done
    clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
        -I "code/$1" -o "$dir/fuzz_scenario" "code/$1/fuzz_scenario.c" "code/$1/scenario.c" -lm &&
    (cd "$dir" && ./fuzz_scenario -max_total_time="$2" -timeout=5 -artifact_prefix=./ corpus)
}

# not CMD...: succeed when CMD fails (a starter's test must fail).
not() { if "$@"; then return 1; else return 0; fi; }
