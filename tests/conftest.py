"""Shared fixtures: an isolated Kairox home and system config for every test, so nothing reads the host's."""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
REQUIRE_ALL = os.environ.get("KAIROX_REQUIRE_ALL") == "1"
"""Set in CI: a test that would skip (a tool, the corpora or root missing) fails instead. Read once, at import:
``isolated_home`` clears every ``KAIROX_`` variable while a test runs."""


SERIAL = frozenset(
    {
        "_rpc/test_host_sigkill.py",  # SIGKILLs hosts and counts every process left on the machine
        "lsp/test_host_crash.py",
        "hooks/test_host_death.py",
        "security/test_server_start_race.py",  # races server starts against file changes
        "lsp/test_lifecycle.py",  # a busy language server, and restarts timed against its backoff
        "lsp/test_confined_under_load.py",  # busy loops on every core
    }
)
"""Test files that need the machine to themselves: ``make test`` runs them after the rest, one at a time."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    for item in items:
        where = Path(str(item.path)).relative_to(tests).as_posix() if tests in Path(str(item.path)).parents else ""
        if where in SERIAL:
            item.add_marker(pytest.mark.serial)
        if where.startswith("web_browser/"):
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if REQUIRE_ALL and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped, but KAIROX_REQUIRE_ALL=1 needs every test to run: {reason}"


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
