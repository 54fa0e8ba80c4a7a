# loops-task_bytes.gp -- chapter 11: 100,000 pending tasks (book/data/loops.dat, index 10).
call "book/plots/loops.gpi" "10" "100,000 pending tasks" "bytes per pending task" "lin"
