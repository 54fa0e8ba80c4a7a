/usr/bin/python3 tests/conformance/runs/no-os-epoll.py
