./trace ../../tests/05-lazy-cancel/bad-scenario.scn
