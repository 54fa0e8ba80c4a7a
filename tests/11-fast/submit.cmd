./demo_submit
