./trace ../../tests/10-threads/ordering.scn
