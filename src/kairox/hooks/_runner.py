"""Running one command hook (H2): JSON request on stdin, answer by exit code or JSON on stdout.

The command runs through ``/bin/sh -c`` in the policy's sandbox, in its own process group, with an
allow-listed environment, a timeout and capped output. Whatever goes wrong becomes a diagnostic (H3).
"""

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

from kairox._rpc._process import ChildProcess, child_environment
from kairox._util._decode import DecodeProblem, decode_json
from kairox._util._json import JsonObject
from kairox.errors import Diagnostic, ExtensionLoadFailure, SandboxUnavailableError, Severity
from kairox.hooks._model import TOOL_EVENTS, HookEvent, HookResult, HookSpec
from kairox.sandbox import SETUP_ATTEMPTS, SandboxSettings, check_sandbox, sandboxed_argv, vanished_before_start
from kairox.tools import HookDecision

OUTPUT_CAP_BYTES = 256_000
"""What a hook may print on stdout before the rest is cut (and reported)."""

_DECISIONS = {
    "allow": HookDecision.ALLOW,
    "approve": HookDecision.ALLOW,
    "ask": HookDecision.ASK,
    "deny": HookDecision.DENY,
    "block": HookDecision.DENY,
}
_CONTEXT_EVENTS = frozenset(
    {HookEvent.SESSION_START, HookEvent.USER_PROMPT_SUBMIT, HookEvent.PRE_TURN, HookEvent.PRE_COMPACT}
)
"""Events whose plain (non-JSON) stdout is context for the model (for ``pre_compact``: instructions for the summary)."""


async def _read_capped(stream: asyncio.StreamReader, cap: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size <= cap:
        chunk = await stream.read(65_536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _diagnostic(
    hook: HookSpec, reason: str, *, severity: Severity = Severity.ERROR, hint: str | None = None
) -> Diagnostic:
    cls = ExtensionLoadFailure if severity is Severity.ERROR else Diagnostic
    return cls(
        kind="hook",
        name=hook.name,
        reason=reason,
        severity=severity,
        source=hook.source or (str(hook.plugin_root) if hook.plugin_root else None),
        hint=hint,
    )


def _failed(hook: HookSpec, what: str, *, hint: str) -> HookResult:
    """A hook that did not give an answer. A guard before a tool call fails closed: the call is blocked, unless
    its entry says ``fail_open = true`` (a slow guard on a loaded machine must not wave calls through)."""
    if hook.event is HookEvent.PRE_TOOL_USE and not hook.fail_open:
        reason = f"the pre_tool_use hook {hook.name} {what}, so the call is blocked"
        return HookResult(
            hook=hook,
            exit_code=None,
            decision=HookDecision.DENY,
            reason=reason,
            diagnostic=_diagnostic(
                hook, f"{what}; the call was blocked (set fail_open = true to let calls go on)", hint=hint
            ),
        )
    return HookResult(
        hook=hook,
        exit_code=None,
        diagnostic=_diagnostic(hook, f"{what}; the call goes on as if it had not run", hint=hint),
    )


def parse_answer(hook: HookSpec, exit_code: int, stdout: str, stderr: str) -> HookResult:
    """Turn what a finished hook printed and returned into a :class:`HookResult`."""
    tool_event = hook.event in TOOL_EVENTS
    if exit_code == 2:
        reason = stderr.strip() or f"hook {hook.name} exited with code 2"
        if tool_event:
            return HookResult(hook=hook, exit_code=2, decision=HookDecision.DENY, reason=reason)
        return HookResult(hook=hook, exit_code=2, stop=True, reason=reason)
    if exit_code != 0:
        detail = (stderr.strip() or stdout.strip())[-500:]
        return HookResult(
            hook=hook,
            exit_code=exit_code,
            diagnostic=_diagnostic(
                hook,
                f"exited with code {exit_code}" + (f": {detail}" if detail else ""),
                hint="exit 0 to go on, 2 to block",
            ),
        )
    text = stdout.strip()
    if not text:
        return HookResult(hook=hook, exit_code=0)
    if not text.startswith("{"):
        context = text if hook.event in _CONTEXT_EVENTS else None
        return HookResult(hook=hook, exit_code=0, additional_context=context)
    try:
        answer = decode_json(text)
    except DecodeProblem as exc:
        return HookResult(
            hook=hook,
            exit_code=0,
            diagnostic=_diagnostic(hook, f"printed malformed JSON: {exc}", hint="print one JSON object, or plain text"),
        )
    if not isinstance(answer, dict):
        return HookResult(hook=hook, exit_code=0, diagnostic=_diagnostic(hook, "printed JSON that is not an object"))
    return _from_json(hook, answer)


def _from_json(hook: HookSpec, answer: JsonObject) -> HookResult:
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    raw = specific.get("permissionDecision") or answer.get("permissionDecision") or answer.get("decision")
    decision: HookDecision | None = None
    problem: Diagnostic | None = None
    if isinstance(raw, str) and raw.strip():
        decision = _DECISIONS.get(raw.strip().lower())
        if decision is None:
            problem = _diagnostic(
                hook, f"answered an unknown decision {raw!r}", severity=Severity.WARNING, hint="use allow, ask or deny"
            )
    reason = specific.get("permissionDecisionReason") or answer.get("permissionDecisionReason") or answer.get("reason")
    context = specific.get("additionalContext") or answer.get("additionalContext")
    updated = specific.get("updatedInput") or answer.get("updatedInput")
    stop = answer.get("continue") is False
    if stop:
        reason = answer.get("stopReason") or reason
    if hook.event not in TOOL_EVENTS and decision is HookDecision.DENY:
        stop, decision = True, None
    return HookResult(
        hook=hook,
        exit_code=0,
        decision=decision,
        reason=str(reason) if reason else None,
        additional_context=str(context) if context else None,
        updated_input=updated if isinstance(updated, dict) else None,
        stop=stop,
        diagnostic=problem,
    )


async def _run_once(
    hook: HookSpec, argv: list[str], *, env: Mapping[str, str], workspace: Path, payload: bytes
) -> "tuple[int, bytes, str] | HookResult":
    """Start the hook once: its exit code, what it printed and its stderr, or the result of a hook that could not
    start or did not finish."""
    try:
        async with ChildProcess(argv, env=env, cwd=workspace, stop_timeout=1.0) as child:

            async def exchange() -> bytes:
                # a hook that never reads its stdin must not hang us on a full pipe: this is timed too
                with contextlib.suppress(ConnectionError):
                    child.stdin.write(payload)
                    await child.stdin.drain()
                    child.stdin.close()
                return await _read_capped(child.stdout, OUTPUT_CAP_BYTES)

            try:
                output = await asyncio.wait_for(exchange(), hook.timeout_sec)
                code = await child.wait(hook.timeout_sec)
            except TimeoutError:
                code = None
            if code is None:
                await child.stop(1.0)
                return _failed(
                    hook,
                    f"did not finish within {hook.timeout_sec:g} s and was stopped",
                    hint="raise its timeout or make it faster",
                )
            await child.stop(1.0)
            stderr = child.stderr.text(4_000)
    except OSError as exc:
        return _failed(hook, f"cannot start: {exc}", hint="check the hook's command")
    return code, output, stderr


async def run_hook(
    hook: HookSpec,
    request: JsonObject,
    *,
    workspace: Path,
    sandbox: SandboxSettings,
    host_env: Mapping[str, str],
) -> HookResult:
    """Run ``hook`` once with ``request`` on stdin; never raises for the hook's own faults."""
    extra = {
        "KAIROX_PROJECT_DIR": str(workspace),
        "CLAUDE_PROJECT_DIR": str(workspace),
        "KAIROX_HOOK_EVENT": str(hook.event),
    }
    if hook.plugin_root is not None:
        root = str(hook.plugin_root)
        extra |= {"KAIROX_PLUGIN_ROOT": root, "CLAUDE_PLUGIN_ROOT": root, "PLUGIN_ROOT": root}
    env = child_environment(host_env, extra=extra)
    payload = json.dumps(request, default=str).encode()
    for attempt in range(1, SETUP_ATTEMPTS + 1):
        try:
            bwrap = check_sandbox(sandbox)  # probed once per process
            argv = await asyncio.to_thread(
                sandboxed_argv, ["/bin/sh", "-c", hook.command], sandbox, workspace, cwd=workspace, bwrap=bwrap
            )
        except SandboxUnavailableError as exc:
            return HookResult(
                hook=hook,
                exit_code=None,
                skipped=True,
                diagnostic=_diagnostic(hook, f"not run: {exc.message}", hint=exc.hint),
            )
        ran = await _run_once(hook, argv, env=env, workspace=workspace, payload=payload)
        if isinstance(ran, HookResult):
            return ran
        code, output, stderr = ran
        if attempt == SETUP_ATTEMPTS or not vanished_before_start(argv, code, output, stderr.encode()):
            break
    text = output[:OUTPUT_CAP_BYTES].decode("utf-8", errors="replace")
    result = parse_answer(hook, code, text, stderr)
    if len(output) > OUTPUT_CAP_BYTES and result.diagnostic is None:
        cut = _diagnostic(
            hook, f"printed more than {OUTPUT_CAP_BYTES} bytes; the rest was cut", severity=Severity.WARNING
        )
        return dataclasses.replace(result, diagnostic=cut)
    return result
