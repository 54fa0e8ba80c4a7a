./demo_limits --backend=select
