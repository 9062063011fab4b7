"""Two costs of the plugin and hook layer.

1. ``validate_tree`` over the real plugin corpora (every manifest, hooks.json, .mcp.json, skill frontmatter
   and marketplace), against only reading and decoding the same JSON files: the ratio is what manifest
   resolution, path checks, symlink walks and contribution listing cost on top of I/O.
2. A ``pre_tool_use`` hook around a call, sandboxed (bubblewrap, workspace_write) against unsandboxed
   (danger_full_access): the ratio is what the sandbox adds to each hook run. Both include the shell start.

Prints medians over ROUNDS rounds.

Run: .venv/bin/python bench/plugins_and_hooks.py [CORPORA]
"""

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kairox.config import HooksConfig, SandboxPolicy
from kairox.config._models import HookConfig
from kairox.hooks import HookRegistry
from kairox.plugins import validate_tree
from kairox.sandbox import SandboxSettings
from kairox.tools import ToolCall, ToolSource, ToolSpec
from kairox.tools._model import READ_ONLY

ROUNDS = 7
HOOK_CALLS = 20


def _read_json_files(root: Path) -> int:
    count = 0
    for path in root.rglob("*.json"):
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
        count += 1
    return count


def bench_validate(corpora: Path) -> None:
    raw, full = [], []
    files = plugins = 0
    for _ in range(ROUNDS):
        start = time.perf_counter()
        files = _read_json_files(corpora)
        raw.append(time.perf_counter() - start)
        start = time.perf_counter()
        plugins = len(validate_tree(corpora).plugins)
        full.append(time.perf_counter() - start)
    r, f = statistics.median(raw), statistics.median(full)
    print(
        f"validate: {plugins} plugins in {f * 1000:.1f} ms ({f / plugins * 1000:.2f} ms per "
        f"plugin); reading {files} JSON files alone {r * 1000:.1f} ms; ratio {f / r:.1f}x"
    )


async def bench_hooks() -> None:
    spec = ToolSpec(
        name="fs.write",
        description="",
        input_schema={"type": "object"},
        source=ToolSource.BUILTIN,
        permission=READ_ONLY,
    )
    call = ToolCall(name="fs.write", arguments={"path": "a", "content": "b"})
    hooks = HooksConfig(pre_tool_use=[HookConfig(command='echo \'{"permissionDecision": "allow"}\'')])
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        timings: dict[SandboxPolicy, list[float]] = {
            SandboxPolicy.WORKSPACE_WRITE: [],
            SandboxPolicy.DANGER_FULL_ACCESS: [],
        }
        for _ in range(ROUNDS):
            for mode in timings:
                registry = HookRegistry.from_config(
                    hooks, workspace=ws, sandbox=SandboxSettings(mode=mode, writable_roots=(ws,))
                )
                await registry.pre_tool_use(call, spec)  # warm the sandbox probe
                start = time.perf_counter()
                for _ in range(HOOK_CALLS):
                    await registry.pre_tool_use(call, spec)
                timings[mode].append((time.perf_counter() - start) / HOOK_CALLS)
        boxed = statistics.median(timings[SandboxPolicy.WORKSPACE_WRITE])
        bare = statistics.median(timings[SandboxPolicy.DANGER_FULL_ACCESS])
        print(
            f"pre_tool_use hook: sandboxed {boxed * 1000:.1f} ms, unsandboxed "
            f"{bare * 1000:.1f} ms per call; ratio {boxed / bare:.2f}x"
        )


if __name__ == "__main__":
    corpora = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "corpora"
    if corpora.is_dir():
        bench_validate(corpora)
    else:
        print(f"validate: skipped, {corpora} is absent")
    asyncio.run(bench_hooks())
