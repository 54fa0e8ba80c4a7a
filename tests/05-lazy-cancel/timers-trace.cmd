./trace ../../tests/05-lazy-cancel/timers.scn
