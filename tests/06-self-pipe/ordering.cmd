./trace ../../tests/06-self-pipe/ordering.scn
