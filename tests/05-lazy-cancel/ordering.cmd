./trace ../../tests/05-lazy-cancel/ordering.scn
