./trace ../../tests/10-threads/mixed-load.scn
