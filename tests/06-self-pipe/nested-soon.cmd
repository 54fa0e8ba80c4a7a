./trace ../../tests/06-self-pipe/nested-soon.scn
