"""Reads requests and never answers them (a server stuck in initialize). Exits when stdin closes."""

import sys

sys.stderr.write("hang_initialize: thinking...\n")
sys.stderr.flush()
for _line in sys.stdin:
    pass
