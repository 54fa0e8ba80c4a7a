./trace --rules=miniloop ../../tests/05-lazy-cancel/mixed-load.scn
