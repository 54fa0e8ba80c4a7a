./demo_q3
