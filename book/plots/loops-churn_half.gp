# loops-churn_half.gp -- chapter 11: schedule 1,000,000 timers, cancel every second one (book/data/loops.dat, index 4).
call "book/plots/loops.gpi" "4" "schedule 1,000,000 timers, cancel every second one, one turn" "ns per timer (log scale)" "log"
