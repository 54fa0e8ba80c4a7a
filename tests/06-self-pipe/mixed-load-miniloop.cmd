./trace --rules=miniloop ../../tests/06-self-pipe/mixed-load.scn
