./demo_q5
