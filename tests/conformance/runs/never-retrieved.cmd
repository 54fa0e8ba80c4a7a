/usr/bin/python3 -B tests/conformance/runs/never-retrieved.py
