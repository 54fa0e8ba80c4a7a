./demo_thread_loop
