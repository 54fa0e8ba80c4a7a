./trace ../../tests/10-threads/threadsafe.scn
