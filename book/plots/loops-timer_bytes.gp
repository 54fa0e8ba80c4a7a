# loops-timer_bytes.gp -- chapter 11: 1,000,000 pending timers (book/data/loops.dat, index 7).
call "book/plots/loops.gpi" "7" "1,000,000 pending timers" "bytes per pending timer" "lin"
