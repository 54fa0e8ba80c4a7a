#!/bin/sh
# limits-test.sh -- the time limits of tests/lib.sh work: a test that hangs
# FAILs with "timed out after N s" in its log, within its limit, and nothing
# it started outlives it (timeout kills the whole process group).  Run by
# make check; prints what went wrong and exits 1 if anything did.
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
export CHECK_RESULTS="$tmp/results.txt" CHECK_LOGS="$tmp/logs"
unset CHECK_STOP_AT_FAIL
bad=0
fail() { echo "limits-test: $*"; bad=1; }

# A program that never ends, with a child that never ends either: its pid
# goes to a file, so we can see that it was killed too.
TEST_TIME_LIMIT=1
t0=$(date +%s)
record "a hanging test" sh -c 'sleep 1000 & echo $! >"$1/child.pid"; sleep 1000' spin "$tmp" >"$tmp/out" 2>&1 && fail "record passed a test that hangs"
took=$(( $(date +%s) - t0 ))
[ "$took" -le 15 ] || fail "record took $took s to stop a test limited to 1 s"
grep -q '^FAIL: a hanging test$' "$CHECK_RESULTS" || fail "no 'FAIL: a hanging test' line"
grep -q 'timed out after 1 s' "$tmp/out" || fail "the log does not say 'timed out after 1 s'"
sleep 1
# (A killed child whose parent died first may linger as a zombie: dead.)
alive() { st=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${st#Z}" = "$st" ]; }
if [ -s "$tmp/child.pid" ] && alive "$(cat "$tmp/child.pid")"; then
    fail "the hanging test's child survived its limit"
    kill "$(cat "$tmp/child.pid")"
fi

# A test within its limit, written as a function of lib.sh (record runs it
# in a new sh), still passes and sees the variant's variables.
TEST_TIME_LIMIT=30
variant valgrind
record "a quick test" test_limit >/dev/null 2>&1 || fail "a quick function test failed under record"
[ "$(cat "$CHECK_LOGS/a_quick_test.log")" = 600 ] ||
    fail "a function under record does not see the variant's TIME_SCALE (20 x 30 s)"
[ $bad -eq 0 ] && echo "limits-test: a hanging test FAILs in time, and a quick one passes"
exit $bad
