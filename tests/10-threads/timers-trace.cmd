./trace ../../tests/10-threads/timers.scn
