"""Project memory (C7): ``AGENTS.md`` / ``KAIROX.md`` (or fallbacks such as ``CLAUDE.md``) from the repository
root down to the working directory, at most one file per folder, within a byte budget."""

import os
from dataclasses import dataclass
from pathlib import Path

from kairox.config import InstructionsConfig
from kairox.runtime._imports import Unreadable, expand_imports


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryFile:
    path: Path
    text: str
    truncated: bool = False


def _folders(root: Path, cwd: Path) -> list[Path]:
    root, cwd = root.resolve(), cwd.resolve()
    if cwd != root and root not in cwd.parents:
        return [root]
    chain = [cwd, *[p for p in cwd.parents if p == root or root in p.parents]]
    return list(reversed(chain))


def _inside(path: Path, root: Path) -> bool:
    real = Path(os.path.realpath(path))
    return real == root or root in real.parents


def gather_memory(
    root: Path, cwd: Path, settings: InstructionsConfig, *, unreadable: Unreadable | None = None
) -> list[MemoryFile]:
    """One memory file per folder from ``root`` down to ``cwd``; primary names before fallbacks.

    The budget (``instructions.max_bytes``) is shared; the file that crosses it is cut with a note and the
    deeper ones are left out, so the text nearest the root (the repository's own rules) always survives.
    A memory file that leads out of the repository (a symlink, a name with ``..``) is not read: the prompt
    must not carry files the policy would not let the model read; nor does one the read rules refuse once
    symlinks are resolved (``unreadable``). ``@path`` imports are expanded inside the workspace where the read
    rules let them be read.
    """
    budget = settings.max_bytes
    real_root = Path(os.path.realpath(root))
    found: list[MemoryFile] = []
    for folder in _folders(root, cwd):
        for name in (*settings.memory_files, *settings.fallback_memory_files):
            candidate = folder / name
            if not candidate.is_file() or not _inside(candidate, real_root):
                continue
            if unreadable is not None and unreadable(Path(os.path.realpath(candidate))) is not None:
                continue
            try:
                raw = candidate.read_bytes()
            except OSError:
                continue
            if budget <= 0:
                return found
            whole = expand_imports(
                raw.decode("utf-8", errors="ignore"), candidate, workspace=real_root, unreadable=unreadable
            )
            raw = whole.encode("utf-8")
            text = raw[:budget].decode("utf-8", errors="ignore")
            truncated = len(raw) > budget
            budget -= len(raw)
            if truncated:
                text += f"\n[... {candidate.name} cut at the {settings.max_bytes}-byte memory budget]"
            found.append(MemoryFile(path=candidate, text=text.strip(), truncated=truncated))
            break
    return found


def instruction_text(
    base_dir: Path,
    settings: InstructionsConfig,
    *,
    confine_to: Path | None = None,
    unreadable: Unreadable | None = None,
) -> list[tuple[str, str]]:
    """``instructions.text`` and the contents of ``instructions.files`` (relative to ``base_dir``).

    With ``confine_to`` (the workspace, when an untrusted project file lists the files), a file outside that
    folder is not read; nor is one the read rules refuse (``unreadable``) once symlinks are resolved.
    """
    parts: list[tuple[str, str]] = []
    if settings.text.strip():
        parts.append(("config", settings.text.strip()))
    real_confine = None if confine_to is None else Path(os.path.realpath(confine_to))
    for name in settings.files:
        path = base_dir / Path(name).expanduser()
        if real_confine is not None and not _inside(path, real_confine):
            parts.append(
                (
                    name,
                    "[not read: it is outside the workspace, which is not "
                    "trusted; `kairox trust` lets project files name it]",
                )
            )
            continue
        rule = None if unreadable is None else unreadable(Path(os.path.realpath(path)))
        if rule is not None:
            parts.append((name, f"[not read: {rule} keeps it from being read]"))
            continue
        try:
            parts.append((name, path.read_text(encoding="utf-8").strip()[: settings.max_bytes]))
        except OSError as exc:
            parts.append((name, f"[could not read {path}: {exc.strerror}]"))
    return parts
