"""A wheel carries the built GUI: building one from a clean copy of the sources runs the UI build (setup.py's
hook), and the installed files serve the page with no Node.js on PATH."""

import http.cookiejar
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest
from tests.web_browser._browser import ROOT, start_gui, stop_gui

pytestmark = pytest.mark.timeout(300)


def test_a_wheel_built_from_the_sources_serves_the_gui_without_node(tmp_path: Path) -> None:
    node_modules = ROOT / "ui" / "node_modules"
    assert (node_modules / ".package-lock.json").is_file(), "run `make install` first: it installs ui/node_modules"
    tree = tmp_path / "tree"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
    for name in filter(None, tracked.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / name)
    assert not (tree / "src" / "kairox" / "web" / "static").exists()  # git-ignored: the build must make it
    # the packages `npm ci` would fetch; the build itself runs in the copy
    (tree / "ui" / "node_modules").symlink_to(node_modules)

    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path / "dist"),
            str(tree),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    [wheel] = (tmp_path / "dist").glob("kairox-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        index = archive.read("kairox/web/static/index.html").decode()
        archive.extractall(tmp_path / "site")
    assets = re.findall(r'(?:src|href)="/(assets/[^"]+)"', index)
    assert {Path(a).suffix for a in assets} == {".js", ".css"}
    assert {f"kairox/web/static/{asset}" for asset in assets} <= names
    assert not any(name.startswith("ui/") or name.endswith(".vue") for name in names)

    # the unpacked wheel comes first on the path; no node, no npm on PATH
    bare = tmp_path / "bin"
    bare.mkdir()
    env = {"PYTHONPATH": str(tmp_path / "site"), "PATH": str(bare)}
    where = subprocess.run(
        [sys.executable, "-c", "import kairox.web; print(kairox.web.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.stdout.startswith(str(tmp_path / "site")), where.stdout + where.stderr
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    gui = start_gui(workspace, env)
    try:
        # as a browser: the printed URL sets the cookie and sends it on to the page's address without the token
        jar = http.cookiejar.CookieJar()
        with urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar)).open(gui.url, timeout=30) as response:
            assert response.status == 200 and "token=" not in response.url
            assert response.read().decode() == index
        cookie = next(f"{c.name}={c.value}" for c in jar if c.name == "kairox_token")
        for asset in assets:
            request = urllib.request.Request(f"{gui.origin}/{asset}", headers={"Cookie": cookie})
            with urllib.request.urlopen(request, timeout=30) as response:
                assert response.status == 200
                assert response.read() == (tmp_path / "site" / "kairox" / "web" / "static" / asset).read_bytes()
    finally:
        stop_gui(gui.process)
