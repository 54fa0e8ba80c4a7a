./trace ../../tests/07-selector/mixed-load.scn
