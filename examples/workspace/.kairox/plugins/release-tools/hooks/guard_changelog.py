"""pre_tool_use hook: CHANGELOG.md is only edited with fs.edit, never overwritten with fs.write."""

import json
import sys

request = json.load(sys.stdin)
path = str(request.get("tool_input", {}).get("path", ""))
if path.endswith("CHANGELOG.md"):
    print("CHANGELOG.md is edited with fs.edit so earlier entries survive", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
