./demo_executor
