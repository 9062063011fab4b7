"""``kairox tui`` in a real terminal (tmux): start -> the composer painted, -> the session ready, -> the MCP server's
row painted ready in the trace panel; a prompt -> its answer painted; ``/quit`` -> process exit. Beside it, in the
same rounds, a bare Textual app (a text area and one line) in the same terminal: start -> painted, Ctrl+Q -> exit.

The workspace has one stdio MCP server (tests/servers/lean_server.py) and the scripted model server on 127.0.0.1
(tests/servers/model_server.py, chat wire) answers the prompt. The screen is read with ``tmux capture-pane`` every
25 ms, so each figure is late by up to that much, alike for both. Ratios are Kairox's over the bare app's.

Run: .venv/bin/python bench/tui_start.py [--rounds 5]
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.servers.model_server import ScriptedModelServer  # noqa: E402

ANSWER = "All finished here."
POLL = 0.025
"""Seconds between two reads of the screen: each read is a tmux client process, and reading more often takes
CPU from what is measured."""
BARE = (
    "from textual.app import App\nfrom textual.widgets import Static, TextArea\n"
    "class Bare(App):\n    def compose(self):\n"
    "        yield Static('bare app ready')\n        yield TextArea(id='composer')\n"
    "    def on_mount(self):\n        self.query_one(TextArea).focus()\n"
    "Bare().run()\n"
)


def tmux(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False)


def screen(name: str) -> str:
    return tmux("capture-pane", "-p", "-t", name).stdout


def wait_for(name: str, started: float, test: "type[object] | object", timeout: float = 60) -> float:
    """ms from ``started`` until ``test(screen)`` holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if test(screen(name)):  # type: ignore[operator]
            return (time.monotonic() - started) * 1000
        time.sleep(POLL)
    raise SystemExit(f"timed out waiting in {name}:\n{screen(name)}")


def wait_gone(name: str, started: float, timeout: float = 30) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if tmux("has-session", "-t", name).returncode != 0:
            return (time.monotonic() - started) * 1000
        time.sleep(POLL)
    tmux("kill-session", "-t", name)
    raise SystemExit(f"{name} did not exit")


def start(name: str, command: list[str], env: dict[str, str], cwd: Path) -> float:
    line = " ".join(shlex.quote(part) for part in ["env", *(f"{k}={v}" for k, v in env.items()), *command])
    started = time.monotonic()
    tmux("new-session", "-d", "-s", name, "-x", "160", "-y", "45", "-c", str(cwd), line)
    return started


def run_kairox(root: Path, env: dict[str, str], index: int) -> dict[str, float]:
    home, ws = root / "home", root / "ws"
    (ws / ".git").mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    name = f"kairox-tui-bench-{os.getpid()}-{index}"
    with ScriptedModelServer("openai", [{"reply": "text", "text": ANSWER}]) as server:
        (home / "kairox.toml").write_text(
            'model = "bench-model"\nmodel_provider = "bench"\n'
            f'[model_providers.bench]\nbase_url = "{server.base_url}"\n'
            f'api_key_env = "BENCH_API_KEY"\nwire_api = "chat"\n\n[mcp_servers.lean]\ncommand = "{sys.executable}"\n'
            f'args = ["{ROOT / "tests" / "servers" / "lean_server.py"}"]\n'
        )
        child = {
            **env,
            "KAIROX_HOME": str(home),
            "KAIROX_SYSTEM_CONFIG": str(home / "none.toml"),
            "BENCH_API_KEY": "dummy",
        }
        started = start(name, [sys.executable, "-m", "kairox", "--workspace", str(ws), "tui"], child, ws)
        figures = {"composer": wait_for(name, started, lambda s: "Trace" in s and "Servers" in s)}
        figures["session"] = wait_for(name, started, lambda s: "for commands" in s)
        figures["server_row"] = wait_for(
            name, started, lambda s: any("lean" in line and "ready" in line for line in s.splitlines())
        )
        tmux("send-keys", "-t", name, "Say you are finished.", "Enter")
        asked = time.monotonic()
        figures["answer"] = wait_for(name, asked, lambda s: ANSWER in s)
        tmux("send-keys", "-t", name, "/quit", "Enter")
        figures["exit"] = wait_gone(name, time.monotonic())
    return figures


def run_bare(env: dict[str, str], cwd: Path, index: int) -> dict[str, float]:
    name = f"bare-tui-bench-{os.getpid()}-{index}"
    started = start(name, [sys.executable, "-c", BARE], env, cwd)
    figures = {"composer": wait_for(name, started, lambda s: "bare app ready" in s)}
    tmux("send-keys", "-t", name, "C-q")
    figures["exit"] = wait_gone(name, time.monotonic())
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if subprocess.run(["which", "tmux"], capture_output=True, check=False).returncode != 0:
        raise SystemExit("tmux is needed")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    env["PYTHONPATH"] = str(ROOT / "src")
    kairox: list[dict[str, float]] = []
    bare: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
        for round_no in range(args.rounds + 1):
            b = run_bare(env, root, round_no)
            k = run_kairox(root / f"k{round_no}", env, round_no)
            if round_no:  # the first round is a warm-up (it also writes the bytecode)
                bare.append(b)
                kairox.append(k)
            print(f"round {round_no} done", file=sys.stderr)

    def med(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    base = med(bare, "composer")
    print(
        f"\n{args.rounds} rounds after a warm-up, interleaved; medians (ms); ratios over the bare Textual app's paint"
    )
    print(f"  bare Textual app: start -> painted {base:.0f}, Ctrl+Q -> exit {med(bare, 'exit'):.0f}")
    for key, label in (
        ("composer", "start -> composer painted"),
        ("session", "start -> session ready"),
        ("server_row", "start -> MCP server ready in the panel"),
    ):
        print(f"  kairox tui: {label:<40}{med(kairox, key):>7.0f}{med(kairox, key) / base:>8.2f}x")
    print(f"  kairox tui: {'prompt -> answer painted':<40}{med(kairox, 'answer'):>7.0f}")
    print(
        f"  kairox tui: {'/quit -> exit':<40}{med(kairox, 'exit'):>7.0f}"
        f"{med(kairox, 'exit') / med(bare, 'exit'):>8.2f}x (over the bare app's exit)"
    )


if __name__ == "__main__":
    main()
