/usr/bin/python3 -B tests/conformance/runs/q5.py
