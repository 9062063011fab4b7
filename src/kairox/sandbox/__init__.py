"""What a confined process may see (Y6, Y7, Y9): the read masks of ``fs.read`` deny and ask rules (the files and
folders they cover, the git histories they reach, the other names of what they hide), and the file-system facts
the policy decides on (``HOST``). The policy says what is refused; this package finds it on disk.

It sits between ``kairox.policy`` (above: it hands the rules' patterns in, and reads the host's facts through
``HOST``) and ``kairox.tools`` (below: ``HiddenPaths`` is the tools' type). The bubblewrap command line itself is
still built in ``kairox.tools`` (``sandboxed_argv``, ``confine_server``), because ``shell.exec``, a built-in tool
below this layer, runs it as the plugin, hook and server starts do; the read masks reach it as
``SandboxSettings.hidden``. The egress proxy of ``network = "allowlist"`` (Y14) runs here too (``EgressProxy``,
reached through ``SandboxSettings.egress``); ``host_allowed`` says what it lets through by name."""

from kairox.sandbox._egress import EgressProxy, EgressRefused, host_allowed, shared_egress
from kairox.sandbox._githistory import CONTENT_LIMIT, HISTORY_BUDGET, HistoryCheck, HistoryFinding
from kairox.sandbox._host import HOST, HostFiles
from kairox.sandbox._readmask import SEARCH_LIMIT, MaskedReads, ReadMask, hidden_paths, mask_for

__all__ = [
    "CONTENT_LIMIT",
    "HISTORY_BUDGET",
    "HOST",
    "SEARCH_LIMIT",
    "EgressProxy",
    "EgressRefused",
    "HistoryCheck",
    "HistoryFinding",
    "HostFiles",
    "MaskedReads",
    "ReadMask",
    "hidden_paths",
    "host_allowed",
    "mask_for",
    "shared_egress",
]
