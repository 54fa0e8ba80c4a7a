/usr/bin/python3 -B tests/conformance/runs/periodic.py
