from pathlib import Path

import pytest
from tests._rpc._procs import no_process_left
from tests.agent._support import make_workspace

__all__ = ["no_process_left"]

MODEL_KEY = "sk-test-0123456789abcdef"
"""The API key the scripted model servers are reached with (``KAIROX_TEST_MODEL_KEY``, as ``user_config`` names it)."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "repo")


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("KAIROX_TEST_MODEL_KEY", MODEL_KEY)
    return MODEL_KEY
