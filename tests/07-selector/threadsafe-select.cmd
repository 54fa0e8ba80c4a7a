./trace --backend=select ../../tests/07-selector/threadsafe.scn
