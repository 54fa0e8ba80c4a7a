./trace ../../tests/07-selector/ordering.scn
