"""Writes a reason to stderr and exits before speaking MCP."""

import sys

sys.stderr.write("crash_at_start: missing API key, giving up\n")
sys.exit(3)
