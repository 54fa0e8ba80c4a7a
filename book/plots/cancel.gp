# cancel.gp -- chapter 05's figure: the timer heap under a cancel-heavy
# workload (a 30 s timeout per request, 19 in 20 cancelled 50 ms later),
# for three ways of cancelling.  Data: book/data/cancel.dat (make bench,
# code/05-lazy-cancel/bench_cancel.c).  The book's build sets the terminal
# and the output file.
set multiplot layout 2,1
set grid
set key bottom right
set xrange [0:60]
set logscale y
set format y "%.0s%c"
set ylabel "entries in the heap"
set title "Timer heap under a timeout per request, 95% cancelled"
plot 'book/data/cancel.dat' index 0 using 1:4 with lines lw 2 title "lazy, head pops only", \
     ''                     index 0 using 1:2 with lines lw 2 title "lazy + rebuild (CPython)", \
     ''                     index 0 using 1:6 with lines lw 2 title "removal at cancel (libuv)"
unset title
unset logscale y
set format y "%g"
set xlabel "virtual time (s)"
set ylabel "MiB allocated"
set key right center
plot 'book/data/cancel.dat' index 0 using 1:($5/1048576) with lines lw 2 title "lazy, head pops only", \
     ''                     index 0 using 1:($3/1048576) with lines lw 2 title "lazy + rebuild (CPython)", \
     ''                     index 0 using 1:($7/1048576) with lines lw 2 title "removal at cancel (libuv)"
unset multiplot
