./trace --rules=miniloop ../../tests/10-threads/mixed-load.scn
