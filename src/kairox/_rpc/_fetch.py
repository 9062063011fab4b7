"""Fetching what an install names (a skill, a plugin): a local folder, a git URL cloned with the real ``git``, or
an archive URL (zip, tar.gz) downloaded and unpacked safely. Shared by ``skills install`` and ``plugins install``
so both read a source string the same way and refuse the same unsafe archives.

``fetch_source`` puts a clone or an archive in the caller's staging folder and returns the tree to install
from; a local folder is returned where it is (the caller copies from it). ``SOURCE#sub/folder`` picks a folder
inside; it must stay inside the fetched tree.
"""

import enum
import gzip
import lzma
import os
import re
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlparse

import anyio

from kairox.errors import KairoxError

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
UNPACK_FACTOR = 4
"""An archive may unpack to this many times the download limit, so a small bomb cannot fill the disk."""


class SourceKind(enum.StrEnum):
    LOCAL = "local"
    GIT = "git"
    ARCHIVE = "archive"


class FetchError(KairoxError):
    """The source could not be read, cloned, downloaded or unpacked; nothing was installed."""


def _is_git_dir(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


class FetchSource(NamedTuple):
    """Where something to install comes from, as ``classify_source`` reads a source string."""

    kind: SourceKind
    location: str
    """A local path, or the URL to clone or download."""
    subpath: str | None = None
    """A folder inside the repository or archive (``SOURCE#sub/folder``)."""
    ref: str | None = None
    """A branch or tag to clone (from a ``.../tree/<ref>/...`` web address)."""


_GITHUB_TREE = re.compile(r"^https://github\.com/([^/]+)/([^/]+)/(?:tree|blob)/([^/]+)(?:/(.*))?$")


def classify_source(source: str) -> FetchSource:
    """Read a source string: a folder, ``git+URL``, a git URL (``https://...``, ``ssh://``, ``git@host:``,
    ``file://`` of a repository), a GitHub folder address (``https://github.com/o/r/tree/main/skills/x``), or an
    archive URL (``.zip``, ``.tar.gz`` ...). ``#sub/folder`` picks a folder inside."""
    location, _, fragment = source.partition("#")
    subpath = fragment or None
    if location.startswith("git+"):
        return FetchSource(SourceKind.GIT, location[4:], subpath)
    tree = _GITHUB_TREE.match(location.rstrip("/"))
    if tree:
        owner, repo, ref, inner = tree.groups()
        if inner and inner.endswith("/SKILL.md"):
            inner = inner[: -len("/SKILL.md")]
        return FetchSource(SourceKind.GIT, f"https://github.com/{owner}/{repo}.git", subpath or inner or None, ref)
    parsed = urlparse(location)
    lower = parsed.path.lower()
    if parsed.scheme in ("http", "https"):
        return FetchSource(
            SourceKind.ARCHIVE if lower.endswith(ARCHIVE_SUFFIXES) else SourceKind.GIT, location, subpath
        )
    if parsed.scheme in ("ssh", "git") or (
        not parsed.scheme and "@" in location and ":" in location and not Path(location).exists()
    ):
        return FetchSource(SourceKind.GIT, location, subpath)
    if parsed.scheme == "file":
        local = Path(unquote(parsed.path))
        if lower.endswith(ARCHIVE_SUFFIXES):
            return FetchSource(SourceKind.ARCHIVE, location, subpath)
        if _is_git_dir(local):
            return FetchSource(SourceKind.GIT, location, subpath)
        return FetchSource(SourceKind.LOCAL, str(local), subpath)
    return FetchSource(SourceKind.LOCAL, location, subpath)


async def _clone(url: str, into: Path, timeout_sec: float, ref: str | None = None) -> None:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
    branch = ["--branch", ref] if ref else []
    command = ["git", "clone", "--depth", "1", "--quiet", *branch, "--", url, str(into)]
    try:
        with anyio.fail_after(timeout_sec):
            result = await anyio.run_process(command, check=False, env=env)
    except TimeoutError as exc:
        raise FetchError(
            f"git clone of {url} did not finish in {timeout_sec:.0f}s", hint="check the URL and the network"
        ) from exc
    except FileNotFoundError as exc:
        raise FetchError(
            "git is not installed", hint="install git, or install from a local folder or an archive URL"
        ) from exc
    if result.returncode != 0:
        stderr = result.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = stderr[-1] if stderr else f"exit code {result.returncode}"
        raise FetchError(
            f"git clone of {url} failed: {reason}", hint="check the URL and that you can read the repository"
        )


async def _download(url: str, into: Path, timeout_sec: float, max_bytes: int) -> Path:
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    import httpx

    name = Path(parsed.path).name or "archive"
    target = into / name
    size = 0
    try:
        async with (
            httpx.AsyncClient(follow_redirects=True, timeout=timeout_sec) as client,
            client.stream("GET", url) as response,
        ):
            if response.status_code != 200:
                raise FetchError(f"download of {url} failed: HTTP {response.status_code}", hint="check the URL")
            with target.open("wb") as handle:
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise FetchError(f"{url} is larger than {max_bytes // (1024 * 1024)} MiB; refused")
                    handle.write(chunk)
    except httpx.HTTPError as exc:
        raise FetchError(f"download of {url} failed: {exc}", hint="check the URL and the network") from exc
    return target


def _too_large(archive: Path, limit: int) -> FetchError:
    return FetchError(
        f"{archive.name} unpacks to more than {limit} bytes; refused",
        hint="an extension is a few text files; a larger one is installed from a folder or a git URL",
    )


def _extract(archive: Path, into: Path, max_unpacked: int) -> Path:
    """Extract safely (no absolute paths, no ``..``, no links, at most ``max_unpacked`` bytes) and return the
    content folder. A damaged archive is a refusal with the reason, not a crash."""
    try:
        return _unpack(archive, into, max_unpacked)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, gzip.BadGzipFile) as exc:
        raise FetchError(
            f"{archive.name} is damaged: {exc}", hint="download it again, or install from a folder"
        ) from exc


def _unpack(archive: Path, into: Path, max_unpacked: int) -> Path:
    into.mkdir()
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as bundle:
            if sum(member.file_size for member in bundle.infolist()) > max_unpacked:
                raise _too_large(archive, max_unpacked)
            for member in bundle.infolist():
                parts = Path(member.filename).parts
                if member.filename.startswith("/") or ".." in parts:
                    raise FetchError(f"{archive.name}: entry {member.filename!r} leaves the archive folder; refused")
                if (member.external_attr >> 16) & 0o170000 == 0o120000:
                    raise FetchError(f"{archive.name}: entry {member.filename!r} is a symbolic link; refused")
            bundle.extractall(into)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as bundle:
            if sum(member.size for member in bundle.getmembers()) > max_unpacked:
                raise _too_large(archive, max_unpacked)
            try:
                bundle.extractall(into, filter="data")
            except tarfile.FilterError as exc:
                raise FetchError(f"{archive.name}: unsafe entry: {exc}; refused") from exc
    else:
        raise FetchError(f"{archive.name} is neither a zip nor a tar archive", hint="give a .zip or .tar.gz URL")
    entries = [e for e in into.iterdir() if not e.name.startswith(".") and e.name != "__MACOSX"]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return into


async def fetch_source(
    source: str,
    staging: Path,
    *,
    timeout_sec: float = 120.0,
    max_bytes: int = MAX_ARCHIVE_BYTES,
    progress: Callable[[str], None] | None = None,
    what: str = "a folder, a git URL or an archive URL",
) -> tuple[FetchSource, Path]:
    """The source as read, and the local tree to install from (``#sub/folder`` applied). ``staging`` is an empty
    folder the caller owns and removes; clones and archives go there. ``what`` names the sources the caller
    accepts, for the hint when a local path does not exist."""
    note = progress or (lambda message: None)
    read = classify_source(source)
    kind, location, subpath, ref = read
    if kind is SourceKind.LOCAL:
        tree = Path(location).expanduser().resolve()
        if not tree.exists():
            raise FetchError(f"{location} does not exist", hint=f"give {what}")
    elif kind is SourceKind.GIT:
        note(f"cloning {location}")
        tree = staging / "clone"
        await _clone(location, tree, timeout_sec, ref)
    else:
        note(f"downloading {location}")
        archive = await _download(location, staging, timeout_sec, max_bytes)
        note(f"extracting {archive.name}")
        tree = _extract(archive, staging / "extracted", UNPACK_FACTOR * max_bytes)
    if subpath:
        inner = (tree / subpath).resolve()
        if not inner.is_relative_to(tree.resolve()):
            raise FetchError(f"{subpath!r} leaves {location}; refused")
        if not inner.exists():
            raise FetchError(f"{subpath!r} does not exist in {location}")
        tree = inner
    return read, tree
