./demo_echo
