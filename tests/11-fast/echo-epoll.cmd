./demo_echo --backend=epoll
