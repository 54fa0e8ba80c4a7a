# loops-xthread.gp -- chapter 11: another thread posts 1,000,000 callbacks (book/data/loops.dat, index 6).
call "book/plots/loops.gpi" "6" "another thread posts 1,000,000 callbacks" "ns per post (log scale)" "log"
