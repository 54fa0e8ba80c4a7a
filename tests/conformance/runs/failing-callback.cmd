/usr/bin/python3 tests/conformance/runs/failing-callback.py
