# wakeup.gp -- chapter 06: what a cross-thread call costs, per way of waking
# the loop (book/data/wakeup.dat, written by `make bench`, bench_wakeup.c).
# Left: latency of one call to a sleeping loop.  Right: wall time per call
# when 4 threads call as fast as they can, with the write()s per call above
# each bar.  The book's Makefile sets the terminal and the output.
set datafile separator whitespace
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.8
set grid ytics
set key off
set yrange [0:*]
set xtics font ",9"
set multiplot layout 1,2 title "Waking the loop from another thread (medians of 5 runs)"
set title "latency: one call to a loop\nasleep in select()"
set ylabel "microseconds"
plot "book/data/wakeup.dat" using 2:xtic(1) linecolor rgb "#4878a8", \
     "" using 0:2:(sprintf("%.1f", $2)) with labels offset 0,0.8 notitle
set title "4 threads x 200,000 calls\n(above the bars: write()s per call)"
set ylabel "nanoseconds per call"
plot "book/data/wakeup.dat" using 3:xtic(1) linecolor rgb "#c06040", \
     "" using 0:3:(sprintf("%.2g", $4)) with labels offset 0,0.8 notitle
unset multiplot
