"""kairox.policy decides on data: no module of it opens, lists, stats or resolves a file, or starts a process.

Every module of the package is parsed and each call, attribute and import is checked against what touches the
machine. What a decision needs to know of files comes from the caller's ``HostFacts`` (``PolicySettings.host``).
"""

import ast
from pathlib import Path

import pytest

import kairox.policy

POLICY = Path(kairox.policy.__file__).parent
MODULES = sorted(POLICY.glob("*.py"))

FORBIDDEN_MODULES = frozenset(
    {"subprocess", "shutil", "tempfile", "glob", "socket", "stat", "io", "kairox.sandbox", "kairox._rpc"}
)
"""Imported at module level (``kairox.sandbox`` only inside ``host_files``, the default host, and its data)."""
SANDBOX_DATA = frozenset({"HiddenPaths", "PROTECTED_DIRS", "PROTECTED_FILES", "SHELL_RC_FILES"})
"""Names of ``kairox.sandbox`` that are data, not I/O: the type its read masks hand over, the names it protects."""
FORBIDDEN_CALLS = frozenset(
    {
        "open", "os.open", "os.scandir", "os.walk", "os.listdir", "os.stat", "os.lstat", "os.fstat", "os.access",
        "os.readlink", "os.path.exists", "os.path.lexists", "os.path.isdir", "os.path.isfile", "os.path.islink",
        "os.path.realpath", "os.path.getsize", "os.path.getmtime", "os.path.samefile", "os.path.expanduser",
        "os.system", "os.popen", "os.spawnv", "os.execv", "os.fork", "os.getcwd", "real_path", "resolved_by_kernel",
        "tempfile.gettempdir", "shutil.which", "Path.cwd",
    }
)  # fmt: skip
"""Called by their dotted name (as imported)."""
FORBIDDEN_METHODS = frozenset(
    {
        "exists", "is_dir", "is_file", "is_symlink", "resolve", "stat", "lstat", "read_text", "read_bytes",
        "write_text", "write_bytes", "iterdir", "glob", "rglob", "readlink", "samefile", "owner", "touch", "mkdir",
        "unlink", "scandir", "walk", "absolute",
    }
)  # fmt: skip
"""Methods of ``Path`` (and ``os.DirEntry``) that ask the file system, on whatever object."""


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def _problems(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []
    # the default host (kairox.sandbox.HOST) is imported inside ``host_files`` only, when first asked for
    default_host = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "host_files"
        for inner in ast.walk(node)
        if isinstance(inner, ast.ImportFrom) and inner.module == "kairox.sandbox"
    } | {
        id(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module == "kairox.sandbox"
        and {a.name for a in node.names} <= SANDBOX_DATA
    }
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [
                f"{where}: import {a.name}"
                for a in node.names
                if a.name.split(".")[0] in FORBIDDEN_MODULES or a.name in FORBIDDEN_MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and id(node) not in default_host:
            if node.module in FORBIDDEN_MODULES or node.module.split(".")[0] in FORBIDDEN_MODULES:
                found.append(f"{where}: from {node.module} import ...")
            found += [
                f"{where}: from {node.module} import {a.name}" for a in node.names if f"{a.name}" in FORBIDDEN_CALLS
            ]
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name is not None and (name in FORBIDDEN_CALLS or name.removeprefix("pathlib.") in FORBIDDEN_CALLS):
                found.append(f"{where}: {name}()")
            if isinstance(node.func, ast.Attribute) and node.func.attr in FORBIDDEN_METHODS:
                found.append(f"{where}: .{node.func.attr}()")
        elif isinstance(node, ast.Attribute) and node.attr in {"open", "popen", "scandir", "walk", "listdir"}:
            # `path.open`, `os.scandir` passed along as a value, not only called
            owner = _dotted(node.value) or ""
            if not owner.endswith("host"):
                found.append(f"{where}: .{node.attr}")
    return found


def test_the_package_has_modules_to_check() -> None:
    names = {m.name for m in MODULES}
    assert {"_decide.py", "_settings.py", "_facts.py", "_explain.py", "_scripts.py", "_paths.py"} <= names
    assert "_readmask.py" not in names and "_githistory.py" not in names and "_engine.py" not in names


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.name)
def test_policy_module_does_no_io(module: Path) -> None:
    assert _problems(module) == []


def test_the_check_sees_io(tmp_path: Path) -> None:
    """The checker itself: each kind of use it is meant to refuse is refused."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os, subprocess\n"
        "from pathlib import Path\n"
        "from kairox._util import real_path\n"
        "def f(p: Path) -> None:\n"
        "    os.scandir('.')\n"
        "    os.walk('.')\n"
        "    os.listdir('.')\n"
        "    open('x')\n"
        "    p.read_text()\n"
        "    p.exists()\n"
        "    p.resolve()\n"
        "    os.stat(p)\n"
        "    os.path.realpath('x')\n"
        "    opener = p.open\n"
    )
    problems = "\n".join(_problems(sample))
    for expected in (
        "import subprocess", "import real_path", "os.scandir()", "os.walk()", "os.listdir()", "open()", ".read_text()",
        ".exists()", ".resolve()", "os.stat()", "os.path.realpath()", ".open",
    ):  # fmt: skip
        assert expected in problems, expected
