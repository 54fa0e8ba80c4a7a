./trace ../../tests/03-timer-heap/nested-soon.scn
