./trace ../../tests/04-snapshot/timers.scn
