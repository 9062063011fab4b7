import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class ExpansionResult:
    value: str
    missing: tuple[str, ...] = field(default=())
    """Variables that were referenced, unset, and had no default (they expand to "")."""


def expand_vars(text: str, env: Mapping[str, str]) -> ExpansionResult:
    """Expand ``${VAR}`` and ``${VAR:-default}`` in ``text`` from ``env``.

    ``${VAR:-default}`` uses the default when VAR is unset or empty, as a POSIX shell does. Unset variables
    without a default expand to the empty string and are reported in ``missing`` so callers can say which
    variable to set.
    """
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value:
            return value
        if default is not None:
            return default
        if value is None:
            missing.append(name)
        return ""

    return ExpansionResult(_VAR.sub(replace, text), tuple(missing))
