# tasks.gp -- chapter 09's figure: what a task costs here, in asyncio and in
# uvloop (medians with min-max bars, ns per operation, lower is better).
# Data: book/data/tasks.dat (make bench, code/09-tasks/bench_tasks.c with
# tests/bench/tasks_peer.py).  The book's build sets the terminal and the
# output file.
set multiplot layout 1,2
set grid ytics
set style fill solid 0.5 border -1
set boxwidth 0.6
set yrange [0:*]
set xtics scale 0
unset key
set ylabel "ns per task"
set title "create and complete a task (sleep(0), return)"
plot 'book/data/tasks.dat' index 0 using 0:2:xtic(1) with boxes lc rgb "#4477aa", \
     ''                    index 0 using 0:2:3:4 with yerrorbars lc rgb "black" pt 0
set ylabel "ns per await"
set title "a chain of awaits"
plot 'book/data/tasks.dat' index 1 using 0:2:xtic(1) with boxes lc rgb "#4477aa", \
     ''                    index 1 using 0:2:3:4 with yerrorbars lc rgb "black" pt 0
unset multiplot
