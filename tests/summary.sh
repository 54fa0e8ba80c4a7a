#!/bin/sh
# summary.sh RESULTS: print the one closing line "N passed, N failed" and exit
# non-zero when anything failed or nothing ran at all.
results=${1:-build/check/results.txt}
[ -f "$results" ] || { echo "0 passed, 0 failed"; echo "no test ran" >&2; exit 1; }
passed=$(grep -c '^PASS: ' "$results")
failed=$(grep -c '^FAIL: ' "$results")
if [ "$failed" -gt 0 ]; then
    echo "failed:"; grep '^FAIL: ' "$results" | sed 's/^FAIL: /  /'
fi
# RECORD_TIMES=FILE (tests/lib.sh, record): the 20 slowest tests, seconds first.
if [ -n "${RECORD_TIMES:-}" ] && [ -f "$RECORD_TIMES" ]; then
    echo "slowest (of $(grep -c . "$RECORD_TIMES") in $RECORD_TIMES):"
    sort -rn "$RECORD_TIMES" | head -n 20 | sed 's/^/  /'
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
