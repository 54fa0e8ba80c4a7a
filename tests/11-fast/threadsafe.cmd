./trace ../../tests/11-fast/threadsafe.scn
