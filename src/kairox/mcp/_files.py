"""Per-server file names under ``$KAIROX_HOME`` (stderr logs, OAuth tokens)."""

import hashlib
import re

_PLAIN = re.compile(r"[A-Za-z0-9_-]+")


def server_file_stem(server: str) -> str:
    """``server`` itself when it is one plain word; otherwise a cleaned name with a hash of the original.

    A server's name comes from configuration, a workspace ``.mcp.json`` or a plugin, and may be ``../x``: the
    files named after it must stay in their folder, and two names must never share a file.
    """
    if _PLAIN.fullmatch(server):
        return server
    digest = hashlib.sha256(server.encode()).hexdigest()[:16]
    return f"{re.sub(r'[^A-Za-z0-9_-]', '_', server)}-{digest}"
