./trace --rules=miniloop ../../tests/07-selector/mixed-load.scn
