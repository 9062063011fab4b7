"""Command tool: reads {"version", "bump"} as JSON on stdin, prints the next version."""

import json
import sys

args = json.load(sys.stdin)
major, minor, patch = (int(part) for part in args["version"].split("."))
bump = args["bump"]
if bump == "major":
    major, minor, patch = major + 1, 0, 0
elif bump == "minor":
    minor, patch = minor + 1, 0
else:
    patch += 1
print(f"{major}.{minor}.{patch}")
