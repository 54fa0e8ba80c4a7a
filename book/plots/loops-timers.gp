# loops-timers.gp -- chapter 11: 1,000,000 timers at random deadlines in [0,1) s (book/data/loops.dat, index 2).
call "book/plots/loops.gpi" "2" "1,000,000 timers at random deadlines in [0,1) s" "CPU ns per timer (log scale)" "log"
