./demo_coro
