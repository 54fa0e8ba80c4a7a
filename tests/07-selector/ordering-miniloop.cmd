./trace --rules=miniloop ../../tests/07-selector/ordering.scn
