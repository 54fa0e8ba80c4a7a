# fast-steps.gp -- chapter 11's figure of the task steps: every build of steps
# T1 to T6, each in one run with the others, stage 10's task code first: once
# on stage 10's loop (light), once on stage 11's (dark).  Medians with min-max
# bars, ns per operation, lower is better.  Data: book/data/fast-steps.dat,
# indexes 2 and 5 (measured while stage 11 was written; its header says how).
# The book's build sets the terminal and the output file.
set datafile missing "-"
set multiplot layout 1,2
set grid ytics
set style fill solid 0.8 border -1
set boxwidth 0.38
set yrange [0:*]
set xrange [-0.6:6.6]
set xtics scale 0
set key below horizontal
# short tick labels: "stage 10" is 10
label(i) = i == 0 ? "10" : strcol(1)
set ylabel "ns per task"
set title "create and complete a task"
plot 'book/data/fast-steps.dat' index 2 every ::0::6 using ($0-0.2):5:xtic(label($0)) with boxes lc rgb "#99bbdd" title "stage 10's loop", \
     ''                         index 5 using ($0+0.2):5 with boxes lc rgb "#1f4e9a" title "stage 11's loop", \
     ''                         index 2 every ::0::6 using ($0-0.2):5:6:7 with yerrorbars lc rgb "black" pt 0 notitle, \
     ''                         index 5 using ($0+0.2):5:6:7 with yerrorbars lc rgb "black" pt 0 notitle
set ylabel "ns per await"
set title "a chain of awaits"
plot 'book/data/fast-steps.dat' index 2 every ::0::6 using ($0-0.2):2:xtic(label($0)) with boxes lc rgb "#99bbdd" title "stage 10's loop", \
     ''                         index 5 using ($0+0.2):2 with boxes lc rgb "#1f4e9a" title "stage 11's loop", \
     ''                         index 2 every ::0::6 using ($0-0.2):2:3:4 with yerrorbars lc rgb "black" pt 0 notitle, \
     ''                         index 5 using ($0+0.2):2:3:4 with yerrorbars lc rgb "black" pt 0 notitle
unset multiplot
