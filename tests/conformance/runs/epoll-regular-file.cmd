/usr/bin/python3 tests/conformance/runs/epoll-regular-file.py
