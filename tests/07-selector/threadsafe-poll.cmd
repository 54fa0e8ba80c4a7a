./trace --backend=poll ../../tests/07-selector/threadsafe.scn
