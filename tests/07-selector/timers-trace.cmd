./trace ../../tests/07-selector/timers.scn
