"""npm-style version ranges: ``^1.2``, ``~1.2.3``, ``>=1 <2``, ``1.x``, ``1.2 - 1.4``, ``a || b``."""

import functools
import re
from dataclasses import dataclass

_VERSION = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_PARTIAL = re.compile(r"^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_COMPARATOR = re.compile(r"^(<=|>=|<|>|=|\^|~>?)?\s*(.*)$")


class VersionRangeError(ValueError):
    """A version or range that cannot be parsed."""


@dataclass(frozen=True, slots=True)
@functools.total_ordering
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple[int | str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "Version":
        match = _VERSION.match(text.strip())
        if not match:
            raise VersionRangeError(f"{text!r} is not a version")
        major, minor, patch, pre = match.groups()
        return cls(int(major), int(minor or 0), int(patch or 0), _prerelease(pre))

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]:
        # a release sorts after its prereleases; numeric identifiers sort before alphanumeric ones
        pre = tuple((0, p) if isinstance(p, int) else (1, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return f"{core}-{'.'.join(map(str, self.prerelease))}" if self.prerelease else core


def _prerelease(text: str | None) -> tuple[int | str, ...]:
    if not text:
        return ()
    return tuple(int(p) if p.isdigit() else p for p in text.split("."))


@dataclass(frozen=True, slots=True)
class _Partial:
    parts: tuple[int | None, int | None, int | None]
    prerelease: tuple[int | str, ...]

    @property
    def known(self) -> int:
        return next((i for i, p in enumerate(self.parts) if p is None), 3)

    def floor(self) -> Version:
        major, minor, patch = (p or 0 for p in self.parts)
        return Version(major, minor, patch, self.prerelease)

    def next_ceiling(self, level: int) -> Version:
        """The first version above this one at ``level`` (0 major, 1 minor, 2 patch)."""
        major, minor, patch = (p or 0 for p in self.parts)
        if level <= 0:
            return Version(major + 1, 0, 0)
        if level == 1:
            return Version(major, minor + 1, 0)
        return Version(major, minor, patch + 1)


def _partial(text: str) -> _Partial:
    match = _PARTIAL.match(text.strip())
    if not match:
        raise VersionRangeError(f"{text!r} is not a version")
    raw = match.groups()[:3]
    parts: list[int | None] = []
    wild = False
    for part in raw:
        if wild or part is None or part in ("x", "X", "*"):
            wild = True
            parts.append(None)
        else:
            parts.append(int(part))
    return _Partial((parts[0], parts[1], parts[2]), _prerelease(match.group(4)))


Comparator = tuple[str, Version]
"""``(operator, version)`` with operator one of ``< <= > >= =``."""


def _comparators(op: str, text: str) -> list[Comparator]:
    if text in ("", "*", "x", "X"):
        return []
    partial = _partial(text)
    known = partial.known
    if op == "^":
        if known == 0:
            return []
        major, minor, _patch = partial.parts
        # the left-most non-zero part is fixed
        if major != 0 or known == 1:
            level = 0
        elif minor != 0 or known == 2:
            level = 1
        else:
            level = 2
        return [(">=", partial.floor()), ("<", partial.next_ceiling(level))]
    if op in ("~", "~>"):
        if known == 0:
            return []
        return [(">=", partial.floor()), ("<", partial.next_ceiling(0 if known == 1 else 1))]
    if known == 3:
        return [(op or "=", partial.floor())]
    if known == 0:
        return [("<", Version(0, 0, 0, (0,)))] if op in ("<", ">") else []
    # a partial version: 1.2 means >=1.2.0 <1.3.0
    floor, ceiling = partial.floor(), partial.next_ceiling(known - 1)
    if op in ("", "="):
        return [(">=", floor), ("<", ceiling)]
    if op == ">":
        return [(">=", ceiling)]
    if op == ">=":
        return [(">=", floor)]
    if op == "<":
        return [("<", floor)]
    return [("<", ceiling)]  # <=


def _hyphen(low: str, high: str) -> list[Comparator]:
    result = [(">=", _partial(low).floor())]
    upper = _partial(high)
    if upper.known == 3:
        result.append(("<=", upper.floor()))
    elif upper.known > 0:
        result.append(("<", upper.next_ceiling(upper.known - 1)))
    return result


@dataclass(frozen=True, slots=True)
class VersionRange:
    """A parsed range: any of ``alternatives`` (``||``) whose comparators all hold."""

    text: str
    alternatives: tuple[tuple[Comparator, ...], ...]

    @classmethod
    def parse(cls, text: str) -> "VersionRange":
        alternatives: list[tuple[Comparator, ...]] = []
        for alternative in text.split("||"):
            alternative = alternative.strip()
            hyphen = re.fullmatch(r"(\S+)\s+-\s+(\S+)", alternative)
            if hyphen:
                alternatives.append(tuple(_hyphen(hyphen.group(1), hyphen.group(2))))
                continue
            # "> = 1.2" and ">= 1.2" both mean ">=1.2"
            tokens = re.sub(r"(<=|>=|<|>|=|\^|~>?)\s+", r"\1", alternative).split()
            comparators: list[Comparator] = []
            for token in tokens:
                match = _COMPARATOR.match(token)
                assert match is not None  # the pattern matches any string
                comparators.extend(_comparators(match.group(1) or "", match.group(2)))
            alternatives.append(tuple(comparators))
        return cls(text, tuple(alternatives))

    def contains(self, version: Version | str) -> bool:
        if isinstance(version, str):
            version = Version.parse(version)
        return any(all(_holds(version, op, bound) for op, bound in alt) for alt in self.alternatives)


def _holds(version: Version, op: str, bound: Version) -> bool:
    if op == "<":
        return version < bound
    if op == "<=":
        return version <= bound
    if op == ">":
        return version > bound
    if op == ">=":
        return version >= bound
    return version._key() == bound._key()
