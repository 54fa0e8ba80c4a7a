# loops-tasks_chain.gp -- chapter 11: a chain of 1,000,000 awaits (book/data/loops.dat, index 9).
call "book/plots/loops.gpi" "9" "a chain of 1,000,000 awaits" "ns per await (log scale)" "log"
