./trace ../../tests/05-lazy-cancel/cancel-trace.scn
