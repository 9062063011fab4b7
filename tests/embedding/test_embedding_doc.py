"""Every ```python block of docs/embedding.md runs, as a script, in a workspace like the one the guide describes,
with the guide's own configuration; where the guide shows what a block prints, it prints that. A block that needs
a model gets a scripted OpenAI-wire server on 127.0.0.1 in place of the guide's local server address."""

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.servers.model_server import ScriptedModelServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "embedding.md"
GUIDE_URL = "http://127.0.0.1:8000/v1"

READ_NOTES = [
    {
        "reply": "tool_calls",
        "calls": [{"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}}],
        "expect": {"tools_include": ["fs_read"], "last_user_contains": "What do the notes say?"},
    },
    {"reply": "text", "text": "The notes say: first note.", "expect": {"tool_results": {"r1": "first note"}}},
]
SUMMARISE = [
    {
        "reply": "tool_calls",
        "calls": [
            {"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}},
            {
                "id": "w1",
                "name": "fs_write",
                "arguments": {"path": "summary.txt", "content": "One note: first note.\n"},
            },
        ],
    },
    {
        "reply": "text",
        "text": "Done: summary.txt holds the note.",
        "expect": {"tool_results": {"r1": "first note", "w1": "summary.txt"}},
    },
]

SCRIPTS: list[list[dict[str, Any]] | None] = [None, READ_NOTES, READ_NOTES, SUMMARISE, None]
"""What the model does for each python block of the guide, in order (None: the block needs no model)."""


def blocks(kind: str, text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group(1)) for m in re.finditer(rf"^```{kind}\n(.*?)^```$", text, re.S | re.M)]


def shown_output(text: str, start: int) -> list[str]:
    """The lines of the ```text block that follows the python block at ``start``, if one does before the next."""
    later = [at for at, _ in blocks("python", text) if at > start]
    end = later[0] if later else len(text)
    shown = [body for at, body in blocks("text", text) if start < at < end]
    return shown[0].splitlines() if shown else []


def test_the_guide_has_the_blocks_this_test_knows() -> None:
    assert len(blocks("python", DOC.read_text(encoding="utf-8"))) == len(SCRIPTS)
    assert len(blocks("toml", DOC.read_text(encoding="utf-8"))) == 1


@pytest.mark.timeout(300)
@pytest.mark.parametrize("index", range(len(SCRIPTS)))
def test_guide_example_runs_and_prints_what_the_guide_shows(index: int, tmp_path: Path, isolated_home: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    start, code = blocks("python", text)[index]
    [(_, config)] = blocks("toml", text)
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "notes.txt").write_text("first note\n", encoding="utf-8")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key.txt").write_text("sk-do-not-show\n", encoding="utf-8")
    script = SCRIPTS[index]
    server = ScriptedModelServer("openai", script) if script is not None else None
    try:
        url = server.start().base_url if server is not None else "http://127.0.0.1:9/v1"  # nothing listens on 9
        (isolated_home / "kairox.toml").write_text(config.replace(GUIDE_URL, url), encoding="utf-8")
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(DOC.parents[1] / "src"), os.environ.get("PYTHONPATH", "")]),
        }
        proc = subprocess.run(
            [sys.executable, "-c", code.replace(GUIDE_URL, url)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        if server is not None:
            server.stop()
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout.splitlines()
    shown = shown_output(text, start)
    if shown:
        assert printed == shown
    else:  # the framework examples: the model's answer, then the gate's decisions
        assert printed == ["The notes say: first note.", "[('fs.read', 'allow')]"]
    if server is not None:
        server.verify()
    assert "sk-do-not-show" not in proc.stdout


README = DOC.parents[1] / "README.md"


def test_readme_example_runs_in_a_workspace(tmp_path: Path) -> None:
    section = re.search(
        r"<!-- embedding-example:start -->\n```python\n(.*?)```\n<!-- embedding-example:end -->",
        README.read_text(encoding="utf-8"),
        re.S,
    )
    assert section is not None
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "README.md").write_text("# A project\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(DOC.parents[1] / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-c", section.group(1)], cwd=workspace, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "True False Workspace: repo (untrusted: project servers, hooks and plugins are off)"
    ]


def test_readme_and_guide_name_every_public_name() -> None:
    import kairox

    public = set(kairox.__all__) - {"__version__"}
    section = README.read_text(encoding="utf-8").split("## Embedding Kairox", 1)[1].split("<!--", 1)[0]
    assert set(re.findall(r"`(\w+)`", section)) == public
    table = DOC.read_text(encoding="utf-8").split("| Name |", 1)[1].split("\n\n", 1)[0]
    assert {name for name in public if f"`{name}" in table} == public
