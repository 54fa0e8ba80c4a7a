./demo_echo --backend=poll
