"""``kairox audit``: the gateway's audit, from the local JSON-lines log or from a store."""

import json
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from kairox.cli._common import ExitCode, fail, out, state

_AGO = re.compile(r"([0-9]+)\s*([smhd])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_since(text: str) -> float:
    """``30m``, ``2h``, ``7d`` (ago) or an ISO 8601 time -> seconds since the epoch."""
    ago = _AGO.fullmatch(text.strip())
    if ago:
        return time.time() - int(ago[1]) * _UNIT[ago[2]]
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        fail(f"--since {text!r}: expected 30m, 2h, 7d or an ISO time such as 2026-05-01T09:00", ExitCode.USAGE)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    """The log and its rotated files, oldest first; a line that is not JSON is skipped."""
    records = []
    for file in [*(path.with_name(f"{path.name}.{n}") for n in range(9, 0, -1)), path]:
        for line in file.read_text(encoding="utf-8", errors="replace").splitlines() if file.exists() else []:
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    return records


def audit(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option("--store", metavar="URL", help="Read the store (postgresql://..., sqlite:///PATH) instead."),
    ] = None,
    user: Annotated[str | None, typer.Option("--user", metavar="U", help="Only this user's calls.")] = None,
    since: Annotated[
        str | None, typer.Option("--since", metavar="T", help="Only calls since T (30m, 2h, 7d, or an ISO time).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """Show what `kairox serve` ran: one line per call (time, user, tool, decision, outcome, replica).

    Reads $KAIROX_HOME/logs/gateway.jsonl unless --store (or [gateway] store) names a store."""
    resolved = state(ctx).resolve()
    since_ts = parse_since(since) if since else None
    url = store or resolved.config.gateway.store
    if url:
        from kairox.errors import KairoxError
        from kairox.gateway import Store

        try:
            opened = Store(url, pool_size=1)
            try:
                records = opened.read_audit(user=user, since=since_ts)
            finally:
                opened.close()
        except KairoxError as exc:
            fail(str(exc), ExitCode.CONFIG)
    else:
        records = [
            r
            for r in _jsonl(resolved.home / "logs" / "gateway.jsonl")
            if (user is None or r.get("user") == user) and (since_ts is None or r.get("ts", 0) >= since_ts)
        ]
    for r in records:
        if as_json:
            out(json.dumps(r, ensure_ascii=False, default=str))
            continue
        when = datetime.fromtimestamp(r.get("ts") or 0).strftime("%Y-%m-%d %H:%M:%S")
        out(
            f"{when}  {r.get('user') or '-'}  {r.get('tool')}  {r.get('decision')}  {r.get('outcome')}  "
            f"{r.get('duration_ms')} ms  {r.get('replica') or '-'}"
        )


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)
