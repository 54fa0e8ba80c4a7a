# selector.gp -- chapter 07: the cost of one tick as watched fds accumulate,
# per selector backend (book/data/selector.dat, index 0, written by
# `make bench`, bench_selector.c).  Ten fds are ready at every tick; the
# others are idle.  The book's Makefile sets the terminal and the output.
# (the machine line of the data's header, its underscores escaped for
# gnuplot's enhanced text)
machine = system("sed -n 's/^# machine: //p' book/data/selector.dat | head -n 1 | sed 's/_/\\\\_/g'")
set datafile separator whitespace
set datafile missing "-"
set logscale xy
# A light, solid grid: dotted grid lines hid the dashed curves.
set grid xtics ytics mxtics mytics lw 0.5 lc rgb "#e4e4e4" dt solid, lw 0.5 lc rgb "#f0f0f0" dt solid
set key top left
set xlabel "watched fds (10 of them ready at each tick)"
set ylabel "CPU time per tick, µs (median of 7 runs)"
set xrange [80:*]
set autoscale xfixmax
set arrow from 1024, graph 0 to 1024, graph 1 nohead dt 3 lc rgb "#808080"
set label "FD\\_SETSIZE" at 1024, graph 0.06 offset 0.5,0 font ",9" textcolor rgb "#606060"
set format x "%.0f"
set title "One tick of the loop, by backend\n{/*0.8 ".machine."}"
plot "book/data/selector.dat" index 0 using 1:2 with linespoints lw 2 pt 7 lc rgb "#c06040" title "select (fds < FD\\_SETSIZE)", \
     "" index 0 using 1:3 with linespoints lw 2 pt 5 lc rgb "#4878a8" title "poll", \
     "" index 0 using 1:4 with linespoints lw 2 pt 9 lc rgb "#58a058" title "epoll"
