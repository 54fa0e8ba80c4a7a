./trace ../../tests/04-snapshot/ordering.scn
