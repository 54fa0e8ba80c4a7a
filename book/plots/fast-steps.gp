# fast-steps.gp -- chapter 11's figure of the task steps: every build of steps
# T1 to T6 in one run, stage 10 first, the loop's steps L1 + L2 last (medians
# with min-max bars, ns per operation, lower is better).  Data: book/data/
# fast-steps.dat, index 2 (measured while stage 11 was written; its header says
# how).  The book's build sets the terminal and the output file.
set datafile missing "-"
set multiplot layout 1,2
set grid ytics
set style fill solid 0.6 border -1
set boxwidth 0.6
set yrange [0:*]
set xtics scale 0
# short tick labels: "stage 10" is 10, "T6+L1+L2" is +L1L2
label(i) = i == 0 ? "10" : i == 7 ? "+L1L2" : strcol(1)
unset key
set ylabel "ns per task"
set title "create and complete a task"
plot 'book/data/fast-steps.dat' index 2 using 0:5:xtic(label($0)) with boxes lc rgb "#1f4e9a", \
     ''                         index 2 using 0:5:6:7 with yerrorbars lc rgb "black" pt 0
set ylabel "ns per await"
set title "a chain of awaits"
plot 'book/data/fast-steps.dat' index 2 using 0:2:xtic(label($0)) with boxes lc rgb "#1f4e9a", \
     ''                         index 2 using 0:2:3:4 with yerrorbars lc rgb "black" pt 0
unset multiplot
