#!/bin/sh
# whole-test.sh: book/filters/number.lua and whole.lua (the EPUB's and the
# PDF's one document) on fixtures/whole/: two chapters that share a heading,
# an answers page, links between them; then a link to a page that is not in
# the book, which must stop the build with a message naming it.
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root/tests/book/fixtures/whole" || exit 1
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
filters="--lua-filter=$root/book/filters/number.lua --lua-filter=$root/book/filters/whole.lua"

if ! pandoc $filters --file-scope -t html5 -o "$tmp/out.html" \
        chapters/01-one.md chapters/02-two.md chapters/answers/01.md 2>"$tmp/err"; then
    fail "pandoc failed: $(cat "$tmp/err")"
else
    for want in 'id="ch01"' 'id="ch01-run-it"' 'id="ch02-run-it"' 'id="ans01"' \
                'href="#ch02-run-it"' 'href="#ans01"' 'href="#ch01-run-it"' 'href="#ch01"' \
                '<span class="secno">1.1</span>' '<span class="secno">1.1.1</span>' \
                '<span class="secno">2.2</span>' 'Figure 2.1:' 'id="ch02-figure-2-1"'; do
        grep -qF "$want" "$tmp/out.html" && echo "ok: $want" || fail "no $want in the output"
    done
    dups=$(grep -o 'id="[^"]*"' "$tmp/out.html" | sort | uniq -d)
    [ -z "$dups" ] && echo "ok: every id is unique" || fail "ids repeat: $dups"
    grep -q 'secno">[^<]*</span> *Exercise' "$tmp/out.html" && fail "an answers page got section numbers"
fi

if pandoc $filters --file-scope -t html5 -o "$tmp/broken.html" \
        chapters/02-broken.md 2>"$tmp/err"; then
    fail "a link to nope.md did not stop the build"
elif grep -q "whole.lua: .*nope.md" "$tmp/err"; then
    echo "ok: a link outside the book fails with: $(cat "$tmp/err")"
else
    fail "the message does not name nope.md: $(cat "$tmp/err")"
fi
[ $failed -eq 0 ] && echo "whole-test: all passed" && exit 0
echo "whole-test: $failed failed"; exit 1
