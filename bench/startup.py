"""Start-up cost, as ratios measured in one run.

1. ``kairox --help`` against ``python -c pass`` (the interpreter alone).
2. ``kairox context`` on the example workspace (config, plugins, two MCP servers, skills, registry, prompt)
   against a minimal script that only imports the ``mcp`` SDK and lists the tools of the same MCP server.

Run: .venv/bin/python bench/startup.py [--rounds N]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / "examples" / "workspace"
NOTES = ROOT / "examples" / "servers" / "notes_server.py"

MINIMAL_MCP = f"""
import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

async def main():
    params = StdioServerParameters(command={sys.executable!r}, args=[{str(NOTES)!r}])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        assert tools.tools

anyio.run(main)
"""


def timed(argv: list[str], env: dict[str, str], cwd: Path, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    kairox = [sys.executable, "-m", "kairox"]
    with tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ,
            "KAIROX_HOME": home,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        subprocess.run([*kairox, "--workspace", str(WORKSPACE), "trust"], env=env, check=True, capture_output=True)
        script = Path(home) / "minimal_mcp.py"
        script.write_text(MINIMAL_MCP, encoding="utf-8")
        bare = timed([sys.executable, "-c", "pass"], env, ROOT, rounds)
        help_ = timed([*kairox, "--help"], env, ROOT, rounds)
        minimal = timed([sys.executable, str(script)], env, WORKSPACE, rounds)
        context = timed([*kairox, "--workspace", str(WORKSPACE), "context", "--json"], env, WORKSPACE, rounds)
        shutil.rmtree(Path(home) / "spill", ignore_errors=True)
    print(f"rounds={rounds} (medians)")
    print(f"python -c pass:                {bare * 1000:8.1f} ms")
    print(f"kairox --help:                 {help_ * 1000:8.1f} ms   ratio {help_ / bare:.2f}x python -c pass")
    print(f"minimal mcp SDK list_tools:    {minimal * 1000:8.1f} ms")
    print(
        f"kairox context (example ws):   {context * 1000:8.1f} ms "
        f"  ratio {context / minimal:.2f}x the minimal MCP script"
    )


if __name__ == "__main__":
    main()
