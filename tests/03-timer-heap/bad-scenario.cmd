./trace ../../tests/03-timer-heap/bad-scenario.scn
