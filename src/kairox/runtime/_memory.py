"""Project memory (C7): ``AGENTS.md`` / ``KAIROX.md`` (or fallbacks such as ``CLAUDE.md``) from the repository
root down to the working directory, at most one file per folder, within a byte budget."""

from dataclasses import dataclass
from pathlib import Path

from kairox.config import InstructionsConfig


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


def gather_memory(root: Path, cwd: Path, settings: InstructionsConfig) -> list[MemoryFile]:
    """One memory file per folder from ``root`` down to ``cwd``; primary names before fallbacks.

    The budget (``instructions.max_bytes``) is shared; the file that crosses it is cut with a note and the
    deeper ones are left out, so the text nearest the root (the repository's own rules) always survives.
    """
    budget = settings.max_bytes
    found: list[MemoryFile] = []
    for folder in _folders(root, cwd):
        for name in (*settings.memory_files, *settings.fallback_memory_files):
            candidate = folder / name
            if not candidate.is_file():
                continue
            try:
                raw = candidate.read_bytes()
            except OSError:
                continue
            if budget <= 0:
                return found
            text = raw[:budget].decode("utf-8", errors="ignore")
            truncated = len(raw) > budget
            budget -= len(raw)
            if truncated:
                text += f"\n[... {candidate.name} cut at the {settings.max_bytes}-byte memory budget]"
            found.append(MemoryFile(path=candidate, text=text.strip(), truncated=truncated))
            break
    return found


def instruction_text(base_dir: Path, settings: InstructionsConfig) -> list[tuple[str, str]]:
    """``instructions.text`` and the contents of ``instructions.files`` (relative to ``base_dir``)."""
    parts: list[tuple[str, str]] = []
    if settings.text.strip():
        parts.append(("config", settings.text.strip()))
    for name in settings.files:
        path = (base_dir / name).expanduser()
        try:
            parts.append((name, path.read_text(encoding="utf-8").strip()[: settings.max_bytes]))
        except OSError as exc:
            parts.append((name, f"[could not read {path}: {exc.strerror}]"))
    return parts
