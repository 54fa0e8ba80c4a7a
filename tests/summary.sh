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
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
