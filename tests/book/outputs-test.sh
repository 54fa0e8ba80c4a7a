#!/bin/sh
# outputs-test.sh: make book, then check what it made (make check runs it).
#  1. epubcheck passes the EPUB with no error and no warning;
#  2. the PDF has pages, and its Chinese is set in a CJK font (pdffonts);
#  3. the search index holds Chinese terms of the glossary, spelled as
#     book/js/book.js searches them.
# Exits 0 only if every check passes; prints what failed.
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
BUILD=${BUILD:-build}
site=$BUILD/book/site
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

make -s book BUILD="$BUILD" || { echo "FAIL: make book"; exit 1; }

# 1. epubcheck is a jar; run it with java (binfmt may not run .jar files).
jar=/usr/share/java/epubcheck.jar
if [ -f "$jar" ]; then set -- java -jar "$jar"; else set -- epubcheck; fi
out=$("$@" "$site/book.epub" 2>&1)
echo "$out" | grep -E '^(FATAL|ERROR|WARNING)' | head -n 20
if echo "$out" | grep -q 'Messages: 0 fatals / 0 errors / 0 warnings'; then
    echo "ok: epubcheck: 0 fatals, 0 errors, 0 warnings"
else
    fail "epubcheck: $(echo "$out" | grep Messages: || echo "$out" | tail -n 3)"
fi

# 2. The PDF.
pages=$(pdfinfo "$BUILD/book/book.pdf" 2>/dev/null | sed -n 's/^Pages: *//p')
[ "${pages:-0}" -gt 50 ] && echo "ok: book.pdf has $pages pages" || fail "book.pdf: ${pages:-no} pages"
if pdffonts "$BUILD/book/book.pdf" | grep -q 'CJK'; then
    echo "ok: book.pdf embeds $(pdffonts "$BUILD/book/book.pdf" | grep -c CJK) CJK fonts"
else
    fail "book.pdf embeds no CJK font"
fi

# 3. 就绪队列 (ready queue), as pairs: 就绪 绪队 队列.
for pair in "23601n32490" "38431n21015"; do
    grep -q "cjk$pair" "$site/search-index.js" || fail "search-index.js lacks cjk$pair"
done
[ $failed -eq 0 ] && echo "ok: search-index.js holds the glossary's Chinese terms"
exit $failed
