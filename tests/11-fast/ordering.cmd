./trace ../../tests/11-fast/ordering.scn
