#!/bin/sh
# starters-test.sh -- tests of tests/starters.py (check and sync), in a
# throw-away git repository with one stage, one exercise and its answer.
# Prints "ok: ..." per case; exits 1 at the first case that fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
git init -q . && git config user.email t@t && git config user.name t || exit 2
mkdir -p tests code/01-x/exercises/1-ex code/01-x/exercises/answers/1-ex
cp "$here/starters.py" tests/
S=code/01-x/loop.c C=code/01-x/exercises/1-ex/loop.c A=code/01-x/exercises/answers/1-ex/loop.c

fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
commit() { git add -A && git commit -q -m "$1"; }

cat >$S <<'EOF'
/* loop.c -- the stage. */
#include <stdio.h>

int one(void)
{
    return 1;
}

int two(void)
{
    return 2;
}

int three(void)
{
    return 3;
}
EOF
# The starter: a new header, and two() replaced by a TODO.
cat >$C <<'EOF'
/* @exercise begin */
/* loop.c -- exercise 1: write two(). */
/* @exercise end */
#include <stdio.h>

int one(void)
{
    return 1;
}

int two(void)
{
    /* @exercise begin */
    return 0; /* TODO */
    /* @exercise end */
}

int three(void)
{
    return 3;
}
EOF
sed 's|^    return 2;$|    /* @exercise begin */\n    return 2;\n    /* @exercise end */|' $S >$A
cp $S code/01-x/exercises/1-ex/same.c
cp $S code/01-x/same.c  # a copy without regions: the stage itself
printf 'a\nb\nc\n' >code/01-x/ins.c  # a region that replaces no stage line
printf 'a\n/* @exercise begin */\nX\n/* @exercise end */\nb\nc\n' >code/01-x/exercises/1-ex/ins.c
commit base

tests/starters.py check >out 2>&1 || { cat out; fail "copies that match their stage pass"; }
ok "copies that match their stage pass"

sed -i 's/return 3;/return 33;/' $C
tests/starters.py check >out 2>&1 && fail "drift outside a region fails check"
grep -q '^-    return 33;' out && grep -q '^+    return 3;' out || { cat out; fail "check prints the drift"; }
grep -q "$C" out || fail "check names the copy"
ok "drift outside a region fails check, with its diff"
git checkout -q -- $C

printf '/* @exercise ende */\n' >>$C
tests/starters.py check >out 2>&1 && fail "a malformed marker fails check"
grep -q 'not a marker' out || { cat out; fail "check says which line is not a marker"; }
ok "a malformed marker fails check"
git checkout -q -- $C

# The stage changes away from the regions: sync carries it, check passes.
sed -i 's/return 1;/return 11;/; s/#include <stdio.h>/#include <stdio.h>\n#include <stdlib.h>/' $S
sed -i 's/return 1;/return 11;/' code/01-x/same.c
tests/starters.py check >/dev/null 2>&1 && fail "a stage change shows as drift"
tests/starters.py sync >out 2>&1 || { cat out; fail "sync carries a stage change"; }
grep -q 'return 11;' $C && grep -q 'stdlib' $C && grep -q 'TODO' $C || fail "sync kept the region and took the stage's lines"
cmp -s code/01-x/same.c code/01-x/exercises/1-ex/same.c || fail "sync makes a copy without regions its stage"
tests/starters.py check >out 2>&1 || { cat out; fail "check passes after sync"; }
grep -q REVIEW out && fail "no REVIEW when nothing changed under a region"
ok "sync carries stage changes outside the regions"
commit sync1

# The stage changes the lines a region replaces: sync keeps the region, says REVIEW.
sed -i 's/return 2;/return 22;/' $S
tests/starters.py check >/dev/null 2>&1 || fail "a change under a region is not drift"
tests/starters.py sync >out 2>&1 || { cat out; fail "sync with a change under a region"; }
grep -q "$C: REVIEW region 2" out && grep -q "$A: REVIEW region 1" out &&
    grep -q '^+    return 22;' out || { cat out; fail "sync says REVIEW with the diff"; }
grep -q 'return 0; /\* TODO' $C && grep -q 'return 2;' $A || fail "sync keeps the region's text"
ok "a stage change under a region: REVIEW, region kept"
commit sync2

# The stage changes the lines right at a region's bounds: sync refuses.
cp $C before
sed -i 's/^int two(void)$/int two(int x)/; s/^int one(void)$/int one(int x)/' $S
sed -i '/^int two/{n;s/^{$/{ \/* two *\//}' $S
tests/starters.py sync >out 2>&1 && fail "sync refuses a change at a region's bounds"
grep -q "$C: cannot place.*region 2 of 2.*changed the lines just before it" out || { cat out; fail "sync says which region"; }
cmp -s $C before || fail "a refused copy is left as it was"
grep -q '^int one(void)' $C || fail "a refused copy is left as it was"
ok "a stage change at a region's bound: sync refuses, file untouched"
# ... and once the lines around it are fixed by hand, sync goes on.
sed -i '/^int two/{n;s/^{$/{ \/* two *\//}' $C $A
sed -i 's/^int two(void)$/int two(int x)/' $C $A
tests/starters.py sync >out 2>&1 || { cat out; fail "sync after the fix by hand"; }
grep -q '^int one(int x)' $C && grep -q '^int one(int x)' $A || fail "sync after the fix by hand"
tests/starters.py check >/dev/null 2>&1 || fail "check after the fix by hand"
ok "after a fix by hand, sync and check pass"
cp $C before
tests/starters.py sync >/dev/null 2>&1 && cmp -s $C before || fail "sync twice changes nothing"
ok "sync twice changes nothing"
commit sync3

# A region that replaces no line, where the stage put new lines: refused.
printf 'a\nnew\nb\nc\n' >code/01-x/ins.c
tests/starters.py sync >out 2>&1 && fail "sync refuses new stage lines at an inserted region"
grep -q 'ins.c: cannot place.*at the place of' out || { cat out; fail "sync says where"; }
ok "new stage lines where a region was inserted: sync refuses"
