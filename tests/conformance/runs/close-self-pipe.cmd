/usr/bin/python3 tests/conformance/runs/close-self-pipe.py
