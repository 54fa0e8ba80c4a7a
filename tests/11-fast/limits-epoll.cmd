./demo_limits --backend=epoll
