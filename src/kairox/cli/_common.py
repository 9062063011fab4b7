"""What every command shares: global options, exit codes, output on stdout, diagnostics on stderr."""

import atexit
import enum
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

OTEL_ENDPOINTS = tuple(f"OTEL_EXPORTER_OTLP_{s}ENDPOINT" for s in ("", "TRACES_", "METRICS_", "LOGS_"))
"""Any of these set turns OpenTelemetry on (``kairox.gateway._telemetry``); none set, it is not even imported."""

if TYPE_CHECKING:
    from collections.abc import Iterable

    from kairox.config import ResolvedConfig
    from kairox.errors import Diagnostic
    from kairox.events import EventSink
    from kairox.runtime import RuntimeOptions

JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]
YesOption = Annotated[
    bool,
    typer.Option(
        "--yes",
        "-y",
        help="Approve once what the policy asks about (not writes to protected paths; deny rules still deny).",
    ),
]
ModelOption = Annotated[
    str | None, typer.Option("--model", "-m", help="Model name (default: `model` of the configuration).")
]
ProviderOption = Annotated[
    str | None,
    typer.Option(
        "--model-provider", help="Which [model_providers.NAME] serves it (openai, anthropic, ollama built in)."
    ),
]
ResumeOption = Annotated[
    str | None, typer.Option("--resume", help="Continue the session with this id (`kairox sessions list`).")
]


class ExitCode(enum.IntEnum):
    """Exit codes of every ``kairox`` command."""

    OK = 0
    """Success."""
    FAILURE = 1
    """The command ran and found a problem (a failed server, a denied call, a broken extension)."""
    USAGE = 2
    """Bad command-line usage (unknown option, bad JSON argument)."""
    CONFIG = 3
    """The configuration is invalid; the report names file, line and key."""
    DENIED = 4
    """A tool call, or a write into a file of an untrusted workspace, was denied by the policy or the user (for
    ``kairox run``: a hook blocked the prompt)."""
    TOOL_ERROR = 5
    """A tool call ran and returned an error."""
    NOT_FOUND = 6
    """The named tool, server, skill, plugin or session does not exist."""
    LIMIT = 7
    """A run stopped at a limit of ``[agent]`` (max_turns, max_tool_calls_per_turn, context_budget_tokens)."""
    CANCELLED = 130
    """The run was interrupted (Ctrl-C); the transcript ends consistently."""


@dataclass
class CliState:
    workspace: Path | None = None
    profile: str | None = None
    overrides: list[str] = field(default_factory=list)
    trace: Path | None = None
    _sink: "EventSink | None" = None

    def resolve(self, *, strict: bool = True) -> "ResolvedConfig":
        """Resolve configuration; with ``strict``, a broken user file ends the command with exit code 3."""
        from kairox.config import resolve_config
        from kairox.errors import KairoxError

        try:
            resolved = resolve_config(
                self.workspace, cli_overrides=self.overrides, profile=self.profile, events=self.events()
            )
        except KairoxError as exc:  # a broken trust store, an unreadable file
            fail(str(exc), ExitCode.CONFIG)
        if strict and resolved.problems:
            for problem in resolved.problems:
                err(f"error: {problem}")
            fail(
                "configuration is invalid; fix the files above (`kairox config validate` lists every problem)",
                ExitCode.CONFIG,
            )
        return resolved

    def runtime_options(self, **extra: Any) -> "RuntimeOptions":
        """The runtime's options for this command's workspace, profile and ``-c`` overrides (and ``extra``)."""
        from kairox.runtime import RuntimeOptions

        return RuntimeOptions(workspace=self.workspace, profile=self.profile, overrides=tuple(self.overrides), **extra)

    def events(self) -> "EventSink":
        """The event sink of this command: the ``--trace`` file when given, else nothing."""
        if self._sink is None:
            from kairox.events import JsonLinesSink, NullSink

            self._sink = JsonLinesSink(self.trace) if self.trace else NullSink()
            if any(os.environ.get(k) for k in OTEL_ENDPOINTS):  # OpenTelemetry only when asked for: see _telemetry
                from kairox.events import FanoutSink
                from kairox.gateway._telemetry import from_env

                telemetry = from_env()
                if telemetry is not None:
                    atexit.register(telemetry.shutdown)  # the batches still queued go out as the command ends
                    self._sink = FanoutSink([self._sink, telemetry])
        return self._sink


def state(ctx: typer.Context) -> CliState:
    obj = ctx.find_root().obj
    if not isinstance(obj, CliState):
        obj = CliState()
        ctx.find_root().obj = obj
    return obj


def out(text: str) -> None:
    """Data for the user or a pipe: stdout."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def out_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def err(text: str) -> None:
    """Diagnostics and progress: stderr."""
    sys.stderr.write(text if text.endswith("\n") else text + "\n")


def report_diagnostics(diagnostics: "Iterable[Diagnostic]", *, verbose: bool = False) -> None:
    """Errors and warnings on stderr (info too with ``verbose``)."""
    from kairox.errors import Severity

    for diagnostic in diagnostics:
        if verbose or diagnostic.severity is not Severity.INFO:
            err(str(diagnostic))


_exit_at_once = False


def exit_at_once() -> None:
    """Said by a command whose work is done: every server stopped, every file closed, its output written. When it
    ends, the process exits without the interpreter's teardown, which frees every object of every loaded module one
    by one (0.1-0.3 s after a session, longer than the user's whole wait for the answer to end); see
    ``kairox.cli.main``. A command run in-process (a test's ``CliRunner``) is not affected."""
    global _exit_at_once
    _exit_at_once = True


def exits_at_once() -> bool:
    return _exit_at_once


_errors_as_json = False


def errors_as_json(enabled: bool) -> None:
    """For a command run with ``--json``: from here on a failure is data on stdout too,
    ``{"error": MESSAGE, "exit_code": N}``, so a pipe that expects JSON gets JSON."""
    global _errors_as_json
    _errors_as_json = enabled


def fail(message: str, code: ExitCode = ExitCode.FAILURE) -> NoReturn:
    err(f"kairox: {message}")
    if _errors_as_json:
        out_json({"error": message, "exit_code": int(code)})
    raise typer.Exit(int(code))


def parse_json_arg(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"arguments are not valid JSON: {exc}", ExitCode.USAGE)
    if not isinstance(value, dict):
        fail("arguments must be a JSON object", ExitCode.USAGE)
    return value
