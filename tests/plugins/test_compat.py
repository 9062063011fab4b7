"""Compatibility verdicts (P4): npm-style kairoxVersion ranges, platforms, required programs on PATH."""

import os
import stat
from pathlib import Path

import pytest

from kairox.plugins._compat import Requirement, check_compatibility, clear_probe_cache, current_platform, probe_program
from kairox.plugins._semver import VersionRange


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("0.1.0", "^0.1", True),
        ("0.2.0", "^0.1", False),
        ("1.4.2", "^1.2.3", True),
        ("2.0.0", "^1.2.3", False),
        ("0.0.4", "^0.0.3", False),
        ("0.1.5", "~0.1.2", True),
        ("0.2.0", "~0.1.2", False),
        ("0.1.0", ">=0.43.0 <0.44.0", False),
        ("0.43.9", ">=0.43.0 <0.44.0", True),
        ("0.1.0", "0.x", True),
        ("1.0.0", "0.x", False),
        ("0.1.0", "2.x || 0.1.x", True),
        ("0.1.0", "0.0.1 - 0.2", True),
        ("0.3.0", "0.0.1 - 0.2", False),
        ("0.1.0", "*", True),
        ("0.1.0", ">= 0.1", True),
        ("0.1.0", "<0.1.0", False),
        ("0.1.9", "<=0.1", True),
        ("1.0.0-beta.1", "<1.0.0", True),
    ],
)
def test_npm_style_ranges(version: str, spec: str, expected: bool) -> None:
    assert VersionRange.parse(spec).contains(version) is expected


def test_requirement_parsing() -> None:
    assert [Requirement.parse(t) for t in ("git", "node >=20", "python3>=3.10")] == [
        Requirement(program="git"),
        Requirement(program="node", range=">=20"),
        Requirement(program="python3", range=">=3.10"),
    ]


def _program(folder: Path, name: str, version_line: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{version_line}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_required_programs_are_probed_on_path_with_their_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    _program(bin_dir, "node", "v18.19.0")
    _program(bin_dir, "git", "git version 2.39.5")
    monkeypatch.setenv("PATH", str(bin_dir))
    clear_probe_cache()

    verdict = check_compatibility("^0.1", [current_platform()], ["node >=20", "git", "deno"], version="0.1.0")

    assert verdict.compatible is False
    assert verdict.reasons == ("needs node >=20, found 18.19.0", "needs deno on PATH; 'deno' was not found")
    assert verdict.checked == {
        "kairox": "0.1.0",
        "platform": current_platform(),
        "node": f"18.19.0 ({bin_dir}/node)",
        "git": f"2.39.5 ({bin_dir}/git)",
        "deno": "missing",
    }


def test_probe_is_cached_per_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _program(bin_dir, "tool", "tool 1.0.0")
    env = {"PATH": str(bin_dir)}
    clear_probe_cache()
    first = probe_program("tool", env=env)
    _program(bin_dir, "tool", "tool 2.0.0")
    assert probe_program("tool", env=env) == first
    assert first.version == "1.0.0"
    os.remove(bin_dir / "tool")


def test_kairox_version_and_platform_mismatch_are_both_reported() -> None:
    verdict = check_compatibility(">=9.0.0", ["plan9"], None, version="0.1.0", platform="linux")
    assert verdict.reasons == ("needs Kairox >=9.0.0, this is 0.1.0", "supports plan9, not linux")
