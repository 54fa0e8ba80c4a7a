# loops-chain.gp -- chapter 11: one callback re-queues itself 1,000,000 times (book/data/loops.dat, index 1).
call "book/plots/loops.gpi" "1" "one callback re-queues itself 1,000,000 times" "ns per callback (log scale)" "log"
