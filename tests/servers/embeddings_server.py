"""A scripted OpenAI-compatible embeddings endpoint on 127.0.0.1: ``POST /v1/embeddings`` answers with
deterministic vectors, so semantic matching can be tested (and measured) without a model.

The vector of a text counts its words by *concept*: words listed together in ``CONCEPTS`` share a dimension (so
``defect`` and ``issue`` are close, as a real model would place them), any other word gets a dimension of its
own by hash. It is a stand-in for a model's sense of meaning, not a model: figures measured with it say how the
blending behaves, not how a real embedding model would rank.
"""

import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSIONS = 256
CONCEPTS: tuple[tuple[str, ...], ...] = (
    ("issue", "issues", "ticket", "tickets", "bug", "bugs", "defect", "defects", "problem"),
    ("add", "sum", "total", "plus", "integers", "numbers", "arithmetic"),
    ("echo", "repeat", "unchanged", "parrot", "return", "back"),
    ("message", "text", "words", "string"),
    ("file", "files", "document", "documents"),
    ("read", "view", "show", "contents"),
    ("delete", "remove", "erase", "drop"),
    ("create", "new", "make", "open"),
    ("pull", "merge", "pr"),
    ("search", "find", "lookup", "query"),
    ("navigate", "browse", "visit", "go", "url", "page"),
)
_CONCEPT = {word: i for i, words in enumerate(CONCEPTS) for word in words}
_WORD = re.compile(r"[a-z0-9]+")


def embed(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in _WORD.findall(text.lower()):
        if word in _CONCEPT:
            index = _CONCEPT[word]
        else:
            index = len(CONCEPTS) + int(hashlib.sha256(word.encode()).hexdigest(), 16) % (DIMENSIONS - len(CONCEPTS))
        vector[index] += 1.0
    return vector


class EmbeddingsServer:
    """``with EmbeddingsServer() as server:`` -- ``server.base_url`` ends in ``/v1``; ``server.inputs`` holds the
    texts of every request, ``server.fail`` makes it answer 500, ``server.delay_sec`` waits before answering (a
    slow endpoint)."""

    def __init__(self) -> None:
        self.inputs: list[list[str]] = []
        self.headers: list[dict[str, str]] = []
        self.fail = False
        self.delay_sec = 0.0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                time.sleep(outer.delay_sec)
                if self.path != "/v1/embeddings" or outer.fail:
                    self._send(
                        500 if outer.fail else 404,
                        {"error": {"message": "scripted failure" if outer.fail else "no such path"}},
                    )
                    return
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else list(texts or [])
                outer.inputs.append(texts)
                data = [{"object": "embedding", "index": i, "embedding": embed(t)} for i, t in enumerate(texts)]
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model"),
                        "usage": {"prompt_tokens": 0, "total_tokens": 0},
                    },
                )

            def _send(self, status: int, payload: Any) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "EmbeddingsServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


@contextmanager
def embeddings_server() -> Iterator[EmbeddingsServer]:
    with EmbeddingsServer() as server:
        yield server
