/usr/bin/python3 -B tests/conformance/runs/safe-close.py
