./trace --rules=miniloop ../../tests/11-fast/mixed-load.scn
