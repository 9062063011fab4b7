"""Resolve 5 layers x 200 keys + 50 MCP servers; print the median time per resolve, cold and warm.

Baseline, measured in the same process and interleaved with the others round by round: reading the same four
files with tomllib and validating their plain merge with pydantic once (no provenance, no trust, no per-file
validation). The resolves:

- uncached: ``parse_cache=None``, every file read, parsed and validated afresh;
- cold: a fresh parse cache each time (what the first resolve of a process costs, filling the cache);
- warm, just written: files changed less than 2 s ago, so each is read and parsed again;
- warm, settled: the same cache once the files' ctime is older than 2 s (the stat alone proves them unchanged);
- first resolve in a new Python process, beside the baseline's first run in a new process
  (each child times its own work after its imports: both build pydantic's validators).

Run: .venv/bin/python bench/config_resolve.py
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

from kairox._util._filestate import SETTLE_NS
from kairox.config import KairoxConfig, resolve_config
from kairox.config._parse_cache import ConfigParseCache

KEYS = 200
SERVERS = 50
ROUNDS = 30
PROCESS_ROUNDS = 6

_CHILD_RESOLVE = """
import sys, time
from pathlib import Path
from kairox.config import resolve_config
start = time.perf_counter()
resolve_config(Path(sys.argv[1]))
print(time.perf_counter() - start)
"""
_CHILD_BASELINE = """
import sys, time, tomllib
from pathlib import Path
from kairox.config import KairoxConfig
start = time.perf_counter()
merged = {}
for name in sys.argv[1:]:
    for section, table in tomllib.loads(Path(name).read_text(encoding="utf-8")).items():
        merged.setdefault(section, {}).update(table)
KairoxConfig.model_validate(merged)
print(time.perf_counter() - start)
"""


def child(code: str, *args: str, env: dict[str, str]) -> float:
    run = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return float(run.stdout.split()[-1])


def new_processes(workspace: Path, files: list[Path], env: dict[str, str]) -> dict[str, float]:
    """Median first-resolve time of new processes, and the baseline's."""
    samples: dict[str, list[float]] = {"new process": [], "baseline": []}
    for _ in range(PROCESS_ROUNDS):
        samples["new process"].append(child(_CHILD_RESOLVE, str(workspace), env=env))
        samples["baseline"].append(child(_CHILD_BASELINE, *map(str, files), env=env))
    return {name: statistics.median(times) for name, times in samples.items()}


def layer_text(layer: str, offset: int) -> str:
    lines = []
    for i in range(KEYS // 2):
        lines.append(f'[skills.entries."skill-{(i + offset) % 300}"]\nenabled = {"true" if i % 2 else "false"}')
        lines.append(
            f'[plugins.entries."plugin-{(i + offset) % 300}"]\n'
            f'enabled = true\ndisabled_contributions = ["skill:{layer}"]'
        )
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
                    f'[mcp_servers.srv{i}]\ncommand = "server-{i}"\n'
                    f'args = ["--port", "{i}"]\nenv = {{ LEVEL = "info" }}\n'
                    for i in range(SERVERS)
                )
            path.write_text(text, encoding="utf-8")
        env = {"KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(files["system"])}
        env.update({f"KAIROX_CONFIG__SKILLS__ENTRIES__ENV{i}__ENABLED": "false" for i in range(KEYS)})
        (home / "trusted_workspaces.json").write_text(f'{{"workspaces": {{"{workspace}": {{}}}}}}', encoding="utf-8")

        warm_cache = ConfigParseCache()

        def resolve(cache: ConfigParseCache | None) -> None:
            resolved = resolve_config(workspace, env=env, parse_cache=cache)
            assert not resolved.problems, resolved.problems
            assert len(resolved.config.mcp_servers) == SERVERS

        def baseline() -> None:
            merged: dict[str, dict[str, object]] = {}
            for path in files.values():
                for section, table in tomllib.loads(path.read_text(encoding="utf-8")).items():
                    merged.setdefault(section, {}).update(table)
            KairoxConfig.model_validate(merged)

        def medians(fns: dict[str, Callable[[], None]]) -> dict[str, float]:
            samples: dict[str, list[float]] = {name: [] for name in fns}
            for round_ in range(ROUNDS):
                names = list(fns)
                names = names[round_ % len(names) :] + names[: round_ % len(names)]  # rotate: no fixed order
                for name in names:
                    start = time.perf_counter()
                    fns[name]()
                    samples[name].append(time.perf_counter() - start)
            return {name: statistics.median(times) for name, times in samples.items()}

        resolve(None)
        baseline()
        fresh = {
            "baseline": baseline,
            "uncached": lambda: resolve(None),
            "cold": lambda: resolve(ConfigParseCache()),
            "warm, just written": lambda: resolve(warm_cache),
        }
        figures = medians(fresh)
        time.sleep(SETTLE_NS / 1e9 + 0.2)  # let the files' ctime settle
        settled = medians(
            {
                "baseline": baseline,
                "warm, settled": lambda: resolve(warm_cache),
            }
        )
        print(f"layers=5 keys/layer={KEYS} servers={SERVERS} rounds={ROUNDS} python={sys.version.split()[0]}")
        print(f"{'resolve':<26}{'median ms':>10}{'baseline ms':>13}{'ratio':>8}")
        for name, taken in {**figures, **settled}.items():
            if name == "baseline":
                continue
            base = settled["baseline"] if name in settled else figures["baseline"]
            print(f"{name:<26}{taken * 1000:>10.2f}{base * 1000:>13.2f}{taken / base:>7.2f}x")
        fresh_processes = new_processes(workspace, list(files.values()), env)
        for name, taken in fresh_processes.items():
            if name != "baseline":
                base = fresh_processes["baseline"]
                print(f"{name:<26}{taken * 1000:>10.2f}{base * 1000:>13.2f}{taken / base:>7.2f}x")
        warm = settled["warm, settled"]
        print(
            "goal (issue 16, quiet machine): warm < 10 ms; this run "
            f"{warm * 1000:.2f} ms -> {'met' if warm < 0.010 else 'not met'}"
        )


if __name__ == "__main__":
    main()
