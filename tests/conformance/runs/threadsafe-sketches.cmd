/usr/bin/python3 tests/conformance/runs/threadsafe-sketches.py
