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
    if [ -n "$RUNNER" ]; then
        export CK_FORK=no CK_TIMEOUT_MULTIPLIER=20
    else
        unset CK_FORK CK_TIMEOUT_MULTIPLIER
    fi
}

stage_num() { printf '%s' "${1%%-*}"; }

# build_stage STAGE: the stage's own Makefile, in the current variant.
build_stage() {
    make -s -C "code/$1" O="$(pwd)/$OUT/$1" CC="$CC" CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS"
}

# lib_srcs STAGE: the stage's library sources (its Makefile's LIB_SRCS).
lib_srcs() { make -s -C "code/$1" print-LIB_SRCS; }

# build_suite SUITE STAGE: tests/unit/check_SUITE.c against the stage's
# libloop.a; prints nothing, leaves $OUT/unit/check_SUITE-STAGE.
build_suite() {
    mkdir -p "$OUT/unit"
    $CC $WARN $CFLAGS -I "code/$2" $CHECK_CFLAGS -o "$OUT/unit/check_$1-$2" \
        "tests/unit/check_$1.c" "$OUT/$2/libloop.a" $LDFLAGS $CHECK_LIBS -lpthread
}

# run_pinned STAGE NAME: run tests/STAGE/NAME.cmd in the stage's build folder
# and compare its output with tests/STAGE/NAME.out exactly.
run_pinned() {
    cmd=$(cat "tests/$1/$2.cmd")
    expected="$(pwd)/tests/$1/$2.out"
    actual=$(cd "$OUT/$1" && { $RUNNER $cmd 2>&1; rc=$?; [ $rc -eq 0 ] || echo "[exit status $rc]"; })
    printf '%s\n' "$actual" | diff -u "$expected" - && return 0
    echo "(output of '$cmd' in $OUT/$1 differs from tests/$1/$2.out)"
    return 1
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
    $CC $WARN $CFLAGS -I "$dir" -I "code/$1" $CHECK_CFLAGS -o "$bin" \
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
record() {
    name=$1; shift
    log="$CHECK_LOGS/$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_').log"
    mkdir -p "$CHECK_LOGS" "$(dirname "$CHECK_RESULTS")"
    "$@" >"$log" 2>&1
    status=$?
    # Keep Check's own per-suite summary line visible, as its users expect.
    grep -E '^[0-9]+%: Checks: ' "$log" | sed 's/^/    /'
    if [ $status -eq 0 ]; then
        echo "PASS: $name" | tee -a "$CHECK_RESULTS"
    else
        echo "FAIL: $name" | tee -a "$CHECK_RESULTS"
        tail -n 25 "$log" | sed 's/^/    | /'
    fi
    return $status
}

# not CMD...: succeed when CMD fails (a starter's test must fail).
not() { if "$@"; then return 1; else return 0; fi; }
