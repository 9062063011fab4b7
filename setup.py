"""The one build step pyproject.toml cannot say: a wheel carries the web GUI, built from ``ui/`` by Vite.

Building a wheel (or a regular, non-editable install) from the source tree runs ``npm ci`` and ``npm run
build`` in ``ui/``, which writes ``src/kairox/web/static/``; the package data then takes that folder in, so an
installed wheel serves the GUI without Node. An editable install leaves it to ``make`` (the folder is served
from the source tree). Without ``ui/`` (a tree that already holds the built folder) nothing is built.
"""

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
UI = ROOT / "ui"
STATIC_INDEX = ROOT / "src" / "kairox" / "web" / "static" / "index.html"


def build_ui() -> None:
    if not (UI / "package.json").is_file():
        if not STATIC_INDEX.is_file():
            raise SystemExit("kairox: neither ui/ nor src/kairox/web/static/ is here; the wheel would have no GUI")
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("kairox: building a wheel builds the web GUI from ui/, which needs Node.js and npm on PATH")
    quiet = ["--no-audit", "--no-fund", "--loglevel=error"]
    if not (UI / "node_modules" / ".package-lock.json").is_file():
        subprocess.run([npm, "ci", *quiet], cwd=UI, check=True)
    subprocess.run([npm, "run", "--silent", "build"], cwd=UI, check=True)
    if not STATIC_INDEX.is_file():
        raise SystemExit(f"kairox: the UI build did not write {STATIC_INDEX.relative_to(ROOT)}")


class BuildPyWithUI(build_py):
    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            build_ui()
            # the package data is listed lazily; forget a listing made before the static folder existed
            self.__dict__.pop("data_files", None)
        super().run()


setup(cmdclass={"build_py": BuildPyWithUI})
