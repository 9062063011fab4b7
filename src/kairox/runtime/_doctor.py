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
    "agent": "fix the agent file (`kairox agents show NAME`); the other agents still load",
}


def _fix(diagnostic: "Diagnostic", context: "ExtensionContext") -> str:
    if diagnostic.kind == "mcp_server" and diagnostic.name in context.resolved.config.mcp_servers:
        command = context.resolved.config.mcp_servers[diagnostic.name].command
        if command and shutil.which(command) is None and "/" not in command and "$" not in command:
            return f"install {command!r} (not found on PATH) or fix mcp_servers.{diagnostic.name}.command"
    if diagnostic.kind == "lsp_server" and diagnostic.name in context.resolved.config.lsp_servers:
        command = context.resolved.config.lsp_servers[diagnostic.name].command
        if command and shutil.which(command) is None:
            return lsp_install_fix(diagnostic.name, command, _plugin_of(context, "lsp", diagnostic.name))
    if diagnostic.hint:
        return diagnostic.hint
    if diagnostic.source and diagnostic.line:
        return f"fix {diagnostic.source}:{diagnostic.line}"
    if diagnostic.severity is Severity.INFO:  # a task-only tool left out: nothing is broken
        return "nothing to fix: this is for your information"
    return _FIXES.get(diagnostic.kind, "see the reason above")


def _program(name: str, *, required: bool, why: str, version_flag: str = "--version") -> dict[str, Any]:
    """Whether ``name`` is on PATH and its version. Only absolute PATH entries are searched (an empty entry
    would find a repository's own binary); callers pass only commands of trusted layers."""
    import subprocess

    from kairox._util._search_path import which_absolute

    path = which_absolute(name)
    version = None
    if path is not None:
        try:
            proc = subprocess.run([path, version_flag], capture_output=True, text=True, timeout=10)
            version = version_line(proc.stdout) or version_line(proc.stderr)
        except (OSError, subprocess.TimeoutExpired):
            version = None
    return {
        "check": name,
        "ok": path is not None,
        "required": required,
        "why": why,
        "path": path,
        "version": version,
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
        _program(
            "bwrap", required=sandboxed, why=f"OS sandbox for shell.exec and hooks under {config.policy.sandbox_policy}"
        ),
        _program("rg", required=False, why="fast search.ripgrep (a slower Python search is used without it)"),
        _program("git", required=False, why="installing skills and plugins from git"),
    ]
    if checks[0]["ok"] and sandboxed:
        from kairox.errors import SandboxUnavailableError
        from kairox.sandbox import check_sandbox

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
            plugin = _plugin_of(context, "lsp", name)
            # a plugin's language server is optional: without its program only that server is missing
            check = _program(
                server.command,
                required=plugin is None,
                why=f"language server {name!r} for {', '.join(server.file_patterns) or 'its files'}",
            )
            if plugin is not None:
                check["why"] += f" (from plugin {plugin})"
            check["fix"] = None if check["ok"] else lsp_install_fix(name, server.command, plugin)
            checks.append(check)
    for name, adapter in sorted(config.dap_servers.items()):
        if ("dap", name) in startable:
            check = _program(adapter.command, required=True, why=f"debug adapter {name!r}")
            check["fix"] = None if check["ok"] else f"install {adapter.command!r} or fix dap_servers.{name}.command"
            checks.append(check)
    return checks


_INSTALLS = {
    "basedpyright-langserver": "pip install basedpyright",
    "basedpyright": "pip install basedpyright",
    "pyright-langserver": "pip install pyright (or npm install -g pyright)",
    "pyright": "pip install pyright (or npm install -g pyright)",
    "pylsp": "pip install python-lsp-server",
    "jedi-language-server": "pip install jedi-language-server",
    "ruff": "pip install ruff",
    "typescript-language-server": "npm install -g typescript-language-server typescript",
    "vscode-json-language-server": "npm install -g vscode-langservers-extracted",
    "vscode-css-language-server": "npm install -g vscode-langservers-extracted",
    "vscode-html-language-server": "npm install -g vscode-langservers-extracted",
    "bash-language-server": "npm install -g bash-language-server",
    "yaml-language-server": "npm install -g yaml-language-server",
    "gopls": "go install golang.org/x/tools/gopls@latest",
    "rust-analyzer": "rustup component add rust-analyzer",
    "clangd": "apt-get install clangd",
    "lua-language-server": "apt-get install lua-language-server",
}
"""How the common language servers are installed, by the program an entry runs."""


def lsp_install_fix(name: str, command: str, plugin: str | None) -> str:
    """The fix for a language server whose program is not found: how to install it, and for a plugin's server,
    that disabling the plugin is the other way."""
    program = command.rsplit("/", 1)[-1]
    known = _INSTALLS.get(program)
    install = f"install it: {known}" if known else f"install {program!r} so that it is on PATH"
    if plugin is not None:
        return f"{install}; or disable the plugin: kairox plugins disable {plugin}"
    return f"{install}; or fix lsp_servers.{name}.command"


def _plugin_of(context: "ExtensionContext", kind: str, name: str) -> str | None:
    """The plugin that brings server ``name``, when a plugin does."""
    from kairox.runtime._servers import ServerBoard

    board = context.servers or ServerBoard(context.resolved)
    view = board.get(kind, name)
    layer = view.origin.layer if view is not None and view.origin is not None else ""
    return layer.removeprefix("plugin:") if layer.startswith("plugin:") else None


def _claims_overlap(first: Any, second: Any) -> str | None:
    """A file pattern (or language) two language servers both claim, or None."""
    from pathlib import PurePosixPath

    from kairox.lsp import matches_pattern

    for mine in first.file_patterns:
        for theirs in second.file_patterns:
            # a file name each pattern stands for, tried against the other one
            if (
                mine == theirs
                or matches_pattern(PurePosixPath(theirs.replace("**/", "").replace("*", "x")), mine)
                or matches_pattern(PurePosixPath(mine.replace("**/", "").replace("*", "x")), theirs)
            ):
                return mine if mine == theirs else f"{mine} / {theirs}"
    if not first.file_patterns and not second.file_patterns:
        shared = sorted(set(first.languages) & set(second.languages))
        return f"{shared[0]} files" if shared else None
    return None


def overlapping_servers(context: "ExtensionContext") -> list["Diagnostic"]:
    """A warning for every two language servers that may start and claim the same files: only the first one
    configured is ever asked about them."""
    from kairox.errors import Diagnostic

    startable = _startable(context)
    servers = [(n, s) for n, s in context.resolved.config.lsp_servers.items() if ("lsp", n) in startable]
    found = []
    for index, (name, server) in enumerate(servers):
        for other, later in servers[index + 1 :]:
            claim = _claims_overlap(server, later)
            if claim is None:
                continue
            ways = []
            for each in (name, other):
                plugin = _plugin_of(context, "lsp", each)
                ways.append(
                    f"kairox plugins disable {plugin}" if plugin else f"enabled = false in [lsp_servers.{each}]"
                )
            found.append(
                Diagnostic(
                    kind="lsp_server",
                    name=f"{name}, {other}",
                    severity=Severity.WARNING,
                    reason=(
                        f"language servers {name!r} and {other!r} both claim {claim}: "
                        f"{name!r} answers for those files, {other!r} is never asked"
                    ),
                    hint=f"narrow the file_patterns of one, or turn one off ({' / '.join(ways)})",
                )
            )
    return found


def _startable(context: "ExtensionContext") -> set[tuple[str, str]]:
    from kairox._rpc._status import ServerStatus
    from kairox.runtime._servers import ServerBoard

    board = context.servers or ServerBoard(context.resolved)
    return {
        (v.kind, v.name)
        for v in board.views()
        if not v.status.waits_for_trust and v.status is not ServerStatus.DISABLED
    }


def _sandbox_report(context: "ExtensionContext") -> dict[str, Any]:
    """What the sandbox lets through on purpose: the sockets ``policy.allow_unix_sockets`` names, and which of them
    are sockets now (only those are bound into the sandbox)."""
    from kairox.config import SandboxPolicy
    from kairox.sandbox import EgressRefused, allowed_sockets

    sandbox = context.registry.settings.sandbox
    named = () if sandbox.mode is SandboxPolicy.DANGER_FULL_ACCESS else sandbox.allowed_sockets
    live = set(allowed_sockets(named))
    report: dict[str, Any] = {"allow_unix_sockets": [{"path": str(path), "socket": path in live} for path in named]}
    if (domains := sandbox.allowed_domains) is not None:  # the network by name: its list, this session's refusals
        report.update(allowed_domains=list(domains), egress_refused=len(context.events.of_type(EgressRefused)))
    return report


def _required(diagnostic: "Diagnostic", servers: dict[str, dict[str, Any]]) -> bool:
    """Whether a failure breaks something required: the configuration itself, or an MCP server marked ``required``."""
    if diagnostic.kind == "config":
        return True
    server = servers.get(diagnostic.name) if diagnostic.kind == "mcp_server" else None
    return bool(server and server["required"] and server["status"] == "failed")


def doctor_report(context: "ExtensionContext") -> dict[str, Any]:
    """The report of a running context. ``ok`` is false when something required is broken: the configuration, an
    MCP server with ``required = true``, or a required program."""
    from kairox.runtime._context import _server_statuses

    # the servers as they are now, not as they were when the context opened
    servers = {} if context.servers is None else _server_statuses(context.servers, context.mcp, context.registry)
    failures = [
        {**d.to_json(), "fix": _fix(d, context), "required": _required(d, servers)}
        for d in context.diagnostics
        if d.severity is Severity.ERROR
    ]
    views = context.servers.views() if context.servers is not None else []
    held = {f"{v.kind} {v.name}": v.reason for v in views if v.status.waits_for_trust}
    notes = [
        {**d.to_json(), "fix": _fix(d, context)}
        for d in [*context.diagnostics, *overlapping_servers(context)]
        if d.severity is not Severity.ERROR and f"{d.kind.removesuffix('_server')} {d.name}" not in held
    ]
    report: dict[str, Any] = {
        "workspace": str(context.resolved.workspace),
        "trusted": context.resolved.trusted,
        "failures": failures,
        "warnings": notes,
        "environment": _environment(context),
        "sandbox": _sandbox_report(context),
        "mcp_servers": servers,
        "lsp_servers": {name: server.confinement_state for name, server in context.lsp.servers.items()},
        "dap_servers": context.dap.confinements(context.registry.settings.sandbox),
        "tools": len(context.tools()),
        "held_back": held,
    }
    broken = any(f["required"] for f in report["failures"]) or any(
        c["required"] and not c["ok"] for c in report["environment"]
    )
    report["ok"] = not broken
    return report


def doctor_lines(report: dict[str, Any]) -> list[str]:
    """The report as the lines a person reads (the CLI prints them, the TUI shows them in its panel)."""
    from kairox.sandbox import describe_confinement

    lines: list[str] = []
    out = lines.append
    trusted = "trusted" if report["trusted"] else "untrusted: `kairox trust` lets its servers, plugins and hooks run"
    out(f"Workspace {report['workspace']} ({trusted})")
    out("")
    out("Environment:")
    for check in report["environment"]:
        mark = "ok " if check["ok"] else ("FAIL" if check["required"] else "warn")
        detail = check["version"] or check.get("detail") or ""
        out(f"  [{mark}] {check['check']}: {check['why']}" + (f" ({detail})" if detail else ""))
        if not check["ok"]:
            out(f"         fix: {check['fix']}")
    sandbox = report["sandbox"]
    if "allowed_domains" in sandbox:
        out("")
        names, refused = ", ".join(sandbox["allowed_domains"]) or "none", sandbox["egress_refused"]
        out(f"Network by name (sandbox.allowed_domains): {names}; refused this session: {refused}")
    if sandbox["allow_unix_sockets"]:
        out("")
        out("Host Unix sockets sandboxed commands may reach (policy.allow_unix_sockets):")
        for item in sandbox["allow_unix_sockets"]:
            out(
                f"  {item['path']}: "
                f"{'let through' if item['socket'] else 'not a socket now, so nothing is let through'}"
            )
    out("")
    out("MCP servers:")
    if not report["mcp_servers"]:
        out("  (none configured)")
    for name, server in report["mcp_servers"].items():
        tail = (
            f", {server['tools']} tool(s)"
            if server["status"] == "ready"
            else (f": {server['error']}" if server["error"] else "")
        )
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
    held = {name: reason for name, reason in report.get("held_back", {}).items() if not name.startswith("mcp ")}
    if held:  # the MCP servers say it in their own lines above
        out("")
        out("Language servers and debug adapters held back:")
        lines += [f"  {name}: {reason}" for name, reason in held.items()]
    out("")
    groups: dict[str, list[dict[str, Any]]] = {}
    for failure in report["failures"]:
        groups.setdefault(failure["kind"], []).append(failure)
    if not groups:
        out(f"No extension failed to load; the model sees {report['tools']} tool(s).")
    for kind, items in sorted(groups.items()):
        out(f"{kind} ({len(items)} failed):")
        for item in items:
            where = (
                f"{item['path']}:{item['line']}" if item["path"] and item["line"] else (item["path"] or item["name"])
            )
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
                if item["fix"] and (severity == "info" or item["kind"] == "lsp_server"):
                    out(f"    fix: {item['fix']}")
    out("")
    if not report["ok"]:
        out("Doctor: something required is broken (see above).")
    elif report["failures"]:
        out(f"Doctor: everything required works; {len(report['failures'])} extension(s) failed to load (see above).")
    else:
        out("Doctor: everything required works.")
    return lines
