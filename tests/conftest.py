"""Shared fixtures: an isolated Kairox home and system config for every test, so nothing reads the host's."""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("kairox-home")
    monkeypatch.setenv("KAIROX_HOME", str(home))
    monkeypatch.setenv("KAIROX_SYSTEM_CONFIG", str(home / "no-system-kairox.toml"))
    for name in list(__import__("os").environ):
        if name.startswith("KAIROX_") and name not in ("KAIROX_HOME", "KAIROX_SYSTEM_CONFIG"):
            monkeypatch.delenv(name, raising=False)
    yield home


@pytest.fixture
def corpora() -> Path:
    if not CORPORA.is_dir():
        pytest.skip("../shared/corpora is absent (clone without the shared folder)")
    return CORPORA


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["root", "unprivileged"])
def user(request: pytest.FixtureRequest) -> str:
    """Who runs the command in the sandbox tests: root (as CI does), then an unprivileged user (``as_user``)."""
    if request.param == "root" and os.geteuid() != 0:
        pytest.skip("needs to run as root (CI does)")
    if request.param == "unprivileged" and os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is needed to run as an unprivileged user")
    return str(request.param)
