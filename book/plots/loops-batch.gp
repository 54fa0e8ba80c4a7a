# loops-batch.gp -- chapter 11: queue 1,000,000 callbacks, then run them (book/data/loops.dat, index 0).
call "book/plots/loops.gpi" "0" "queue 1,000,000 callbacks, then run them" "ns per callback (log scale)" "log"
