./trace ../../tests/04-snapshot/mixed-load.scn
