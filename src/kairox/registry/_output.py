"""The output cap (R5): a result longer than the limit is spilled to a file whose path it then names."""

import re
import time
from dataclasses import replace
from pathlib import Path

from kairox._util._files import open_private, private_folder
from kairox.tools import EmbeddedResource, TextContent, ToolResult

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def text_size(result: ToolResult) -> int:
    size = 0
    for part in result.content:
        if isinstance(part, TextContent | EmbeddedResource):
            size += len(part.text or "")
    return size


def cap_output(
    result: ToolResult, *, limit: int, spill_dir: Path | None, tool: str, call_id: str
) -> tuple[ToolResult, Path | None]:
    """``result`` unchanged when within ``limit`` characters; else its text cut to the limit with a note saying
    where the whole text was written (or that it was dropped, when it could not be written)."""
    size = text_size(result)
    if size <= limit:
        return result, None
    full = result.text_content()
    spilled: Path | None = None
    problem = ""
    if spill_dir is not None:
        try:
            private_folder(spill_dir)
            stamp = time.strftime("%Y%m%d-%H%M%S")
            name = _SAFE.sub("_", f"{stamp}-{tool}-{call_id or 'call'}")[:120]
            spilled = spill_dir / f"{name}.txt"
            counter = 1
            while spilled.exists():
                spilled = spill_dir / f"{name}-{counter}.txt"
                counter += 1
            with open_private(spilled, "w", encoding="utf-8") as handle:
                handle.write(full)
        except OSError as exc:
            spilled, problem = None, f" (it could not be written to {spill_dir}: {exc.strerror or exc})"
    if spilled is not None:
        note = (
            f"\n[output truncated: {size} characters, limit {limit}; the full "
            f"output is in {spilled}; read it with fs.read and a line range]"
        )
    else:
        note = f"\n[output truncated: {size} characters, limit {limit}; the rest was dropped{problem}]"
    keep = max(limit - len(note), 0)
    others = tuple(
        p
        for p in result.content
        if not isinstance(p, TextContent | EmbeddedResource) or (isinstance(p, EmbeddedResource) and p.text is None)
    )
    where = {} if spilled is None else {"spilled_to": str(spilled)}
    meta = {**result.meta, "truncated": True, "original_chars": size, **where}
    shown = full[:keep] + note
    structured = result.structured
    if structured is not None:
        # the structured form is cut with the text (it carries the same payload): the cut text and the
        # result's numbers and flags, so a host that shows only structuredContent sees what the text shows
        structured = {k: v for k, v in structured.items() if v is None or isinstance(v, bool | int | float)}
        structured.update(text=shown, output_truncated=True, original_chars=size, **where)
    capped = replace(result, content=(TextContent(text=shown), *others), structured=structured, meta=meta)
    return capped, spilled
