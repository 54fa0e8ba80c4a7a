./trace --rules=miniloop ../../tests/10-threads/ordering.scn
