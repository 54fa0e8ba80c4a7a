./trace ../../tests/11-fast/mixed-load.scn
