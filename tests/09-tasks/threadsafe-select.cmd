./trace --backend=select ../../tests/09-tasks/threadsafe.scn
