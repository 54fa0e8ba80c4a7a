./trace --rules=miniloop ../../tests/11-fast/ordering.scn
