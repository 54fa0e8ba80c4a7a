./demo_errors
