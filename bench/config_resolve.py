"""Resolve 5 layers x 200 keys + 50 MCP servers; print the median time per resolve.

Baseline, measured in the same process: reading the same four files with tomllib and validating their plain
merge with pydantic once (no provenance, no trust, no per-file validation). Run: .venv/bin/python bench/config_resolve.py
"""

import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from kairox.config import KairoxConfig, resolve_config

KEYS = 200
SERVERS = 50
ROUNDS = 30


def layer_text(layer: str, offset: int) -> str:
    lines = []
    for i in range(KEYS // 2):
        lines.append(f'[skills.entries."skill-{(i + offset) % 300}"]\nenabled = {"true" if i % 2 else "false"}')
        lines.append(f'[plugins.entries."plugin-{(i + offset) % 300}"]\nenabled = true\ndisabled_contributions = ["skill:{layer}"]')
    return "\n".join(lines) + "\n"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, workspace = root / "home", root / "ws"
        (workspace / ".kairox").mkdir(parents=True)
        home.mkdir()
        files = {
            "system": root / "system.toml",
            "user": home / "kairox.toml",
            "project": workspace / "kairox.toml",
            "local": workspace / ".kairox" / "kairox.local.toml",
        }
        for index, (layer, path) in enumerate(files.items()):
            text = layer_text(layer, index * 50)
            if layer == "user":
                text += "".join(
                    f'[mcp_servers.srv{i}]\ncommand = "server-{i}"\nargs = ["--port", "{i}"]\nenv = {{ LEVEL = "info" }}\n'
                    for i in range(SERVERS)
                )
            path.write_text(text, encoding="utf-8")
        env = {"KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(files["system"])}
        env.update({f"KAIROX_CONFIG__SKILLS__ENTRIES__ENV{i}__ENABLED": "false" for i in range(KEYS)})
        (home / "trusted_workspaces.json").write_text(f'{{"workspaces": {{"{workspace}": {{}}}}}}', encoding="utf-8")

        def resolve() -> None:
            resolved = resolve_config(workspace, env=env)
            assert not resolved.problems, resolved.problems
            assert len(resolved.config.mcp_servers) == SERVERS

        def baseline() -> None:
            merged: dict[str, dict[str, object]] = {}
            for path in files.values():
                for section, table in tomllib.loads(path.read_text(encoding="utf-8")).items():
                    merged.setdefault(section, {}).update(table)
            KairoxConfig.model_validate(merged)

        def median(fn: object) -> float:
            samples = []
            for _ in range(ROUNDS):
                start = time.perf_counter()
                fn()  # type: ignore[operator]
                samples.append(time.perf_counter() - start)
            return statistics.median(samples)

        resolve()
        baseline()
        full, base = median(resolve), median(baseline)
        print(f"layers=5 keys/layer={KEYS} servers={SERVERS} rounds={ROUNDS} python={sys.version.split()[0]}")
        print(f"resolve_config median: {full * 1000:.2f} ms per resolve")
        print(f"baseline (tomllib + one pydantic validation) median: {base * 1000:.2f} ms")
        print(f"ratio resolve/baseline: {full / base:.2f}x")


if __name__ == "__main__":
    main()
