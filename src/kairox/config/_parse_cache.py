"""The parse cache of configuration: a file that did not change is not read, parsed or validated again.

An entry holds what reading one file as one layer gave: its table, the line of every key, its leaves with their
origins, the trust pins of its values, and its problems (TOML syntax, or schema problems naming file, line and
key), or that it was fine. The env and CLI layers are kept by their exact input. A file's entry
is used again while the file is proven unchanged by the one rule of :mod:`kairox._util._filestate`; in this
process only (a file for the next process would copy what project and local files hold, secrets included, into
the home, and saved about 5 ms per process: ``bench/config_resolve.py``).
"""

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from kairox._util._filestate import SETTLE_NS, FileMemo
from kairox.config._layers import Layer
from kairox.config._merge import LayerData
from kairox.errors import ConfigProblem

MAX_ENTRIES = 256
"""Files (and env or CLI inputs) remembered at most (a process reads a handful)."""
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True, slots=True)
class ParsedFile:
    """What one file gave as one layer: its data (None when it has problems) or its problems and their summary."""

    data: LayerData | None
    """A template: each resolve takes a copy that shares the table, the lines and the leaves (never changed)."""
    problems: tuple[ConfigProblem, ...] = ()
    detail: str | None = None
    """For a file with problems: the TOML error, or ``schema problems``."""

    def layer_data(self, *, untrusted: bool) -> LayerData | None:
        template = self.data
        if template is None:
            return None
        return LayerData(
            layer=template.layer,
            raw=template.raw,
            file=template.file,
            positions=template.positions,
            text_lines=template.text_lines,
            untrusted=untrusted,
            leaf_list=template.leaves(),
            pin_memo=template.pin_memo,
        )


class ConfigParseCache:
    """Parsed configuration files by path and layer, valid while the file is unchanged (see the module)."""

    def __init__(self, *, settle_ns: int = SETTLE_NS) -> None:
        self._memo: FileMemo[ParsedFile] = FileMemo(limit=MAX_ENTRIES, settle_ns=settle_ns)
        self._layers: dict[tuple[Layer, Hashable], object] = {}

    def layer(self, layer: Layer, given: Hashable, build: Callable[[], T]) -> T:
        """What ``build()`` made of ``given`` (the whole input of an env or CLI layer), made once per input.

        What it makes is shared by every resolve with that input: callers must not change it."""
        key = (layer, given)
        if key not in self._layers:
            if len(self._layers) >= MAX_ENTRIES:
                self._layers.clear()
            self._layers[key] = build()
        return self._layers[key]  # type: ignore[return-value]

    def get(self, path: Path, layer: Layer, parse: Callable[[str], ParsedFile]) -> ParsedFile | None:
        """The parse of ``path`` read as ``layer``; None when it is not a regular file. An unreadable file raises
        ``OSError`` (or ``UnicodeDecodeError``), as reading it would."""
        if not path.is_file():
            return None
        return self._memo.get((str(path), layer), str(path), lambda _: parse(path.read_text(encoding="utf-8")))


PARSE_CACHE = ConfigParseCache()
"""The process's cache: ``resolve_config`` uses it unless given another (or None, to read every file afresh)."""
