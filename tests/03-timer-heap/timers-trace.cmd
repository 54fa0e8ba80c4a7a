./trace ../../tests/03-timer-heap/timers.scn
