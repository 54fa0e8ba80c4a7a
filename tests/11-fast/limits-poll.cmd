./demo_limits --backend=poll
