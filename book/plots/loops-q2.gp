# loops-q2.gp -- chapter 11: 题目2: gather 1,000 tasks that each sleep 10 ms (book/data/loops.dat, index 11).
call "book/plots/loops.gpi" "11" "题目2: gather 1,000 tasks that each sleep 10 ms" "ms measured by loop.time()" "lin"
