"""The README's conformance table, from the suite's results: the fixture directly, through ``kairox proxy``, and
``kairox serve`` over the test workspace, each run as tests/gateway/test_conformance.py runs them.

Run: .venv/bin/python scripts/conformance_table.py   (prints the Markdown table; about two minutes)
"""

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.gateway.conftest import kairox_env, start_gateway, trust, write_workspace  # noqa: E402
from tests.gateway.test_conformance import FIXTURE, _serving, _stop, run_suite  # noqa: E402

SETS = {
    "2025-11-25": "2025-11-25 (handshake era)",
    "2026-07-28": "2026-07-28 (stateless era; tasks extension included)",
    "extension": "skills extension (SEP-2640)",
}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        proc, url = _serving([sys.executable, str(FIXTURE), "--http", "0"], "serving on")
        try:
            direct = run_suite(url, root / "direct")
        finally:
            _stop(proc)
        home, workspace = root / "proxy-home", root / "proxy-ws"
        home.mkdir()
        workspace.mkdir()
        (home / "kairox.toml").write_text('[policy.rules]\nallow = ["mcp__fixture__*"]\n')
        command = [sys.executable, "-m", "kairox", "proxy", "--name", "fixture", "--http", "127.0.0.1:0", "--"]
        proc, url = _serving([*command, sys.executable, str(FIXTURE)], "serving MCP on", kairox_env(home), workspace)
        try:
            proxied = run_suite(url, root / "proxied")
        finally:
            _stop(proc)
        served_home = root / "serve-home"
        served_ws = write_workspace(root / "serve-ws", lsp=False)
        trust(served_ws, served_home)
        served = start_gateway(served_ws, served_home)
        try:
            serve = run_suite(served.url, root / "serve")
        finally:
            served.stop()
    print("| Requirement set | scenarios | fixture directly | through `kairox proxy` | `kairox serve` |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for key, label in SETS.items():
        names = [name for name in direct if name.startswith(f"{key}/")]
        counts = [sum(results.get(name, False) for name in names) for results in (direct, proxied, serve)]
        print(f"| {label} | {len(names)} | " + " | ".join(map(str, counts)) + " |")


if __name__ == "__main__":
    main()
