# loops-q2_cpu.gp -- chapter 11: 题目2: the CPU time of the same run (book/data/loops.dat, index 12).
call "book/plots/loops.gpi" "12" "题目2: the CPU time of the same run" "CPU ms" "lin"
