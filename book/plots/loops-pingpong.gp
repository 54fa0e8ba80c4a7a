# loops-pingpong.gp -- chapter 11: 200,000 one-byte round trips on a socketpair (book/data/loops.dat, index 5).
call "book/plots/loops.gpi" "5" "200,000 one-byte round trips on a socketpair" "ns per round trip (log scale)" "log"
