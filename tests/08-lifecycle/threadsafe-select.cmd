./trace --backend=select ../../tests/08-lifecycle/threadsafe.scn
