"""Which model, served by whom: the settings of a session's provider, the errors of providers, and the retry
loop both providers share (429 and 5xx, honouring ``Retry-After``)."""

import email.utils
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import anyio

from kairox.agent._events import ModelRequestRetried
from kairox.config import Layer, ModelProviderConfig, ResolvedConfig
from kairox.errors import KairoxError
from kairox.events import EventSink
from kairox.registry import ModelProvider

T = TypeVar("T")

BUILTIN_PROVIDERS: dict[str, ModelProviderConfig] = {
    "openai": ModelProviderConfig(wire_api="chat", api_key_env="OPENAI_API_KEY"),
    "anthropic": ModelProviderConfig(wire_api="anthropic", api_key_env="ANTHROPIC_API_KEY"),
    "ollama": ModelProviderConfig(wire_api="chat", base_url="http://localhost:11434/v1"),
}
"""Providers that need no ``[model_providers.NAME]`` entry (an entry of the same name replaces one)."""


class ModelProviderError(KairoxError):
    """A model request failed: the provider answered with an error, the connection broke, the stream was cut."""

    def __init__(self, provider: str, message: str, *, status: int | None = None, hint: str | None = None) -> None:
        super().__init__(f"model provider {provider!r}: {message}", hint=hint)
        self.provider, self.reason, self.status = provider, message, status


class ModelSetupError(KairoxError):
    """The session cannot reach a model: no model named, an unknown provider, a missing API key."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSettings:
    model: str
    provider: str
    """The ``[model_providers.NAME]`` name."""
    wire_api: str
    base_url: str | None = None
    api_key_env: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    request_timeout_sec: float = 600.0
    max_retries: int = 3
    context_window: int = 128_000
    """The model's context window in tokens (:func:`context_window` says where it comes from)."""
    prompt_cache_key: bool | None = None
    """``model_providers.NAME.prompt_cache_key``; unset: sent to OpenAI's own endpoint only."""

    @property
    def dialect(self) -> ModelProvider:
        """The tool-schema dialect of the wire API."""
        return ModelProvider.ANTHROPIC if self.wire_api == "anthropic" else ModelProvider.OPENAI

    def api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key from the provider's variable; ``ModelSetupError`` naming the variable when it is unset."""
        if self.api_key_env is None:
            return None
        value = (env if env is not None else os.environ).get(self.api_key_env, "")
        if not value:
            raise ModelSetupError(
                f"model provider {self.provider!r} needs an API key: the variable {self.api_key_env} is not set",
                hint=f"export {self.api_key_env}=... (model_providers.{self.provider}.api_key_env names the variable)",
            )
        return value


def model_settings(resolved: ResolvedConfig, *, model: str | None = None, provider: str | None = None) -> ModelSettings:
    """The model and provider a session uses: the arguments first (``--model``), then the configuration."""
    config = resolved.config
    name = provider or config.model_provider or "openai"
    chosen = model or config.model
    entries = {**BUILTIN_PROVIDERS, **config.model_providers}
    entry = entries.get(name)
    if entry is None:
        known = ", ".join(sorted(entries))
        raise ModelSetupError(
            f"unknown model provider {name!r} (known: {known})",
            hint=f"add [model_providers.{name}] with base_url, wire_api and api_key_env to $KAIROX_HOME/kairox.toml",
        )
    if not chosen:
        raise ModelSetupError(
            "no model is configured",
            hint='set model = "..." in $KAIROX_HOME/kairox.toml, KAIROX_MODEL, or pass --model',
        )
    return ModelSettings(
        model=chosen,
        provider=name,
        wire_api=entry.wire_api,
        base_url=entry.base_url,
        api_key_env=entry.api_key_env,
        headers=dict(entry.headers),
        request_timeout_sec=entry.request_timeout_sec,
        max_retries=entry.max_retries,
        context_window=context_window(resolved, chosen, entry),
        prompt_cache_key=entry.prompt_cache_key,
    )


KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude-", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
)
"""Context windows of model families by name prefix (the longest prefix that matches wins)."""


def known_window(model: str) -> int | None:
    """The published context window of ``model``'s family (``anthropic/claude-...`` as routers name it, too)."""
    name = model.rsplit("/", 1)[-1].lower()
    found = [(len(prefix), window) for prefix, window in KNOWN_WINDOWS if name.startswith(prefix)]
    return max(found)[1] if found else None


def context_window(resolved: ResolvedConfig, model: str, entry: ModelProviderConfig | None = None) -> int:
    """The window of ``model``: its provider's ``context_window``, else ``agent.context_window_tokens`` when a layer
    sets it, else the known window of the model's name, else the default of ``agent.context_window_tokens``."""
    if entry is not None and entry.context_window is not None:
        return entry.context_window
    agent = resolved.config.agent
    origin = resolved.provenance.get("agent.context_window_tokens")
    if origin is not None and origin.layer is not Layer.DEFAULT:
        return agent.context_window_tokens
    return known_window(model) or agent.context_window_tokens


@dataclass(frozen=True, kw_only=True, slots=True)
class Failure:
    """A provider's exception, classified."""

    message: str
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    try:
        if "retry-after-ms" in lowered:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        if "retry-after" in lowered:
            value = lowered["retry-after"].strip()
            try:
                return max(0.0, float(value))
            except ValueError:
                parsed = email.utils.parsedate_to_datetime(value)
                return max(0.0, parsed.timestamp() - time.time())
    except (ValueError, TypeError):
        return None
    return None


def status_failure(status: int | None, message: str, headers: Mapping[str, str] | None) -> Failure:
    retryable = status is None or status == 429 or status == 408 or status >= 500
    return Failure(message=message, status=status, retryable=retryable, retry_after=retry_after(headers))


MAX_WAIT_SEC = 60.0


async def with_retries(
    settings: ModelSettings,
    attempt: Callable[[], Awaitable[T]],
    classify: Callable[[BaseException], Failure | None],
    events: EventSink,
) -> T:
    """``attempt()`` until it succeeds or a failure is final; waits ``Retry-After`` or an exponential backoff.

    Only the opening of a request is retried: once text has streamed, a failure is final (the front end showed it).
    """
    tries = 0
    while True:
        try:
            return await attempt()
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if not failure.retryable or tries >= settings.max_retries:
                hint = f"the request was retried {tries} times" if tries else None
                raise ModelProviderError(settings.provider, failure.message, status=failure.status, hint=hint) from exc
            tries += 1
            delay = (
                failure.retry_after
                if failure.retry_after is not None
                else min(8.0, 0.5 * 2 ** (tries - 1)) * (0.5 + random.random() / 2)
            )
            delay = min(delay, MAX_WAIT_SEC)
            events.emit(ModelRequestRetried(attempt=tries, delay_sec=round(delay, 3), reason=failure.message))
            await anyio.sleep(delay)


def model_choices(resolved: ResolvedConfig) -> list[tuple[str, str]]:
    """``(provider/model, where it is named)`` of every model the configuration names: the default, then profiles."""
    config = resolved.config
    found: list[tuple[str, str]] = []
    if config.model:
        found.append((f"{config.model_provider or 'openai'}/{config.model}", "model"))
    for name, profile in sorted(config.profiles.items()):
        if profile.model:
            found.append(
                (f"{profile.model_provider or config.model_provider or 'openai'}/{profile.model}", f"profile {name}")
            )
    return list(dict.fromkeys(found))


def known_providers(resolved: ResolvedConfig) -> dict[str, ModelProviderConfig]:
    """The built-in providers and the configured ones (a configured one replaces a built-in of its name)."""
    return {**BUILTIN_PROVIDERS, **resolved.config.model_providers}


def choose_model(resolved: ResolvedConfig, name: str, *, current_provider: str | None = None) -> ModelSettings:
    """``NAME`` or ``PROVIDER/NAME`` (a front end's ``/model``) as settings, checked against the configuration:
    the provider must be known and its key set; a name close to a configured one but not it is taken for a typo.
    A bare name keeps ``current_provider``. Raises :class:`ModelSetupError` saying what to type instead."""
    import difflib

    provider, _, model = name.partition("/")
    if not model or provider not in known_providers(resolved):
        provider, model = current_provider or resolved.config.model_provider or "openai", name
    if not model or any(c.isspace() for c in model):
        raise ModelSetupError(
            f"{name!r} is not a model name", hint="/model NAME or /model PROVIDER/NAME; /model alone lists the choices"
        )
    named = [choice for choice, _ in model_choices(resolved)]
    wanted = f"{provider}/{model}"
    same_provider = [choice.partition("/")[2] for choice in named if choice.partition("/")[0] == provider]
    close = difflib.get_close_matches(model, same_provider, n=1, cutoff=0.85)
    if wanted not in named and close:
        raise ModelSetupError(
            f"no model {wanted} in the configuration",
            hint=f"did you mean /model {provider}/{close[0]}? (/model alone lists the choices)",
        )
    settings = model_settings(resolved, model=model, provider=provider)
    settings.api_key()
    return settings
