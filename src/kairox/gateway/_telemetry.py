"""OpenTelemetry for ``kairox serve`` and for sessions (``kairox run``, TUI, GUI): traces, metrics and logs through
the SDK's OTLP/HTTP exporters, configured by the standard ``OTEL_*`` variables.

Off unless an ``OTEL_EXPORTER_OTLP_*ENDPOINT`` is set (and ``OTEL_SDK_DISABLED`` is not ``true``); off, nothing of
OpenTelemetry is imported and nothing is done per call. ``OTEL_{TRACES,METRICS,LOGS}_EXPORTER=none`` turns one
signal off. The SDK is the optional extra ``kairox[otel]``.

A gateway call is a span (decision, rule, server, user, outcome) with two children: the wait for an approval and
the call itself, laid out from the registry's own figures. A session's model request is a span with its token
counts; its tool calls are spans like the gateway's.
"""

import os
import sys
import time
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from kairox.events import Event

ENDPOINTS = tuple(f"OTEL_EXPORTER_OTLP_{s}ENDPOINT" for s in ("", "TRACES_", "METRICS_", "LOGS_"))


def wanted(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get("OTEL_SDK_DISABLED", "").lower() != "true" and any(environ.get(k) for k in ENDPOINTS)


_current: "list[Telemetry]" = []


def from_env(environ: Mapping[str, str] = os.environ) -> "Telemetry | None":
    """The process's telemetry as the environment asks for it (made once), or None (nothing imported)."""
    if not wanted(environ):
        return None
    if _current:
        return _current[0]
    try:
        _current.append(Telemetry(environ))
        return _current[0]
    except ImportError as exc:
        sys.stderr.write(
            f"kairox: OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry SDK is missing ({exc.name}); "
            "install it with: pip install 'kairox[otel]'\n"
        )
        return None


class Telemetry:
    """The providers of one process and the instruments Kairox records into. Also an event sink (sessions)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        from opentelemetry.sdk.resources import Resource

        self.resource = Resource.create({} if environ.get("OTEL_SERVICE_NAME") else {"service.name": "kairox"})
        self.providers: list[Any] = []
        self.tracer: Any = None
        self.logger: Any = None
        on = {
            s: environ.get(f"OTEL_{s.upper()}_EXPORTER", "otlp").lower() != "none"
            for s in ("traces", "metrics", "logs")
        }
        if on["traces"]:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            traces = TracerProvider(resource=self.resource)
            traces.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
            self.providers.append(traces)
            self.tracer = traces.get_tracer("kairox")
        if on["metrics"]:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            metrics = MeterProvider(
                resource=self.resource, metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())]
            )
            self.providers.append(metrics)
            meter = metrics.get_meter("kairox")
            self.calls = meter.create_counter(
                "kairox.tool.calls", description="Tool calls, by tool, server, decision, outcome"
            )
            self.denials = meter.create_counter("kairox.tool.denials", description="Tool calls refused by the gate")
            self.asks = meter.create_counter("kairox.tool.asks", description="Tool calls that asked for approval")
            self.duration = meter.create_histogram("kairox.tool.duration", unit="ms", description="A call's own time")
            self.restarts = meter.create_counter("kairox.upstream.restarts", description="Upstream server restarts")
            self.refusals = meter.create_counter("kairox.gateway.refusals", description="Requests refused with 401")
            self.tokens = meter.create_counter("kairox.model.tokens", description="Model tokens, by direction")
        if on["logs"]:
            from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
            from opentelemetry.sdk._logs import LoggerProvider
            from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

            logs = LoggerProvider(resource=self.resource)
            logs.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
            self.providers.append(logs)
            self.logger = logs.get_logger("kairox")
        self.metered = on["metrics"]
        self._model: dict[str, tuple[Any, int]] = {}

    def call(self, record: Any, *, server: str | None) -> None:
        """One tool call, from its audit record: a span with the approval wait and the call as children."""
        end = time.time_ns()
        wait_ns, own_ns = int(record.approval_wait_ms * 1e6), int(record.duration_ms * 1e6)
        start = end - wait_ns - own_ns
        attributes = {
            "kairox.tool": record.tool,
            "kairox.server": server or "",
            "kairox.decision": record.decision,
            "kairox.rule": record.rule or "",
            "kairox.outcome": record.outcome,
            "kairox.user": record.user or "",
            "kairox.client": record.client,
            "kairox.replica": record.replica or "",
        }
        if self.tracer is not None:
            from opentelemetry.trace import Status, StatusCode, set_span_in_context

            span = self.tracer.start_span(f"tool {record.tool}", start_time=start, attributes=attributes)
            if record.outcome != "ok":
                span.set_status(Status(StatusCode.ERROR, record.outcome))
            parent = set_span_in_context(span)
            if wait_ns:
                self.tracer.start_span("approval wait", context=parent, start_time=start).end(end_time=start + wait_ns)
            if record.outcome != "refused":
                child = self.tracer.start_span(
                    f"call {server or record.tool}", context=parent, start_time=start + wait_ns
                )
                child.end(end_time=min(end, start + wait_ns + own_ns))
            span.end(end_time=end)
        if self.metered:
            labels = {k: attributes[f"kairox.{k}"] for k in ("tool", "server", "decision", "outcome")}
            self.calls.add(1, labels)
            self.duration.record(record.duration_ms, {"tool": record.tool, "server": server or ""})
            if record.outcome == "refused":
                self.denials.add(1, {"tool": record.tool, "server": server or ""})
            if record.decision not in ("allow", "deny"):
                self.asks.add(1, {"tool": record.tool, "server": server or ""})
        if self.logger is not None:
            self.logger.emit(
                body=f"{record.user or '-'} {record.tool}: {record.decision}, {record.outcome}",
                attributes=attributes,
                severity_text="INFO",
                event_name="kairox.tool.call",
            )

    def refused(self) -> None:
        if self.metered:
            self.refusals.add(1)

    def emit(self, event: Event) -> None:
        """Sessions: model requests as spans with token counts, tool calls as spans; upstream restarts counted."""
        name = type(event).__name__
        if name == "McpServerStarting" and getattr(event, "attempt", 0) > 0 and self.metered:
            self.restarts.add(1, {"server": getattr(event, "server", "")})
        elif name == "ModelRequestStarted" and self.tracer is not None:
            attributes = {"kairox.turn": getattr(event, "turn", 0), "kairox.step": getattr(event, "step", 0)}
            self._model["open"] = (self.tracer.start_span("model request", attributes=attributes), time.time_ns())
        elif name in ("UsageReported", "ModelFailed") and "open" in self._model:
            span, _ = self._model.pop("open")
            if name == "UsageReported":
                tokens = {"input": getattr(event, "input_tokens", 0), "output": getattr(event, "output_tokens", 0)}
                span.set_attributes({f"gen_ai.usage.{k}_tokens": v for k, v in tokens.items()})
                if self.metered:
                    for direction, count in tokens.items():
                        self.tokens.add(count, {"direction": direction})
            span.end()
        elif name == "ToolCallFinished" and not getattr(event, "call_id", "").startswith("gw-"):
            e: Any = event  # a session's call, read as the gateway's audit record reads
            fields = {"decision": "allow", "rule": None, "user": None, "replica": None, "client": "session"}
            times = {"duration_ms": e.duration_ms, "approval_wait_ms": e.approval_wait_ms}
            self.call(
                SimpleNamespace(tool=e.tool, outcome="error" if e.is_error else "ok", **times, **fields), server=None
            )

    def shutdown(self) -> None:
        for provider in self.providers:
            provider.shutdown()
        self.providers.clear()
        if self in _current:
            _current.remove(self)
