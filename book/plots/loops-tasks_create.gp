# loops-tasks_create.gp -- chapter 11: create and complete 1,000,000 tasks (book/data/loops.dat, index 8).
call "book/plots/loops.gpi" "8" "create and complete 1,000,000 tasks" "ns per task (log scale)" "log"
