"""Embeddings for semantic tool matching (``tools.semantic``): the configured model provider's OpenAI-compatible
``POST {base_url}/embeddings``, spoken with ``httpx`` like the chat wire. Off by default and never required: a
failing endpoint leaves the lexical ranking, and the search result says so."""

import os
from collections.abc import Sequence
from pathlib import Path

from kairox.agent._http import import_httpx
from kairox.agent._provider import ModelSettings, model_settings
from kairox.config import ResolvedConfig
from kairox.errors import KairoxError
from kairox.search import Embedder, EmbeddingCache, SemanticRanker

DEFAULT_BASE_URL = "https://api.openai.com/v1"
BATCH = 256
"""Texts per request (the OpenAI endpoint takes up to 2,048 inputs; smaller requests fail smaller)."""


class EmbeddingError(KairoxError):
    """The embeddings endpoint did not answer with one vector per text."""


def provider_embedder(settings: ModelSettings, model: str, *, timeout_sec: float = 30.0) -> Embedder:
    """``texts -> vectors`` through ``settings``' provider (its base URL, key and headers)."""
    base = (settings.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    url = base + "/embeddings"

    def embed(texts: Sequence[str]) -> list[list[float]]:
        httpx = import_httpx()
        key = settings.api_key()
        headers = {**settings.headers, **({"authorization": f"Bearer {key}"} if key else {})}
        vectors: list[list[float]] = []
        with httpx.Client(timeout=timeout_sec) as client:
            for start in range(0, len(texts), BATCH):
                chunk = list(texts[start : start + BATCH])
                try:
                    response = client.post(
                        url, json={"model": model, "input": chunk, "encoding_format": "float"}, headers=headers
                    )
                except httpx.HTTPError as exc:
                    raise EmbeddingError(
                        f"{url}: {type(exc).__name__}: {exc}",
                        hint="check model_providers.*.base_url, or set tools.semantic = false",
                    ) from exc
                if response.status_code != 200:
                    raise EmbeddingError(
                        f"{url} answered {response.status_code}: {response.text[:200]}",
                        hint=f"does the provider serve embeddings with the model {model!r}? (tools.embedding_model)",
                    )
                try:
                    rows = sorted(response.json()["data"], key=lambda row: int(row["index"]))
                    got = [[float(x) for x in row["embedding"]] for row in rows]
                except (ValueError, KeyError, TypeError) as exc:
                    raise EmbeddingError(f"{url} answered without data[].embedding ({exc})") from exc
                if len(got) != len(chunk):
                    raise EmbeddingError(f"{url} returned {len(got)} embeddings for {len(chunk)} texts")
                vectors += got
        return vectors

    return embed


def semantic_ranker(
    resolved: ResolvedConfig, settings: ModelSettings | None = None, *, cache_path: Path | None = None
) -> SemanticRanker | None:
    """The ranker ``tools.semantic`` asks for (None when it is off), its vectors cached under the Kairox home;
    ``settings``: the session's model (by default the configured one, whose provider serves the embeddings)."""
    tools = resolved.config.tools
    if not tools.semantic:
        return None
    if settings is None:
        settings = model_settings(resolved)
    cache = EmbeddingCache(cache_path or resolved.home / "cache" / "embeddings.sqlite")
    return SemanticRanker(
        provider_embedder(settings, tools.embedding_model),
        model=f"{settings.provider}/{tools.embedding_model}",
        cache=cache,
        weight=tools.semantic_weight,
    )
