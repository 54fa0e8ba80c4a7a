./trace --rules=miniloop ../../tests/06-self-pipe/ordering.scn
