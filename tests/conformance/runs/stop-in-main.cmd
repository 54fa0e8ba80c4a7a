/usr/bin/python3 tests/conformance/runs/stop-in-main.py
