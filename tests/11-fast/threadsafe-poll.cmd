./trace --backend=poll ../../tests/11-fast/threadsafe.scn
