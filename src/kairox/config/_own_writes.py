"""Changes Kairox makes to a trusted workspace's project or local file at the user's word, and the pins they move.

Trust (Y9) holds back a project value that changed since ``kairox trust`` recorded it. A change the user makes
through Kairox itself (``config set --layer project``, a toggle in the TUI or GUI, ``mcp add``, a catalog install)
is the user's own and holds at once. A change someone else made to the same entry still waits: the pins move
only from what trust allowed. A value that was pinned (or not there at all) just before the write is pinned as
written after it; a value that was already waiting keeps waiting, whatever the write did to it.
"""

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from kairox.config._keys import split_key
from kairox.config._pins import PinnedValue, PinState
from kairox.config._resolve import ResolvedConfig, resolve_config
from kairox.config._trust import TrustStore
from kairox.config._trust_gate import PROJECT_LAYERS

T = TypeVar("T")


def _parts(key: str) -> tuple[str, ...] | None:
    try:
        return tuple(split_key(key))
    except ValueError:
        return None


def _touches(pin: PinnedValue, written: tuple[str, ...]) -> bool:
    """Whether writing the key ``written`` can change ``pin``'s value: one key holds the other, or they are one."""
    label = pin.key
    if pin.item and label.endswith("]"):
        label = label.split("[", 1)[0]
    parts = _parts(label)
    if parts is None:
        return True  # a key this cannot read is treated as touched: it is then pinned only if it was pinned
    shorter = min(len(parts), len(written))
    return parts[:shorter] == written[:shorter]


def _in_file(pins: Iterable[PinnedValue], file: str, written: tuple[str, ...]) -> dict[str, PinnedValue]:
    return {
        pin.key: pin
        for pin in pins
        if pin.origin.file is not None and os.path.realpath(pin.origin.file) == file and _touches(pin, written)
    }


def _resolve_again(resolved: ResolvedConfig) -> ResolvedConfig:
    env: Mapping[str, str] = {**os.environ, "KAIROX_HOME": str(resolved.home)}
    return resolve_config(resolved.workspace, env=env, profile=resolved.profile, parse_cache=None)


def write_own(resolved: ResolvedConfig, file: Path, key: str, write: Callable[[], T]) -> T:
    """Run ``write``, a change to ``key`` in ``file`` that the user asked Kairox for, and return what it returns.

    When ``file`` is the project or local file of a trusted workspace, the values under ``key`` that trust had
    allowed as they stood (or that did not exist) are pinned as ``write`` left them, so they are in force at the
    next resolve; a value that was waiting for ``kairox trust`` before keeps waiting. Elsewhere this is ``write()``.
    """
    written = _parts(key)
    if written is None or not resolved.trusted or resolved.layer_of(file) not in PROJECT_LAYERS:
        return write()
    store = TrustStore(resolved.home)
    recorded = store.pins(resolved.workspace)
    if recorded is None or recorded.recorded is None:
        return write()  # not trusted now, or trusted before fingerprints: everything waits for `kairox trust`
    target = os.path.realpath(file)
    before = {k: recorded.state(pin) for k, pin in _in_file(_resolve_again(resolved).pinnable, target, written).items()}
    result = write()
    after = _in_file(_resolve_again(resolved).pinnable, target, written)
    moved = [
        pin
        for k, pin in after.items()
        if before.get(k, PinState.PINNED) == PinState.PINNED and recorded.state(pin) != PinState.PINNED
    ]
    if moved:
        store.pin(resolved.workspace, moved)
    return result
