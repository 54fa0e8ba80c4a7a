env /usr/bin/python3 ../../tests/03-timer-heap/scale.py ./trace
