./trace ../../tests/11-fast/timers.scn
