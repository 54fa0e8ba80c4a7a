# cover.gp: the EPUB's cover (book.mk: gnuplot -e "set output 'cover.png'" cover.gp).
# A timer heap drawn as a tree, the title, and the articles' word for it.
set terminal pngcairo size 1200,1800 enhanced font "Noto Sans CJK SC,28" background rgb "#1a3a5c"
unset border; unset tics; unset key
set xrange [0:12]; set yrange [0:18]
set margins 0,0,0,0
set style fill solid 1.0 border rgb "#9ec5ee"
# the heap: 1, 3, 2, 7, 4, 5, 9 at depths 0..2
array X[7] = [6, 3, 9, 1.5, 4.5, 7.5, 10.5]
array Y[7] = [8.6, 6.6, 6.6, 4.6, 4.6, 4.6, 4.6]
array V[7] = ["0.1", "0.3", "0.2", "0.7", "0.4", "0.5", "0.9"]
do for [i=2:7] { p = int(i/2); set arrow from X[p],Y[p] to X[i],Y[i] nohead lw 4 lc rgb "#9ec5ee" back }
do for [i=1:7] {
  set object circle at X[i],Y[i] size 0.75 fc rgb (i == 1 ? "#f6c343" : "#2f6aa3") front
  set label V[i] at X[i],Y[i] center front tc rgb (i == 1 ? "#1a3a5c" : "#ffffff") font ",26"
}
set label "An Event Loop in C" at 6,15.2 center tc rgb "#ffffff" font ",64"
set label "One Chapter at a Time" at 6,13.6 center tc rgb "#ffffff" font ",44"
set label "事件循环 · 就绪队列 · 定时器堆 · 选择器" at 6,11.6 center tc rgb "#f6c343" font ",32"
set label "asyncio's loop, rebuilt in C from select() to epoll" at 6,2.2 center tc rgb "#cfe0f2" font ",26"
set label "and checked against CPython" at 6,1.4 center tc rgb "#cfe0f2" font ",26"
plot NaN
