./trace --rules=miniloop ../../tests/04-snapshot/ordering.scn
