./trace ../../tests/11-fast/nested-soon.scn
