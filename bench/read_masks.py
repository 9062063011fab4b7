"""The cost of hiding what ``fs.read`` rules forbid from sandboxed commands.

A workspace of FILES files (40 per folder, two levels deep), a git repository with one commit, and four registries,
timed side by side per round: no read rule (baseline: nothing is worked out), ``fs.read(secrets/**)`` (a literal
folder, no search; the repository's history is hidden), ``fs.read(**/.env)`` (a search of the workspace) and
``fs.read(linked/**)`` (a literal folder whose file has a second name: the workspace is searched by inode for it).
Prints the median over ROUNDS rounds of ``shell.exec true`` through the registry, in milliseconds, with the ratio
to the baseline; and the median time of working out the hidden paths alone.

Run: .venv/bin/python bench/read_masks.py [FILES]
"""

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kairox.config import PolicyConfig
from kairox.policy import NonInteractiveApprover, PolicySettings, Rule
from kairox.registry import ToolRegistry
from kairox.registry._registry import RegistrySettings
from kairox.sandbox import SandboxSettings
from kairox.tools import BuiltinToolProvider, ToolCall

ROUNDS = 15
CASES = {
    "no read rule": (),
    "fs.read(secrets/**)": ("fs.read(secrets/**)",),
    "fs.read(**/.env)": ("fs.read(**/.env)",),
    "fs.read(linked/**)": ("fs.read(linked/**)",),
}


async def registry(ws: Path, patterns: tuple[str, ...]) -> ToolRegistry:
    rules = [Rule(action="deny", pattern=p) for p in patterns]
    policy = PolicySettings.from_config(PolicyConfig(), workspace=ws, rules=rules, temp_dir=ws / "tmp")
    sandbox = SandboxSettings(mode=policy.sandbox, writable_roots=policy.writable_roots)
    built = ToolRegistry(
        RegistrySettings(policy=policy, sandbox=sandbox, spill_dir=ws / "spill"), approver=NonInteractiveApprover()
    )
    await built.add_provider(BuiltinToolProvider())
    return built


async def main(files: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / "tmp").mkdir(parents=True)
        (ws / "secrets").mkdir()
        (ws / "secrets" / "key.txt").write_text("x")
        (ws / "linked").mkdir()
        (ws / "linked" / "key.txt").write_text("y")
        os.link(ws / "linked" / "key.txt", ws / "second-name.txt")
        for i in range(files):
            folder = ws / f"d{i // 1600}" / f"e{i // 40}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"f{i}.txt").touch()
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "b",
            "GIT_AUTHOR_EMAIL": "b@example.invalid",
            "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@example.invalid",
        }
        for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "bench"]):
            subprocess.run(["git", *step], cwd=ws, env=env, check=True, capture_output=True)
        registries = {name: await registry(ws, patterns) for name, patterns in CASES.items()}
        call = ToolCall(name="shell.exec", arguments={"command": "true"})
        timings: dict[str, list[float]] = {name: [] for name in CASES}
        masks: dict[str, list[float]] = {name: [] for name in CASES}
        for _ in range(ROUNDS):
            for name, built in registries.items():
                start = time.perf_counter()
                result = await built.call(call)
                timings[name].append(time.perf_counter() - start)
                assert not result.is_error, result.text_content()
                hidden = built.settings.sandbox.hidden
                start = time.perf_counter()
                if hidden is not None:
                    hidden()
                masks[name].append(time.perf_counter() - start)
        base = statistics.median(timings["no read rule"])
        print(f"workspace of {files} files, median of {ROUNDS} rounds")
        for name in CASES:
            took = statistics.median(timings[name])
            print(
                f"{name:22} shell.exec true {took * 1e3:7.2f} ms  x{took / base:5.2f} "
                f"  hidden paths alone {statistics.median(masks[name]) * 1e3:6.2f} ms"
            )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
