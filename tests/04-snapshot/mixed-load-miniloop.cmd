./trace --rules=miniloop ../../tests/04-snapshot/mixed-load.scn
