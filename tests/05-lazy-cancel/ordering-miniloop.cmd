./trace --rules=miniloop ../../tests/05-lazy-cancel/ordering.scn
