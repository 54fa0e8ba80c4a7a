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
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
variant gcc
# bench_tasks (stage 09 on) runs CPython's side itself, with this script.
export PYTHON TASKS_PEER="$(pwd)/tests/bench/tasks_peer.py"
STAGES=$(cd code && ls -d [0-9][0-9]-* 2>/dev/null)
mkdir -p book/data
status=0
for st in $STAGES; do
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
exit $status
