"""The policy's words: why a tool counts as what it does, what an allow rule would let through, the rule to offer
for a call like this one, and what is said of a command's sandbox."""

from collections.abc import Mapping
from typing import Any

from kairox.config import SandboxPolicy
from kairox.policy._command_glob import describe_command_glob
from kairox.policy._facts import CallFacts
from kairox.policy._rules import Rule, parse_rule
from kairox.policy._settings import PolicySettings
from kairox.policy._values import describe_values
from kairox.tools import ToolSpec


def mcp_why(spec: ToolSpec) -> str:
    """What decided that an MCP tool counts as a write, in words."""
    server = spec.origin or "?"
    if spec.annotations.read_only_hint is True and not spec.annotations_trusted:
        return (
            f"it is annotated read-only, but annotations of server {server!r} are not trusted "
            f"(set mcp_servers.{server}.trust_annotations = true in your own config to trust them)"
        )
    return "it is not annotated read-only, so it counts as a write with effects outside Kairox's sandbox"


def suggested_rule(spec: ToolSpec, facts: CallFacts) -> str | None:
    """A rule covering calls like this one, or None when no rule should (a command the parser cannot fully see)."""
    if facts.command is not None:
        command = facts.command
        if not command.pieces or command.opaque or command.hidden is not None:
            return None
        words = command.pieces[0].split(" ")
        return f"{spec.name}({' '.join(words[:2])}*)" if len(words) > 1 else f"{spec.name}({words[0]}*)"
    if len(facts.paths) == 1 and not facts.named:
        return f"{spec.name}({literal_glob(str(facts.paths[0]))})"
    host = facts.url_host(spec)
    return spec.name if host is None else f"{spec.name}(domain:{host})"


def exact_rule(spec: ToolSpec, arguments: Mapping[str, Any], facts: CallFacts) -> str | None:
    """An allow rule that covers this call and no other, or None when no rule can say it that narrowly."""
    command = facts.command
    if command is not None:
        if len(command.pieces) != 1 or command.opaque or command.hidden is not None:
            return None
        # the rule matches the line as split (quotes gone, git's global options dropped): it says only this line
        # when that is the line as written, else it would also cover `rm *` for `rm '*'`
        written = arguments.get(spec.permission.command_arg or "")
        if not isinstance(written, str) or " ".join(written.split()) != command.pieces[0]:
            return None
        return f"{spec.name}({literal_glob(command.pieces[0])})"
    if spec.permission.path_args and len(facts.paths) == 1 and len(arguments) == 1:
        return f"{spec.name}({literal_glob(str(facts.paths[0]))})"
    if not arguments and not spec.input_schema.get("properties"):
        return spec.name
    return None


def describe_rule(spec: ToolSpec, pattern: str) -> str | None:
    """What an allow rule would let through, in words; None for a blank cheque on a command tool."""
    try:
        parsed = parse_rule(Rule(action="allow", pattern=pattern))
    except ValueError:
        return None
    if parsed.specifier is None:
        if spec.permission.command_arg is not None:
            return None
        return f"every call of {parsed.tool}, with any arguments"
    if parsed.arguments and (spec.permission.command_arg is not None or spec.permission.path_args):
        return None  # a command or path tool is vouched for by its command or paths, never by named arguments
    if spec.permission.command_arg is not None:
        return (
            "every command line whose commands are all "
            f"{describe_command_glob(parsed.specifier)}, run as written: no redirection "
            "or option that writes a file, no sudo, ssh or container exec, no variables that change what runs"
        )
    if spec.permission.path_args:
        return f"every call of {parsed.tool} on paths matching {parsed.specifier!r}"
    if parsed.specifier.startswith("domain:"):
        return f"every call of {parsed.tool} to a host matching {parsed.specifier[7:].strip()!r}"
    return describe_values(parsed.tool, parsed.specifier, parsed.arguments)


def let_through(settings: PolicySettings) -> str:
    """Said of a sandboxed command when ``policy.allow_unix_sockets`` names host sockets it may still reach."""
    if settings.sandbox is SandboxPolicy.DANGER_FULL_ACCESS or not settings.allowed_sockets:
        return ""
    return f"; host sockets let through (policy.allow_unix_sockets): {', '.join(map(str, settings.allowed_sockets))}"


def unguarded_reads(settings: PolicySettings, reads_refused: bool) -> str:
    """Said of a command that runs without a sandbox while rules on reading exist: they do not hold for it."""
    if settings.sandbox is not SandboxPolicy.DANGER_FULL_ACCESS or not reads_refused:
        return ""
    return "; without a sandbox, fs.read deny and ask rules do not hold for what the command reads"


def literal_glob(path: str) -> str:
    """``path`` as a glob that matches only itself: ``*``, ``?`` and ``[`` in a file name are not wildcards."""
    return "".join(f"[{char}]" if char in "*?[" else char for char in path)
