"""Host names and the ``allowed_domains`` patterns that name them (Y14): ``pypi.org`` (that name) or
``*.example.com`` (every name below it, not the name itself). A host is a name, never an address: every spelling
of an IPv4 address the C library reads (``127.1``, ``0x7f.0.0.1``, ``2130706433``) and every IPv6 one is refused."""

import re
from collections.abc import Iterable

_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")
_NUMBER = re.compile(r"0x[0-9a-f]*|[0-9]+")


def host_name(text: str) -> str | None:
    """``text`` as a host name (lower case, one final dot dropped), or None when it is no name: an address in any
    spelling, a label that is not letters, digits, ``-`` and ``_``, or a name longer than DNS allows."""
    name = text.lower().removesuffix(".")
    labels = name.split(".")
    valid = name.isascii() and len(name) <= 253 and all(_LABEL.fullmatch(label) for label in labels)
    # a numeric last label is an address (no top-level domain is numeric); so is every label a number
    return name if valid and not labels[-1].isdigit() and not all(_NUMBER.fullmatch(x) for x in labels) else None


def allowing(host: str, domains: Iterable[str]) -> str | None:
    """The entry of ``domains`` that allows ``host`` (already a ``host_name``), the name itself before a pattern;
    None when none does."""
    found = [e for e in domains if (p := e.lower().rstrip(".")) == host or (p[:2] == "*." and host.endswith(p[1:]))]
    return min(found, key=lambda entry: entry.startswith("*."), default=None)


def covered(entry: str, domains: Iterable[str]) -> bool:
    """Whether every name ``entry`` allows is allowed by ``domains`` (``*.a.b`` is covered by ``*.b``)."""
    return allowing(entry.lower().removesuffix("."), domains) is not None
