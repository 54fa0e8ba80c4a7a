#!/bin/sh
# filter-test.sh: tests book/filters/include.lua with pandoc alone.
#  1. fixtures/doc.md (a whole file, nested and overlapping regions, two diffs,
#     two outputs, an untouched block) renders exactly as filter.expected;
#  2. each broken fixture makes pandoc fail with a message naming the file and
#     the region (or the missing file of a diff);
#  3. tests/book/whole-test.sh: number.lua and whole.lua.
# Exits 0 only if every case passes; prints what failed.
# To re-pin after an intended change: run it with REPIN=1, then read the diff.
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
export BOOK_ROOT="$root"
fx=tests/book/fixtures
filter=book/filters/include.lua
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# 1. The rendering, compared exactly.
if pandoc "$fx/doc.md" --lua-filter="$filter" -t markdown -o "$tmp/doc.out" 2>"$tmp/doc.err"; then
    [ -n "$REPIN" ] && cp "$tmp/doc.out" tests/book/filter.expected
    if diff -u tests/book/filter.expected "$tmp/doc.out"; then
        echo "ok: includes render as tests/book/filter.expected"
    else
        fail "includes differ from tests/book/filter.expected (diff above)"
    fi
else
    fail "pandoc failed on $fx/doc.md: $(cat "$tmp/doc.err")"
fi

# 2. Broken includes: pandoc must fail and the message must name $2 and $3.
expect_error() {  # FIXTURE WORD1 WORD2
    if pandoc "$fx/$1.md" --lua-filter="$filter" -t markdown >/dev/null 2>"$tmp/err"; then
        fail "$1: pandoc succeeded, expected an error"
    elif ! grep -q "include.lua: .*$2" "$tmp/err" || ! grep -q "$3" "$tmp/err"; then
        fail "$1: message does not name '$2' and '$3': $(cat "$tmp/err")"
    else
        echo "ok: $1 fails with: $(cat "$tmp/err")"
    fi
}
expect_error missing-file        "$fx/stage-a/nope.c"      "region 'run_once'"
expect_error missing-region      "$fx/stage-a/loop.c"      "region 'nope' not found"
expect_error unterminated-region "$fx/bad/unterminated.c"  "region 'open' has no end"
expect_error missing-diff-file   "nope.c"                  "$fx/stage-b"

# 3. The filters of the EPUB and the PDF: numbers, ids per page, links.
tests/book/whole-test.sh || fail "tests/book/whole-test.sh (above)"

[ "$failed" -eq 0 ] && echo "filter-test: all passed" && exit 0
echo "filter-test: $failed failed"; exit 1
