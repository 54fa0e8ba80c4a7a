/usr/bin/python3 -B tests/conformance/runs/hello.py
