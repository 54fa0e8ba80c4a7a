# loops-churn.gp -- chapter 11: schedule a timer and cancel it at once, 1,000,000 times (book/data/loops.dat, index 3).
call "book/plots/loops.gpi" "3" "schedule a timer and cancel it at once, 1,000,000 times" "ns per schedule + cancel (log scale)" "log"
