"""Known secret values scrubbed from whatever is shown or kept: the values ``config show`` redacts, the host's
secret-looking variables, secrets given at run time (a catalog install's, a model's API key). The GUI's event
stream and API and the session transcripts pass through one :class:`SecretScrubber`."""

import os
import re
from typing import TYPE_CHECKING, Any

from kairox.config._redact import REDACTED, is_secret_key, redacted_values

if TYPE_CHECKING:
    from kairox.config._resolve import ResolvedConfig

_REFERENCE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")  # not ${VAR:-default}: a default may be a secret
_MIN_SECRET = 4
_MIN_HOST_SECRET = 8
"""A host variable's value is taken for a secret from this length: ``TOKENIZERS_PARALLELISM=true`` is not one."""


class SecretScrubber:
    """Every secret value Kairox knows of (configuration values ``config show`` redacts, the host's secret-looking
    variables, secret catalog variables given to an install, the GUI's token), replaced wherever it appears."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._longest = 0

    def add(self, *values: str | None) -> None:
        # a ``${VAR}`` reference names where a secret comes from; it is no secret itself (and error messages quote it)
        added = {v for v in values if v and len(v) >= _MIN_SECRET and v != REDACTED and not _REFERENCE.fullmatch(v)}
        if added - self._secrets:
            self._secrets |= added
            ordered = sorted(self._secrets, key=len, reverse=True)
            self._longest = len(ordered[0])
            self._pattern = re.compile("|".join(re.escape(s) for s in ordered))

    def add_environment(self, environ: dict[str, str] | None = None) -> None:
        for name, value in (os.environ if environ is None else environ).items():
            if is_secret_key(name) and len(value) >= _MIN_HOST_SECRET:
                self.add(value)

    def add_config(self, resolved: "ResolvedConfig") -> None:
        """What ``config show`` redacts of this configuration: each value it hides, or the hidden parts of one."""
        self.add(*resolved.secret_values)

    def add_values(self, plain: Any) -> None:
        """What ``config show`` would redact of one JSON tree (a server's entry, say)."""
        self.add(*redacted_values(plain))

    @classmethod
    def for_config(cls, resolved: "ResolvedConfig", *given: str | None) -> "SecretScrubber":
        """For what is shown or kept of a session or a gateway: every secret of ``resolved`` (what ``config show``
        redacts), the values ``given`` (a model's API key and headers) and the host's secret-looking variables."""
        scrubber = cls()
        scrubber.add_config(resolved)
        scrubber.add(*given)
        scrubber.add_environment()
        return scrubber

    @classmethod
    def for_server(cls, config: Any, *given: str, environ: dict[str, str] | None = None) -> "SecretScrubber":
        """For what a server's process writes (its stderr log and tail): the secrets of its configuration entry
        (a pydantic model: env values, headers, secret-looking keys), the values ``given`` to it (its expanded
        environment), and the host's secret-looking variables."""
        scrubber = cls()
        scrubber.add_values(config.model_dump(mode="json"))
        scrubber.add(*given)
        scrubber.add_environment(environ)
        return scrubber

    def text(self, value: str) -> str:
        return value if self._pattern is None else self._pattern.sub(REDACTED, value)

    def safe_end(self, value: str) -> int:
        """How much of ``value``, a text still being written, can be scrubbed now: all of it but a tail that may
        be the start of a secret whose end has not come yet. A secret ``value`` holds whole is never cut."""
        if self._pattern is None:
            return len(value)
        cut = max(0, len(value) - (self._longest - 1))
        for match in self._pattern.finditer(value, max(0, cut - self._longest)):
            if match.start() < cut < match.end():
                cut = match.end()
        return cut

    def scrub(self, value: Any, *, by_key: bool = False) -> Any:
        """``value`` with every known secret replaced; ``by_key``: also the string values of secret-looking keys."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                k: REDACTED
                if by_key and is_secret_key(str(k)) and isinstance(v, str) and v
                else self.scrub(v, by_key=by_key)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.scrub(v, by_key=by_key) for v in value]
        return value
