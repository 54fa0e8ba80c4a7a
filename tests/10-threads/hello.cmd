./demo_hello
