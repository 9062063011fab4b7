"""Merging layers key by key while remembering where every value came from (C2, C3)."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kairox.config._keys import item_line, join_key
from kairox.config._layers import Layer
from kairox.config._models import CONCAT_LISTS, SERVER_SECTIONS

ENTRY_SECTIONS = (*SERVER_SECTIONS, "model_providers", "plugins.marketplaces")
"""Sections whose entries a higher layer replaces whole instead of key by key."""


@dataclass(frozen=True, kw_only=True, slots=True)
class KeyOrigin:
    """Where one value came from."""

    layer: Layer
    file: Path | None = None
    line: int | None = None
    source: str | None = None
    """A label for values that come from no file: ``env:KAIROX_MODEL``, ``cli:-c``, ``plugin:<name>``."""
    shadowed: tuple["KeyOrigin", ...] = ()
    """Lower layers that set the same key, nearest first."""

    def where(self) -> str:
        if self.file is not None:
            return f"{self.file}:{self.line}" if self.line else str(self.file)
        return self.source or str(self.layer)

    def to_json(self, *, with_shadowed: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "layer": self.source if self.layer is Layer.PLUGIN and self.source else str(self.layer),
            "file": str(self.file) if self.file else None,
            "line": self.line,
        }
        if self.source and self.layer is not Layer.PLUGIN:
            data["source"] = self.source
        if with_shadowed:
            data["shadowed"] = [s.to_json(with_shadowed=False) for s in self.shadowed]
        return data


@dataclass(kw_only=True, slots=True)
class LayerData:
    """One layer's raw table and the positions of its keys."""

    layer: Layer
    raw: dict[str, Any]
    file: Path | None = None
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    text_lines: list[str] = field(default_factory=list)
    source: str | None = None
    untrusted: bool = False
    """A project or local file of a workspace the user has not trusted."""
    leaf_origins: dict[str, "KeyOrigin"] | None = None
    """Per-leaf origins given by the caller (the profile layer re-uses the origins of its file's keys)."""

    def line_of(self, key: str) -> int | None:
        probe = key
        while probe:
            if probe in self.positions:
                return self.positions[probe][0]
            probe = probe.rpartition(".")[0]
        return None

    def origin(self, key: str, item: Any = None, index: int | None = None) -> KeyOrigin:
        if self.leaf_origins is not None and key in self.leaf_origins:
            return self.leaf_origins[key]
        line = self.line_of(key)
        if index is not None and isinstance(item, dict):
            line = self.line_of(f"{key}.{index}") or line
        elif isinstance(item, str) and key in self.positions:
            line = item_line(self.text_lines, self.positions[key], item)
        return KeyOrigin(layer=self.layer, file=self.file, line=line, source=self.source)


def is_entry(parts: tuple[str, ...]) -> bool:
    return len(parts) >= 2 and join_key(parts[:-1]) in ENTRY_SECTIONS


def leaves(raw: dict[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` for every leaf; server entries and non-empty lists are leaves, empty tables none."""
    for name, value in raw.items():
        parts = (*prefix, name)
        if isinstance(value, dict) and not is_entry(parts):
            yield from leaves(value, parts)
        else:
            yield join_key(parts), value


@dataclass(kw_only=True, slots=True)
class Merged:
    values: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, KeyOrigin] = field(default_factory=dict)
    items: dict[str, list[tuple[Any, KeyOrigin]]] = field(default_factory=dict)
    """Concatenated lists: each item with its own origin."""

    def tree(self) -> dict[str, Any]:
        from kairox.config._keys import split_key

        root: dict[str, Any] = {}
        for key, value in self.values.items():
            parts = split_key(key)
            node = root
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value
        return root


Accept = Callable[[LayerData, str, Any], bool]


def merge(layers: list[LayerData], accept: Accept | None = None) -> Merged:
    """Merge ``layers`` (lowest first). ``accept(layer, key, value)`` may drop a leaf or a list item."""
    merged = Merged()
    for data in layers:
        for key, value in leaves(data.raw):
            if key in CONCAT_LISTS and isinstance(value, list):
                bucket = merged.items.setdefault(key, [])
                taken = [
                    (item, data.origin(key, item, index))
                    for index, item in enumerate(value)
                    if accept is None or accept(data, key, item)
                ]
                if taken or key not in merged.origins:
                    # the list's provenance is its highest contributing layer; lower contributors are listed
                    previous = merged.origins.get(key)
                    lower = (replace(previous, shadowed=()), *previous.shadowed) if previous and bucket else ()
                    origin = data.origin(key)
                    merged.origins[key] = replace(origin, shadowed=lower)
                bucket.extend(taken)
                merged.values[key] = [item for item, _ in bucket]
                continue
            if accept is not None and not accept(data, key, value):
                continue
            previous = merged.origins.get(key)
            shadowed = (replace(previous, shadowed=()), *previous.shadowed) if previous else ()
            origin = data.origin(key)
            merged.origins[key] = KeyOrigin(
                layer=origin.layer, file=origin.file, line=origin.line, source=origin.source, shadowed=shadowed
            )
            merged.values[key] = value
    return merged
