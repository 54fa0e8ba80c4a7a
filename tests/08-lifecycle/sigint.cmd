./demo_sigint
