"""OpenTelemetry out of ``kairox serve``: an OTLP/HTTP receiver on 127.0.0.1 decodes what arrives with
``opentelemetry-proto``; with no ``OTEL_*`` endpoint set nothing of OpenTelemetry is even imported."""

import gzip
import os
import subprocess
import sys
import threading
from collections import defaultdict
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from tests.gateway.conftest import in_process
from tests.gateway.team import team_workspace

pytestmark = pytest.mark.anyio

MESSAGES = {"/v1/traces": ExportTraceServiceRequest, "/v1/metrics": ExportMetricsServiceRequest}
MESSAGES["/v1/logs"] = ExportLogsServiceRequest


@pytest.fixture
def receiver() -> Iterator[tuple[str, dict[str, list[Any]]]]:
    received: dict[str, list[Any]] = defaultdict(list)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            message = MESSAGES[self.path]()
            message.ParseFromString(body)
            received[self.path].append(message)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()


def attributes(item: Any) -> dict[str, Any]:
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in item.attributes}


async def test_each_gateway_call_is_a_span_with_children_a_metric_and_a_log(
    tmp_path: Path, receiver: tuple[str, dict[str, list[Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, received = receiver
    workspace = team_workspace(tmp_path / "ws")
    done = subprocess.run([sys.executable, "-m", "kairox", "trust"], cwd=workspace, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "kairox-under-test")
    async with in_process(workspace, tmp_path / "audit.jsonl") as client:
        ran = await client.call_tool("mcp__ledger__record", {"tag": "traced"})
        asked = await client.call_tool("mcp__ledger__record", {"tag": "ask-nobody"})  # no elicitation: refused
    assert not ran.is_error and asked.is_error
    # leaving the gateway shut the providers down, which sends what was batched
    spans = [
        (s, attributes(s))
        for request in received["/v1/traces"]
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for s in scope.spans
    ]
    services = {
        attributes(r.resource)["service.name"] for request in received["/v1/traces"] for r in request.resource_spans
    }
    assert services == {"kairox-under-test"}
    calls = {a["kairox.outcome"]: (s, a) for s, a in spans if s.name == "tool mcp__ledger__record"}
    span, attrs = calls["ok"]
    assert {k: attrs[k] for k in ("kairox.decision", "kairox.server", "kairox.outcome")} == {
        "kairox.decision": "allow",
        "kairox.server": "ledger",
        "kairox.outcome": "ok",
    }
    assert attrs["kairox.user"]
    children = [s.name for s, _ in spans if s.parent_span_id == span.span_id]
    assert children == ["call ledger"]
    refused, refused_attrs = calls["refused"]
    assert refused_attrs["kairox.rule"] == "mcp__ledger__record(ask*)"
    assert not [s for s, _ in spans if s.parent_span_id == refused.span_id and s.name.startswith("call ")]
    metrics = {
        m.name: m
        for request in received["/v1/metrics"]
        for resource in request.resource_metrics
        for scope in resource.scope_metrics
        for m in scope.metrics
    }
    assert {"kairox.tool.calls", "kairox.tool.duration", "kairox.tool.denials", "kairox.tool.asks"} <= set(metrics)
    assert sum(p.as_int for p in metrics["kairox.tool.calls"].sum.data_points) == 2
    logs = [
        record.body.string_value
        for request in received["/v1/logs"]
        for resource in request.resource_logs
        for scope in resource.scope_logs
        for record in scope.log_records
    ]
    assert len(logs) == 2 and logs[0].endswith("mcp__ledger__record: allow, ok")


def test_without_an_otel_endpoint_nothing_of_opentelemetry_is_loaded() -> None:
    probe = (
        "import sys\n"
        "from kairox.gateway._telemetry import from_env\n"
        "from kairox.gateway._serve import open_gateway\n"
        "assert from_env() is None\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry.sdk')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr


def test_a_kairox_run_session_exports_model_requests_with_token_counts_and_its_tool_calls(
    tmp_path: Path, isolated_home: Path, receiver: tuple[str, dict[str, list[Any]]]
) -> None:
    from tests.agent._support import BIN, make_workspace, user_config
    from tests.helpers import kairox
    from tests.servers.model_server import ScriptedModelServer

    url, received = receiver
    workspace = make_workspace(tmp_path / "repo")
    script = [
        {"reply": "tool_calls", "calls": [{"id": "r1", "name": "fs_read", "arguments": {"path": "notes.txt"}}]},
        {"reply": "text", "text": "Read it."},
    ]
    env = {
        "KAIROX_TEST_MODEL_KEY": "sk-test-0123456789abcdef",
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        "OTEL_METRICS_EXPORTER": "none",
    }
    with ScriptedModelServer("openai", script) as server:
        user_config(isolated_home, server, wire="openai")
        run = kairox("--workspace", workspace, "run", "Read the notes", env=env)
    assert run.code == 0, run.stderr
    spans = [
        (s.name, attributes(s))
        for request in received["/v1/traces"]
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for s in scope.spans
    ]
    models = [a for name, a in spans if name == "model request"]
    assert [a["kairox.step"] for a in models] == [1, 2]
    assert all(a["gen_ai.usage.input_tokens"] > 0 and "gen_ai.usage.output_tokens" in a for a in models)
    assert [(a["kairox.outcome"], a["kairox.client"]) for name, a in spans if name == "tool fs.read"] == [
        ("ok", "session")
    ]
    assert "/v1/metrics" not in received  # OTEL_METRICS_EXPORTER=none turns that signal off
