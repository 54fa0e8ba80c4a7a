/usr/bin/python3 -B tests/conformance/runs/cooperative.py
