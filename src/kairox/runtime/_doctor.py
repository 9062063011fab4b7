"""``kairox doctor``'s one report, shown by every front end (the CLI's ``doctor``, the TUI's ``/doctor``, the GUI's
``/api/doctor``): the programs Kairox relies on, the sandbox check, what failed to load with how to fix each, and
the MCP servers. The front ends print :func:`doctor_lines` or send :meth:`DoctorReport` JSON; they decide nothing."""

import re
import shutil
from typing import TYPE_CHECKING, Any

from kairox.errors import Severity

if TYPE_CHECKING:
    from kairox.errors import Diagnostic
    from kairox.runtime._context import ExtensionContext


_FIXES = {
    "config": "fix the file at that line (`kairox config validate` lists every problem)",
    "plugin": "fix the plugin's manifest, or disable it with `kairox plugins disable NAME`",
    "skill": "give the skill YAML frontmatter with a description (`kairox skills validate PATH`)",
    "mcp_server": "check the command with `kairox mcp status`",
    "lsp_server": "install the language server or fix lsp_servers.NAME.command",
    "hook": "fix or remove the hook (`kairox hooks list`)",
    "tool": "fix the tool's schema, or disable it in tools.disabled",
}


def _fix(diagnostic: "Diagnostic", context: "ExtensionContext") -> str:
    if diagnostic.kind == "mcp_server" and diagnostic.name in context.resolved.config.mcp_servers:
        command = context.resolved.config.mcp_servers[diagnostic.name].command
        if command and shutil.which(command) is None and "/" not in command and "$" not in command:
            return f"install {command!r} (not found on PATH) or fix mcp_servers.{diagnostic.name}.command"
    if diagnostic.hint:
        return diagnostic.hint
    if diagnostic.source and diagnostic.line:
        return f"fix {diagnostic.source}:{diagnostic.line}"
    return _FIXES.get(diagnostic.kind, "see the reason above")


def _program(name: str, *, required: bool, why: str, version_flag: str = "--version") -> dict[str, Any]:
    """Whether ``name`` is on PATH and its version. Only absolute PATH entries are searched (an empty entry
    would find a repository's own binary); callers pass only commands of trusted layers."""
    import subprocess

    from kairox._util import which_absolute

    path = which_absolute(name)
    version = None
    if path is not None:
        try:
            proc = subprocess.run([path, version_flag], capture_output=True, text=True, timeout=10)
            version = version_line(proc.stdout) or version_line(proc.stderr)
        except (OSError, subprocess.TimeoutExpired):
            version = None
    return {
        "check": name, "ok": path is not None, "required": required, "why": why, "path": path, "version": version,
        "fix": None if path else f"install {name} (Debian: apt-get install {_PACKAGES.get(name, name)})",
    }


_PACKAGES = {"bwrap": "bubblewrap", "rg": "ripgrep", "node": "nodejs"}
_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*(?:[-+][0-9A-Za-z.-]+)?(?![\w.])")


def version_line(text: str) -> str | None:
    """The line of a ``--version`` answer that names a version. A node program without a ``--version`` prints
    a stack trace (a source path, the source line, ``at ...`` frames, ``Node.js vX``): that is no version."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if any(line.startswith("at ") or re.match(r"^\w*Error\b", line) for line in lines):
        return None
    for line in lines:
        if len(line) <= 120 and not any(c in line for c in "{};=`") and _VERSION.search(line):
            return line
    return None


def _environment(context: "ExtensionContext") -> list[dict[str, Any]]:
    from kairox.config import SandboxPolicy

    config = context.resolved.config
    sandboxed = config.policy.sandbox_policy is not SandboxPolicy.DANGER_FULL_ACCESS
    checks = [
        _program("bwrap", required=sandboxed, why=f"OS sandbox for shell.exec and hooks under {config.policy.sandbox_policy}"),
        _program("rg", required=False, why="fast search.ripgrep (a slower Python search is used without it)"),
        _program("git", required=False, why="installing skills and plugins from git"),
    ]
    if checks[0]["ok"] and sandboxed:
        from kairox.errors import SandboxUnavailableError
        from kairox.tools import check_sandbox

        try:
            check_sandbox(context.registry.settings.sandbox)
        except SandboxUnavailableError as exc:
            checks[0].update(ok=False, fix=exc.hint or str(exc), detail=exc.message)
    commands = {s.command for s in config.mcp_servers.values() if s.enabled and s.command}
    if commands & {"node", "npx", "npm"}:
        checks.append(_program("node", required=True, why="MCP servers started with node/npx"))
    # only servers that may start: the server view says which ones trust or `enabled` keep from starting
    startable = _startable(context)
    for name, server in sorted(config.lsp_servers.items()):
        if ("lsp", name) in startable:
            check = _program(server.command, required=True, why=f"language server {name!r} for {', '.join(server.file_patterns) or 'its files'}")
            check["fix"] = None if check["ok"] else f"install {server.command!r} or fix lsp_servers.{name}.command"
            checks.append(check)
    for name, adapter in sorted(config.dap_servers.items()):
        if ("dap", name) in startable:
            check = _program(adapter.command, required=True, why=f"debug adapter {name!r}")
            check["fix"] = None if check["ok"] else f"install {adapter.command!r} or fix dap_servers.{name}.command"
            checks.append(check)
    return checks


def _startable(context: "ExtensionContext") -> set[tuple[str, str]]:
    from kairox.runtime._servers import ServerBoard, ServerViewStatus

    board = context.servers or ServerBoard(context.resolved)
    return {(v.kind, v.name) for v in board.views() if not v.status.waits_for_trust and v.status is not ServerViewStatus.DISABLED}


def _sandbox_report(context: "ExtensionContext") -> dict[str, Any]:
    """What the sandbox lets through on purpose: the sockets ``policy.allow_unix_sockets`` names, and which of them
    are sockets now (only those are bound into the sandbox)."""
    from kairox.config import SandboxPolicy
    from kairox.tools import allowed_sockets

    sandbox = context.registry.settings.sandbox
    named = () if sandbox.mode is SandboxPolicy.DANGER_FULL_ACCESS else sandbox.allowed_sockets
    live = set(allowed_sockets(named))
    return {"allow_unix_sockets": [{"path": str(path), "socket": path in live} for path in named]}


def _required(diagnostic: "Diagnostic", context: "ExtensionContext") -> bool:
    """Whether a failure breaks something required: the configuration itself, or an MCP server marked ``required``."""
    if diagnostic.kind == "config":
        return True
    server = context.mcp_servers.get(diagnostic.name) if diagnostic.kind == "mcp_server" else None
    return bool(server and server["required"] and server["status"] == "failed")


def doctor_report(context: "ExtensionContext") -> dict[str, Any]:
    """The report of a running context. ``ok`` is false when something required is broken: the configuration, an
    MCP server with ``required = true``, or a required program."""
    if context.servers is not None:  # the servers as they are now, not as they were when the context opened
        from kairox.runtime._context import _server_statuses

        context.mcp_servers = _server_statuses(context.servers, context.mcp, context.registry)
    failures = [
        {**d.to_json(), "fix": _fix(d, context), "required": _required(d, context)}
        for d in context.diagnostics
        if d.severity is Severity.ERROR
    ]
    notes = [{**d.to_json(), "fix": _fix(d, context)} for d in context.diagnostics if d.severity is not Severity.ERROR]
    report: dict[str, Any] = {
        "workspace": str(context.resolved.workspace),
        "trusted": context.resolved.trusted,
        "failures": failures,
        "warnings": notes,
        "environment": _environment(context),
        "sandbox": _sandbox_report(context),
        "mcp_servers": context.mcp_servers,
        "lsp_servers": {name: server.confinement_state for name, server in context.lsp.servers.items()},
        "dap_servers": context.dap.confinements(context.registry.settings.sandbox),
        "tools": len(context.tools()),
    }
    broken = any(f["required"] for f in report["failures"]) or any(c["required"] and not c["ok"] for c in report["environment"])
    report["ok"] = not broken
    return report


def doctor_lines(report: dict[str, Any]) -> list[str]:
    """The report as the lines a person reads (the CLI prints them, the TUI shows them in its panel)."""
    from kairox.tools import describe_confinement

    lines: list[str] = []
    out = lines.append
    out(f"Workspace {report['workspace']} ({'trusted' if report['trusted'] else 'untrusted: `kairox trust` lets its servers, plugins and hooks run'})")
    out("")
    out("Environment:")
    for check in report["environment"]:
        mark = "ok " if check["ok"] else ("FAIL" if check["required"] else "warn")
        detail = check["version"] or check.get("detail") or ""
        out(f"  [{mark}] {check['check']}: {check['why']}" + (f" ({detail})" if detail else ""))
        if not check["ok"]:
            out(f"         fix: {check['fix']}")
    sandbox = report["sandbox"]
    if sandbox["allow_unix_sockets"]:
        out("")
        out("Host Unix sockets sandboxed commands may reach (policy.allow_unix_sockets):")
        for item in sandbox["allow_unix_sockets"]:
            out(f"  {item['path']}: {'let through' if item['socket'] else 'not a socket now, so nothing is let through'}")
    out("")
    out("MCP servers:")
    if not report["mcp_servers"]:
        out("  (none configured)")
    for name, server in report["mcp_servers"].items():
        tail = f", {server['tools']} tool(s)" if server["status"] == "ready" else (f": {server['error']}" if server["error"] else "")
        if server["status"] == "ready" and server["resource_tools"]:
            tail += f" ({server['resource_tools']} of them the resource tools Kairox adds)"
        out(f"  {name}: {server['status']}{' (required)' if server['required'] else ''}{tail}")
        if server.get("confinement") is not None:
            out(f"    {describe_confinement(server['confinement'])}")
    for title, key in (("Language servers", "lsp_servers"), ("Debug adapters", "dap_servers")):
        if report.get(key):
            out("")
            out(f"{title}:")
            for name, confinement in report[key].items():
                out(f"  {name}: {describe_confinement(confinement)}")
    out("")
    groups: dict[str, list[dict[str, Any]]] = {}
    for failure in report["failures"]:
        groups.setdefault(failure["kind"], []).append(failure)
    if not groups:
        out(f"No extension failed to load; the model sees {report['tools']} tool(s).")
    for kind, items in sorted(groups.items()):
        out(f"{kind} ({len(items)} failed):")
        for item in items:
            where = f"{item['path']}:{item['line']}" if item["path"] and item["line"] else (item["path"] or item["name"])
            out(f"  {item['name']}{' (required)' if item['required'] else ''}: {item['reason']}")
            out(f"    at {where}")
            out(f"    fix: {item['fix']}")
    for title, severity in (("Warnings", "warning"), ("Notes", "info")):
        items = [w for w in report["warnings"] if w["severity"] == severity]
        if items:
            out("")
            out(f"{title} ({len(items)}):")
            for item in items:
                out(f"  {item['kind']} {item['name']}: {item['reason']}")
                if severity == "info" and item["fix"]:
                    out(f"    fix: {item['fix']}")
    out("")
    if not report["ok"]:
        out("Doctor: something required is broken (see above).")
    elif report["failures"]:
        out(f"Doctor: everything required works; {len(report['failures'])} extension(s) failed to load (see above).")
    else:
        out("Doctor: everything required works.")
    return lines
