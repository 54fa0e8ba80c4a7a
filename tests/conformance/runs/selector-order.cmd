/usr/bin/python3 tests/conformance/runs/selector-order.py
