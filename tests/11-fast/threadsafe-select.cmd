./trace --backend=select ../../tests/11-fast/threadsafe.scn
