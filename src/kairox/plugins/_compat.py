"""Compatibility verdicts: ``kairoxVersion`` ranges, platforms, and programs a plugin requires on PATH."""

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kairox._util._search_path import absolute_path
from kairox._version import __version__
from kairox.plugins._semver import Version, VersionRange, VersionRangeError

_PLATFORM_ALIASES = {"darwin": "macos", "mac": "macos", "osx": "macos", "win32": "windows", "win": "windows"}
_VERSION_IN_TEXT = re.compile(r"(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+)?)")
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.+-]+?)(?:\s+(\S.*)|\s*([<>=^~].*))?\s*$")


def current_platform() -> str:
    """``linux``, ``macos`` or ``windows`` (else ``sys.platform``)."""
    if sys.platform.startswith("linux"):
        return "linux"
    return _PLATFORM_ALIASES.get(sys.platform, sys.platform)


@dataclass(frozen=True, kw_only=True, slots=True)
class ProgramProbe:
    """What PATH says about a program: where it is and which version it prints."""

    name: str
    path: str | None
    version: str | None = None


ProgramProber = Callable[[str], ProgramProbe]


_PROBE_CACHE: dict[tuple[str, str], ProgramProbe] = {}


def probe_program(name: str, *, env: Mapping[str, str] | None = None, timeout: float = 5.0) -> ProgramProbe:
    """Find ``name`` on PATH and read its version from ``name --version``; cached per (name, PATH).

    Only absolute PATH entries are searched: an empty or relative entry means the current folder, where a
    repository's own binary would answer for ``git`` or ``node``.
    """
    search = absolute_path((env if env is not None else os.environ).get("PATH", ""))
    key = (name, search)
    if key in _PROBE_CACHE:
        return _PROBE_CACHE[key]
    found = shutil.which(name, path=search)
    version: str | None = None
    if found:
        try:
            done = subprocess.run(
                [found, "--version"],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                stdin=subprocess.DEVNULL,
            )
            match = _VERSION_IN_TEXT.search(done.stdout or done.stderr or "")
            version = match.group(1) if match else None
        except (OSError, subprocess.SubprocessError):
            version = None
    probe = ProgramProbe(name=name, path=found, version=version)
    _PROBE_CACHE[key] = probe
    return probe


def clear_probe_cache() -> None:
    _PROBE_CACHE.clear()


@dataclass(frozen=True, kw_only=True, slots=True)
class Requirement:
    """One ``requires`` entry: a program and an optional version range (``node >=20``)."""

    program: str
    range: str | None = None

    @classmethod
    def parse(cls, text: str) -> "Requirement":
        match = _REQUIREMENT.match(text)
        if not match:
            raise VersionRangeError(f"{text!r} is not a requirement such as 'git' or 'node >=20'")
        program, range_text = match.group(1), (match.group(2) or match.group(3) or "").strip() or None
        if range_text is not None:
            VersionRange.parse(range_text)  # raises on a bad range
        return cls(program=program, range=range_text)

    def __str__(self) -> str:
        return f"{self.program} {self.range}" if self.range else self.program


@dataclass(frozen=True, kw_only=True, slots=True)
class CompatibilityVerdict:
    """Whether a plugin can run here, and every reason it cannot."""

    compatible: bool
    reasons: tuple[str, ...] = ()
    checked: dict[str, str] = field(default_factory=dict)
    """What was compared: ``{"kairox": "0.1.0", "platform": "linux", "node": "22.3.0 (/usr/bin/node)"}``."""

    def to_json(self) -> dict[str, object]:
        return {"compatible": self.compatible, "reasons": list(self.reasons), "checked": dict(self.checked)}


def check_compatibility(
    kairox_version: str | None,
    platforms: list[str] | None,
    requires: list[str] | None,
    *,
    version: str = __version__,
    platform: str | None = None,
    prober: ProgramProber | None = None,
) -> CompatibilityVerdict:
    """Compare a plugin's ``compatibility`` block with this Kairox, this platform and PATH."""
    reasons: list[str] = []
    checked: dict[str, str] = {"kairox": version}
    if kairox_version:
        try:
            if not VersionRange.parse(kairox_version).contains(Version.parse(version)):
                reasons.append(f"needs Kairox {kairox_version}, this is {version}")
        except VersionRangeError as exc:
            reasons.append(f"kairoxVersion {kairox_version!r} cannot be read: {exc}")
    here = platform or current_platform()
    checked["platform"] = here
    if platforms:
        wanted = {_PLATFORM_ALIASES.get(p.lower(), p.lower()) for p in platforms}
        if here not in wanted:
            reasons.append(f"supports {', '.join(sorted(wanted))}, not {here}")
    probe = prober or probe_program
    for entry in requires or []:
        try:
            requirement = Requirement.parse(entry)
        except VersionRangeError as exc:
            reasons.append(str(exc))
            continue
        found = probe(requirement.program)
        if found.path is None:
            reasons.append(f"needs {requirement} on PATH; {requirement.program!r} was not found")
            checked[requirement.program] = "missing"
            continue
        checked[requirement.program] = f"{found.version or 'unknown version'} ({found.path})"
        if requirement.range is None:
            continue
        if found.version is None:
            reasons.append(f"needs {requirement}; '{requirement.program} --version' printed no version")
        elif not VersionRange.parse(requirement.range).contains(Version.parse(found.version)):
            reasons.append(f"needs {requirement}, found {found.version}")
    return CompatibilityVerdict(compatible=not reasons, reasons=tuple(reasons), checked=checked)
