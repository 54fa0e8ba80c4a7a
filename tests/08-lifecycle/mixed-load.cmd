./trace ../../tests/08-lifecycle/mixed-load.scn
