./demo_eintr
