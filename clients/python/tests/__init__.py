"""Tests of the Python client; run with ``python3 -m unittest discover -s clients/python/tests -t clients/python``."""
