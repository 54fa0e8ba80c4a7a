#!/bin/sh
# grade.sh NN SUBMISSIONS [OUT] -- grade a class's work on chapter NN's exercises.
#
# SUBMISSIONS holds one folder per student; a student's folder holds one
# folder per exercise handed in (K-name/, as in the handout: the student's
# edited copies of that exercise's files; a file left out is the starter's),
# or the handout's own tree (code/NN-slug/exercises/K-name/).  Every exercise
# test runs against every student's files, built and run twice: plain (gcc)
# and under ASan+UBSan.  Writes OUT/grades.csv (student,exercise,outcome,
# detail) and OUT/grades.txt (a student x exercise table, then the details);
# OUT defaults to $BUILD/grade/NN.  An outcome is one of
#   passed          both runs passed
#   failed          the test's first failing check (Check's message), or
#                   "not accepted: ..." (below)
#   did not compile the compiler's first error
#   timed out       a test past Check's time limit (then ASan does not run),
#                   or the run past GRADE_TIME_LIMIT (default 60 s)
#   crashed         the sanitizer's first line
#   missing         nothing handed in for that exercise
# in this order of precedence: not accepted (files), did not compile, not
# accepted (code), crashed, timed out, failed.  Not accepted: a file the
# exercise does not have (but a new .c file), a header changed that the test
# includes, a .c file named like a stage file the exercise does not change;
# code that defines a C library or Check function, or runs before main; a
# file that is the stage's own (see suspicious() below).
#
# The sandbox.  Each build and each run happens in a scratch copy made from
# the chapter's handout (tests/handout.sh: it holds no answers), under
# timeout(1), with a limit on virtual memory (plain runs and builds:
# GRADE_MEMORY_MB, default 2048; the ASan run instead gets ASan's own
# hard_rss_limit_mb, since ASan reserves terabytes of address space) and on
# the number of processes (GRADE_PROCS, default 64), set with prlimit.  As
# root, the student's code runs as the user nobody (setpriv), since a
# process limit does not hold for root; and when mount and PID namespaces
# are available (unshare), in its own: the scratch copy is mounted over this repository's path, so
# the repository (and its answers) is not there to read or write, nor is
# any other copy beside it or under /work, /home, /root, /srv, /opt, /mnt or
# /media (each gets an empty folder mounted over it); /tmp,
# /var/tmp and /dev/shm are empty and private; there is no network; and
# when the run ends or is killed, every process it started dies with it.
# Without namespaces it says so on its first line ("sandbox: ...").
#
#   grade.sh --test   grades the fixture class tests/grade/class/ on
#                     chapter 04 and compares with tests/grade/expected.csv
#                     and expected.txt (run by make check).
#   grade.sh --cheats each cheat of tests/grade/cheats/ fails its test
#                     (run by make check).
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
repo=$(pwd)

if [ "${1:-}" = --test ]; then
    tmp=$(mktemp -d) || exit 2
    trap 'rm -rf "$tmp"' EXIT
    # The class: the fixtures (tests/grade/README.md says what each student
    # did), and ada, whose work is the worked answers.
    cp -R tests/grade/class "$tmp/class" || exit 2
    mkdir -p "$tmp/class/ada"
    cp -R code/04-snapshot/exercises/answers/* "$tmp/class/ada/" || exit 2
    # zoe's cheat for exercise 1: the stage's own loop.c handed in as hers.
    mkdir -p "$tmp/class/zoe/1-snapshot"
    cp code/04-snapshot/loop.c "$tmp/class/zoe/1-snapshot/" || exit 2
    # hal and ivy try to read the answers and to write into the repository:
    # only namespaces keep them out when the repository is readable to all
    # (as root without them, or not as root): then they stay home.
    ns=no
    [ "$(id -u)" -eq 0 ] && [ "${GRADE_SANDBOX:-}" != nobody ] &&
        unshare --mount --pid --fork --net --mount-proc --propagation private true 2>/dev/null && ns=yes
    [ $ns = yes ] || rm -rf "$tmp/class/hal" "$tmp/class/ivy"
    t0=$(date +%s)
    GRADE_TIME_LIMIT=${GRADE_TIME_LIMIT:-20} GRADE_MEMORY_MB=${GRADE_MEMORY_MB:-512} \
        tests/grade.sh 04 "$tmp/class" "$tmp/out" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
    head -n 1 "$tmp/log"
    echo "graded the fixture class in $(( $(date +%s) - t0 )) s"
    bad=0
    cp tests/grade/expected.csv tests/grade/expected.txt "$tmp/" || exit 2
    if [ $ns = no ]; then
        echo "NOTE: no namespaces here: hal and ivy (reading the answers, writing outside) are not graded"
        for f in "$tmp/expected.csv" "$tmp/expected.txt" "$tmp/out/grades.csv" "$tmp/out/grades.txt"; do
            grep -v '^\(hal\|ivy\)[ ,]\|^chapter ' "$f" >"$f.x" && mv "$f.x" "$f"
        done
    fi
    diff -u "$tmp/expected.csv" "$tmp/out/grades.csv" || bad=1
    diff -u "$tmp/expected.txt" "$tmp/out/grades.txt" || bad=1
    # Nothing left running (fay's fork bomb: with namespaces, the kernel
    # ends a PID namespace's processes with it, and another grading that
    # runs beside this one would show here), nothing written outside the
    # student's folder (ivy).
    if [ $ns = no ] && ps -u 65534 -o args= 2>/dev/null | grep -q 'starter/[0-9]-'; then
        echo "a student's process outlived the grading:"; ps -u 65534 -o pid=,args= | grep 'starter/'; bad=1
    fi
    for f in "$repo/tests/grade/ESCAPED" /tmp/ESCAPED-by-vandal; do
        [ -e "$f" ] && { echo "the vandal wrote $f"; rm -f "$f"; bad=1; }
    done
    rm -rf "$BUILD/grade/fixture" && mkdir -p "$BUILD/grade" && cp -R "$tmp/out" "$BUILD/grade/fixture"
    [ $bad -eq 0 ] || { echo "(got $BUILD/grade/fixture/grades.csv; expected tests/grade/expected.csv)"; exit 1; }
    sed -n '3,/^$/p' "$tmp/out/grades.txt"
    echo "the fixture class's grades are tests/grade/expected.csv"
    exit 0
fi

# --cheats: each tests/grade/cheats/NN-slug/K-name/ holds a cheat for that
# exercise (our own code, built without the sandbox from the chapter's
# handout): its test must fail.  A cheat is kept as FILE.patch, a unified
# diff against the exercise's starter FILE, so that only the trick is
# written down, not a second copy of the stage's file.
if [ "${1:-}" = --cheats ]; then
    tmp=$(mktemp -d) || exit 2
    trap 'rm -rf "$tmp"' EXIT
    bad=0
    for c in tests/grade/cheats/*/*/; do
        c=${c%/}; ex=$(basename "$c"); st=$(basename "$(dirname "$c")")
        rm -rf "$tmp/h" && mkdir "$tmp/h" && tests/handout.sh "$(stage_num "$st")" "$tmp/h.tgz" >/dev/null &&
            tar xzf "$tmp/h.tgz" -C "$tmp/h" --strip-components=1 || exit 2
        for p in "$c"/*.patch; do
            patch -s -p1 -d "$tmp/h/code/$st/exercises/$ex" <"$p" || exit 2
        done
        (cd "$tmp/h" && BUILD=build && . tests/lib.sh && variant gcc && build_stage "$st" &&
            build_exercise "$st" "$ex" starter && "$OUT/exercises/$st/starter/$ex") >"$tmp/log" 2>&1
        if [ $? -eq 0 ]; then
            echo "the cheat $c passes its test:"; tail -n 5 "$tmp/log"; bad=1
        else
            echo "the cheat $c fails its test: $(grep -m 1 -E ':[FE]:' "$tmp/log" | sed -E 's/^[^:]+:[0-9]+:[FE]:[^:]*:([^:]*):[0-9]+: /\1: /')"
        fi
    done
    exit $bad
fi

ch=${1:-}; subs=${2:-}
[ -n "$ch" ] && [ -d "$subs" ] ||
    { echo "usage: make grade CH=NN SUBMISSIONS=folder [OUT=folder]   (one folder per student)" >&2; exit 2; }
stage=$(cd code && ls -d "$ch"-* 2>/dev/null | head -n 1)
[ -n "$stage" ] || { echo "grade.sh: no chapter '$ch' under code/ (try CH=04)" >&2; exit 2; }
subs=$(cd "$subs" && pwd)
out=${3:-$BUILD/grade/$ch}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
limit=${GRADE_TIME_LIMIT:-60}
build_limit=${GRADE_BUILD_LIMIT:-180}
mem_kb=$(( ${GRADE_MEMORY_MB:-2048} * 1024 ))
procs=${GRADE_PROCS:-64}

work=$(mktemp -d /tmp/grade-XXXXXX) || exit 2
trap 'rm -rf "$work"' EXIT
chmod 711 "$work"

# The base tree: the handout, with the stage built plain and under ASan
# (the stage's own code, trusted: built here, outside the sandbox).
tests/handout.sh "$ch" "$work/handout.tar.gz" >"$work/handout.log" 2>&1 ||
    { cat "$work/handout.log"; exit 2; }
mkdir "$work/base" && tar xzf "$work/handout.tar.gz" -C "$work/base" --strip-components=1 || exit 2
(cd "$work/base" && BUILD=build && . tests/lib.sh && variant gcc && build_stage "$stage" &&
    variant asan && build_stage "$stage") >"$work/base.log" 2>&1 ||
    { cat "$work/base.log"; echo "grade.sh: the stage does not build" >&2; exit 2; }
chmod -R go+rX "$work/base"

# How to sandbox: ns (namespaces + nobody), nobody (setpriv only), self.
sandbox=self
if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null || { echo "grade.sh: as root, setpriv is needed (util-linux)" >&2; exit 2; }
    sandbox=nobody
    unshare --mount --pid --fork --net --mount-proc --propagation private true 2>/dev/null && sandbox=ns
fi
# GRADE_SANDBOX=nobody: without namespaces, as where unshare is not allowed
# (to try that case here).
[ "${GRADE_SANDBOX:-}" = nobody ] && [ $sandbox = ns ] && sandbox=nobody
case $sandbox in
ns)     echo "sandbox: namespaces (mount, pid, net), user nobody, $procs processes, ${limit} s a run" ;;
nobody) echo "sandbox: user nobody, $procs processes, ${limit} s a run; NO mount namespace: the repository is readable to nobody" ;;
self)   echo "sandbox: NOT root: the student's code runs as $(id -un), with $procs more processes, ${limit} s a run; the repository is readable to it" ;;
esac

# jail SECONDS VMEM_KB LOG SCRIPT: run the sh SCRIPT in the scratch copy
# $run, sandboxed; its output goes to LOG; returns its status (124 or 137:
# timed out).
jail() {
    j_limit=$1 j_vm=$2 j_log=$3; shift 3
    j_nproc=$procs
    [ $sandbox = self ] && j_nproc=$(( $(ps -u "$(id -u)" -o pid= | wc -l) + procs ))
    j_lim="prlimit --core=0 --nproc=$j_nproc ${j_vm:+--as=$(( j_vm * 1024 ))} --"
    j_inner="$*"
    j_env="env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent LANG=C BUILD=build \
ASAN_OPTIONS=hard_rss_limit_mb=${GRADE_MEMORY_MB:-2048}:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1"
    case $sandbox in
    ns)
        timeout -k 2 "$j_limit" unshare --mount --pid --fork --kill-child --net --mount-proc --propagation private \
            sh -c 'run=$1 repo=$2 env=$3 lim=$4 inner=$5
                   # /tmp, /var/tmp and /dev/shm private and empty first; then the
                   # scratch copy (held open: it may be under /tmp) over the
                   # repository path (made again if it was under one of them).
                   exec 3<"$run" || exit 97
                   for d in /tmp /var/tmp /dev/shm; do
                       [ -d $d ] || continue
                       mount -t tmpfs -o size=64m,mode=1777 none $d || exit 97
                   done
                   mkdir -p "$repo" && mount --bind /proc/self/fd/3 "$repo" || exit 97
                   exec 3<&-
                   # Other copies of the repository on this machine (a CI clone
                   # beside a work tree): an empty folder over every sibling of
                   # each folder on the way to the repository, and over the
                   # top-level places where people keep them.
                   p=$repo
                   while [ "$p" != / ]; do
                       up=$(dirname "$p")
                       if [ "$up" = / ]; then set -- /work /home /root /srv /opt /mnt /media
                       else set -- "$up"/* "$up"/.[!.]*; fi
                       for e do
                           [ "$e" != "$p" ] && [ -d "$e" ] && [ ! -L "$e" ] || continue
                           mount -t tmpfs -o size=1m,mode=755 none "$e" || exit 97
                       done
                       p=$up
                   done
                   cd "$repo" && exec setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs $env $lim sh -c "$inner"' \
            jail "$run" "$repo" "$j_env" "$j_lim" "$j_inner" >"$j_log" 2>&1 ;;
    nobody)
        (cd "$run" && timeout -k 2 "$j_limit" setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs \
            $j_env $j_lim sh -c "$j_inner") >"$j_log" 2>&1 ;;
    self)
        (cd "$run" && timeout -k 2 "$j_limit" $j_env $j_lim sh -c "$j_inner") >"$j_log" 2>&1 ;;
    esac
}

# first_error LOG: the compiler's first error, paths made relative.
first_error() {
    grep -m 1 -E ': (fatal )?error: |undefined reference|ld returned' "$1" |
        sed -E "s|$run/||g; s|$repo/||g"
}
# sanitizer_line LOG: the sanitizer's first line, without pids and addresses.
sanitizer_line() {
    grep -E 'ERROR: [A-Za-z]*Sanitizer|Sanitizer: hard rss limit|runtime error: ' "$1" |
        { [ -n "${2:-}" ] && cat || grep -v LeakSanitizer; } | head -n 1 |
        sed -E 's/^==[0-9]+==//; s/ on (unknown )?address 0x[0-9a-f]+.*//; s/ \(pc 0x.*//;
                s/ \([0-9]+Mb vs [0-9]+Mb\)//; s/ \(tid=[0-9]+\)//; s|^[^ ]*/([^/ ]*:[0-9]+:[0-9]+: runtime error)|\1|'
}
# check_line LOG: Check's first failing check, "test: message".
check_line() {
    grep -m 1 -E '^[^: ]+:[0-9]+:[FE]:' ${1:+"$1"} | sed -E 's/^[^:]+:[0-9]+:[FE]:[^:]*:([^:]*):[0-9]+: /\1: /'
}

# A test cannot be kept honest against code that runs in its own process
# and undoes it: a constructor that exits 0 before main, or a function of
# the C library (popen, exit, ...) or of Check defined again, which the
# test's own calls then reach.  So the student's files are compiled alone
# too, and their objects' global symbols and sections compared with those
# of the starter and of the worked answer (anything new is refused when a
# library defines it too, or when it is a constructor's section); and a
# file that is the stage's own file of that name, comments and spaces
# aside, is a copy of the chapter's code, not the student's work (unless
# the worked answer is that code too: 05's one bug, 06's lost wake-up).
# objscan FOLDER: print "SYM name" and "SEC name" for the .c files of
# FOLDER, compiled as build_exercise compiles them (into $OBJ).
OBJSCAN='mkdir -p "$OBJ" && for f in "$DIR"/*.c; do
    o=$OBJ/$(basename "$f" .c).o
    $CC $WARN $CFLAGS -I "$DIR" -I code/$STAGE -I tests/support $CHECK_CFLAGS -c -o "$o" "$f" || exit 1
    nm -g --defined-only "$o" | sed -n "s/^[0-9a-f]* [A-Z] /SYM /p"
    readelf -SW "$o" | sed -n "s/^ *\[ *[0-9]*\] \([^ ]*\) .*/SEC \1/p"
done'
libsyms() {
    { for l in /lib/*/libc.so.6 /lib/*/libm.so.6 /usr/lib/*/librt.so.1; do
          [ -f "$l" ] && nm -D --defined-only "$l"; done
      for l in /usr/lib/*/libcheck_pic.a /usr/lib/*/libcheck.a /usr/lib/*/libsubunit.a; do
          [ -f "$l" ] && nm -g --defined-only "$l" 2>/dev/null; done
    } | sed -n 's/^[0-9a-f]* [A-Za-z] \([^@ ]*\).*/\1/p' | sort -u
}
# allowed EXERCISE: the scan of the starter and of the answer (trusted).
allowed() {
    for d in code/$stage/exercises/$1 code/$stage/exercises/answers/$1; do
        [ -d "$d" ] && DIR=$d OBJ=$work/obj/$1 STAGE=$stage sh -c ". tests/lib.sh && variant gcc && $OBJSCAN"
    done | sort -u
}
# suspicious EXERCISE SCAN FOLDER: why the student's files are not accepted
# (nothing when they are).
suspicious() {
    [ -f "$work/allowed-$1" ] || allowed "$1" >"$work/allowed-$1"
    [ -f "$work/libsyms" ] || libsyms >"$work/libsyms"
    sort -u "$2" | comm -23 - "$work/allowed-$1" | while read -r kind name; do
        case $kind in
        SYM) grep -qx "$name" "$work/libsyms" &&
             echo "defines $name(), a library function the test may call" ;;
        SEC) case $name in .init_array*|.ctors*|.preinit_array*|.fini_array*|.dtors*)
             echo "runs code before or after main (a $name section)" ;; esac ;;
        esac
    done | head -n 1
    for f in "$3"/*; do
        b=$(basename "$f")
        [ -f "code/$stage/$b" ] || continue
        "${PYTHON:-/usr/bin/python3}" - "$f" "code/$stage/$b" "code/$stage/exercises/$1/$b" \
            "code/$stage/exercises/answers/$1/$b" <<'PYEOF'
import os, re, sys
def bare(p):
    if not os.path.exists(p):
        return None
    t = open(p, errors="replace").read()
    t = re.sub(r"/\*.*?\*/|//[^\n]*", "", t, flags=re.S)
    return "".join(t.split())
student, stage, starter, answer = (bare(p) for p in sys.argv[1:])
# Not when the worked answer is the stage's code too (a bug to fix).
if student == stage and starter != stage and answer != stage:
    print("the stage's own %s, copied" % sys.argv[2].split("/")[-1])
PYEOF
    done | head -n 1
}

# grade_one STUDENT EXERCISE FOLDER: prints "outcome<TAB>detail".
grade_one() {
    run=$work/run
    rm -rf "$run" && cp -a "$work/base" "$run" || return 2
    exdir=$run/code/$stage/exercises/$2
    # The files a student may hand in: the exercise's own (its headers only
    # as given, when the worked answer keeps them so: they are the interface
    # the test includes), and new .c files.  Any other file could stand in
    # for a header of the test's (check.h, check_main.h: the exercise's
    # folder comes first on the include path).
    refused=""
    for f in "$3"/* "$3"/.[!.]*; do  # regular files only: no links, no folders
        [ -f "$f" ] && [ ! -L "$f" ] || continue
        b=$(basename "$f")
        case $b in *[!A-Za-z0-9_.-]*) continue ;; esac
        given=$work/base/code/$stage/exercises/$2/$b answer=code/$stage/exercises/answers/$2/$b
        if [ ! -f "$given" ]; then
            case $b in
            *.c) [ -f "code/$stage/$b" ] &&
                 refused=${refused:-"$b would replace the stage's own $b, which this exercise does not change"} ;;
            *) refused=${refused:-"$b is not a file of this exercise (only new .c files may be added)"} ;;
            esac
        elif case $b in *.h) true ;; *) false ;; esac && ! cmp -s "$f" "$given" && cmp -s "$given" "$answer"; then
            refused=${refused:-"$b differs from the handout's (a header the test includes: the exercise's interface)"}
        fi
        cp "$f" "$exdir/" || return 2
    done
    if [ -n "$refused" ]; then
        printf 'failed\tnot accepted: %s\n' "$refused"
        return 0
    fi
    mkdir -p "$run/build/exercises" "$run/build/asan/exercises"
    chown -R 65534:65534 "$run/build/exercises" "$run/build/asan/exercises" 2>/dev/null
    logs=$out/logs/$1/$2
    mkdir -p "$logs"
    bin=build/exercises/$stage/starter/$2
    jail "$build_limit" "$mem_kb" "$logs/build.log" ". tests/lib.sh && variant gcc && build_exercise $stage $2 starter &&
        DIR=code/$stage/exercises/$2 OBJ=build/exercises/obj STAGE=$stage && $OBJSCAN >build/exercises/scan.txt"
    rc=$?
    if [ $rc -ne 0 ]; then
        if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
            printf 'did not compile\tthe build took over %s s\n' "$build_limit"
        else
            printf 'did not compile\t%s\n' "$(first_error "$logs/build.log")"
        fi
        return 0
    fi
    jail "$limit" "$mem_kb" "$logs/run.log" "CK_TIMEOUT_MULTIPLIER=1 ./$bin"
    plain=$?
    # ASan: not after a plain run that timed out, as a whole or in one of
    # Check's tests (4 s each): that verdict stands, and ASan, which must
    # run without Check's forks and so without its time limits, would only
    # spin to the end of its own.  In
    # one process (CK_FORK=no), where ASan's RSS limit holds (its watcher
    # thread is not in a forked child); a leak counts only when the plain
    # run passed (a failed check leaves its test's memory behind).
    abuilt=0 asan=0
    : >"$logs/asan-run.log"
    if [ $plain -ne 124 ] && [ $plain -ne 137 ] && ! grep -q 'Test timeout expired' "$logs/run.log"; then
        jail "$build_limit" "" "$logs/asan-build.log" ". tests/lib.sh && variant asan && build_exercise $stage $2 starter"
        abuilt=$?
        if [ $abuilt -eq 0 ]; then
            jail $(( limit * 2 )) "" "$logs/asan-run.log" "CK_FORK=no ./build/asan/exercises/$stage/starter/$2"
            asan=$?
        fi
    fi
    why=$(suspicious "$2" "$run/build/exercises/scan.txt" "$exdir" | head -n 1)
    leaks=""; [ $plain -eq 0 ] && leaks=yes
    s=$(sanitizer_line "$logs/asan-run.log" $leaks)
    [ -n "$s" ] || s=$(sanitizer_line "$logs/run.log" $leaks)
    if [ $abuilt -ne 0 ]; then
        printf 'did not compile\t(under ASan) %s\n' "$(first_error "$logs/asan-build.log")"
    elif [ -n "$why" ]; then
        printf 'failed\tnot accepted: %s\n' "$why"
    elif [ -n "$s" ]; then
        printf 'crashed\t%s\n' "$s"
    elif [ $plain -eq 124 ] || [ $plain -eq 137 ]; then
        printf 'timed out\tthe run took over %s s\n' "$limit"
    elif [ $asan -eq 124 ] || [ $asan -eq 137 ]; then
        printf 'timed out\tthe run under ASan took over %s s\n' "$(( limit * 2 ))"
    elif grep -q 'Test timeout expired' "$logs/run.log" "$logs/asan-run.log"; then
        printf 'timed out\t%s\n' "$(cat "$logs/run.log" "$logs/asan-run.log" | check_line | grep -m 1 'Test timeout expired')"
    elif [ $plain -ne 0 ]; then
        c=$(check_line "$logs/run.log")
        printf 'failed\t%s\n' "${c:-exit status $plain}"
    elif [ $asan -ne 0 ]; then
        c=$(check_line "$logs/asan-run.log")
        printf 'failed\t(under ASan) %s\n' "${c:-exit status $asan}"
    else
        printf 'passed\t\n'
    fi
}

csv() { printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"; }

exlist=$(exercises "$stage")
students=$(cd "$subs" && for d in *; do [ -d "$d" ] && [ ! -L "$d" ] && echo "$d"; done)
[ -n "$students" ] || { echo "grade.sh: no student folders in $subs" >&2; exit 2; }
rm -rf "$out/logs"
echo "student,exercise,outcome,detail" >"$work/grades.csv"
for s in $students; do
    for ex in $exlist; do
        src=$subs/$s/$ex
        [ -d "$src" ] || src=$subs/$s/code/$stage/exercises/$ex
        if [ -d "$src" ] && [ ! -L "$src" ] && [ -n "$(ls -A "$src")" ]; then
            r=$(grade_one "$s" "$ex" "$src")
        else
            r=$(printf 'missing\t')
        fi
        o=${r%%"	"*}; d=${r#*"	"}
        echo "$s,$ex,$o,$(csv "$d")" >>"$work/grades.csv"
        printf '%-12s %-18s %s\n' "$s" "$ex" "$o${d:+: $d}"
    done
done
mv "$work/grades.csv" "$out/grades.csv"
"${PYTHON:-/usr/bin/python3}" - "$out/grades.csv" "$stage" >"$out/grades.txt" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
exs = list(dict.fromkeys(r["exercise"] for r in rows))
students = list(dict.fromkeys(r["student"] for r in rows))
cell = {(r["student"], r["exercise"]): r for r in rows}
w = max(len(s) for s in students + ["student"])
cw = [max(len(e), max(len(cell[s, e]["outcome"]) for s in students)) for e in exs]
line = lambda cols: ("%-*s  " % (w, cols[0]) + "  ".join("%-*s" % (c, x) for c, x in zip(cw, cols[1:]))).rstrip()
print("chapter %s: %d students x %d exercises" % (sys.argv[2], len(students), len(exs)))
print()
print(line(["student"] + exs))
print(line(["-" * w] + ["-" * c for c in cw]))
for s in students:
    print(line([s] + [cell[s, e]["outcome"] for e in exs]))
print()
for s in students:
    for e in exs:
        r = cell[s, e]
        if r["detail"]:
            print("%s, %s: %s: %s" % (s, e, r["outcome"], r["detail"]))
EOF
echo "grades: $out/grades.csv and $out/grades.txt"
