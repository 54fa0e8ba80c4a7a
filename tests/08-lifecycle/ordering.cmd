./trace ../../tests/08-lifecycle/ordering.scn
