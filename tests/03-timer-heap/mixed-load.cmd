./trace ../../tests/03-timer-heap/mixed-load.scn
