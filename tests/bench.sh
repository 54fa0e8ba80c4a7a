#!/bin/sh
# bench.sh -- `make bench`: run every stage's benchmark programs and write
# their data to book/data/NAME.dat, which the book's gnuplot scripts plot.
#
# A stage lists its benchmarks in its Makefile (BENCHES := bench_x ...); each
# is built with the stage and prints a gnuplot data block on stdout: comment
# lines (#) saying what the columns are, then the rows.  Every row is already
# a median of several runs (the program repeats itself; say how many in a
# comment).  This driver adds the header that makes the numbers mean
# something later: the date, the machine, the kernel, the compiler.
# BENCH=NAME (make bench BENCH=tasks) runs only the benchmarks of NAME.dat.
#
# Then chapter 11's comparison (BENCH=loops runs only it): tests/bench/
# loop_bench.c built against every stage, the peers (libuv, libev, libevent;
# tests/bench/peer_*.c) and the Python loops, all run side by side by
# tests/bench/loops.py into book/data/loops.dat (+ loops-summary.txt).
# tests/bench/syscalls.py counts the system calls of a round trip into
# book/data/syscalls.txt.  SCALE=0.01 (make check's smoke run) runs only that comparison, every N
# times SCALE, one round, into $OUT/bench/smoke/: every count is checked,
# no figure is touched.  ROUNDS=N: the rounds of a full run (default 5).
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
variant gcc
# bench_tasks (stage 09 on) runs CPython's side itself, with this script.
export PYTHON TASKS_PEER="$(pwd)/tests/bench/tasks_peer.py"
STAGES=$(cd code && ls -d [0-9][0-9]-* 2>/dev/null)
SCALE=${SCALE:-1}
mkdir -p book/data
status=0
[ "$SCALE" = 1 ] && for st in $STAGES; do
    benches=""
    for b in $(make -s -C "code/$st" print-BENCHES); do
        # make bench BENCH=NAME: only the benchmarks that write NAME.dat.
        [ -z "${BENCH:-}" ] || [ "$BENCH" = "${b#bench_}" ] && benches="$benches $b"
    done
    [ -n "$benches" ] || continue
    build_stage "$st" || exit 2
    for b in $benches; do
        out=book/data/${b#bench_}.dat
        echo "== $st/$b -> $out"
        {
            echo "# $out, written by 'make bench' ($st/$b) on $(date -u +%Y-%m-%d)"
            echo "# machine: $(uname -srm), $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
            echo "# compiler: $($CC --version | head -n 1); flags: $CFLAGS"
            (cd "$OUT/$st" && "./$b")
        } >"$out.tmp" && mv "$out.tmp" "$out" || { echo "FAILED: $st/$b"; rm -f "$out.tmp"; status=1; }
    done
done

# Chapter 11's comparison.
[ -z "${BENCH:-}" ] || [ "$BENCH" = loops ] || exit $status
bin=$OUT/bench
mkdir -p "$bin"
for st in $STAGES; do
    build_stage "$st" || exit 2
    n=$(stage_num "$st") # "08" would be a bad octal number in C: STAGE_NUM=8
    $CC $WARN $CFLAGS -DSTAGE_NUM="${n#0}" -I"code/$st" -o "$bin/loop_bench-$n" \
        tests/bench/loop_bench.c "$OUT/$st/libloop.a" -lm -lpthread || exit 2
done
# The peers, each with its library's pkg-config flags.
for peer in uv:libuv ev: event:"libevent_core libevent_pthreads"; do
    name=${peer%%:*} pkgs=${peer#*:}
    if [ -n "$pkgs" ]; then libs=$(pkg-config --cflags --libs $pkgs) || exit 2; else libs=-lev; fi
    $CC $WARN $CFLAGS -o "$bin/peer_$name" "tests/bench/peer_$name.c" $libs -lm -lpthread || exit 2
done
if [ "$SCALE" = 1 ]; then
    out=book/data/loops.dat rounds=${ROUNDS:-5}
else
    mkdir -p "$bin/smoke"; out=$bin/smoke/loops.dat rounds=1
fi
echo "== loops: every stage, libuv, libev, libevent, asyncio, uvloop -> $out"
CC=$CC CFLAGS=$CFLAGS "$PYTHON" tests/bench/loops.py --bin "$bin" --build "$OUT" --out "$out" \
    --rounds "$rounds" --scale "$SCALE" || status=1
# 题目2's answer: the system calls of a round trip, asyncio's, uvloop's and ours.
if [ "$SCALE" = 1 ]; then
    echo "== syscalls: strace of pingpong -> book/data/syscalls.txt"
    "$PYTHON" tests/bench/syscalls.py --bin "$bin" >book/data/syscalls.txt.tmp &&
        mv book/data/syscalls.txt.tmp book/data/syscalls.txt || status=1
fi
exit $status
