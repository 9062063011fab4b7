"""One tool model for every source (R1): what a tool is, how it is called, what it returns."""

import enum
import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from kairox._util._json import JsonObject
from kairox.sandbox import SandboxSettings


class ToolSource(enum.StrEnum):
    BUILTIN = "builtin"
    MCP = "mcp"
    PLUGIN = "plugin"
    SKILL = "skill"
    LSP = "lsp"
    DAP = "dap"


class Access(enum.StrEnum):
    """What a tool does to the world, from least to most authority. The policy maps this to a decision."""

    READ = "read"
    """Reads files or state; no side effects."""
    WRITE = "write"
    """Writes files inside the paths it is given."""
    EXECUTE = "execute"
    """Runs commands or programs (shell, debugger)."""
    EXTERNAL = "external_tool"
    """Calls out of process to something Kairox does not control (MCP servers, plugin commands)."""


class Confinement(enum.StrEnum):
    """Where the programs of an execute tool run. Only Kairox's own tools (built-in, plugin command, DAP) declare
    anything but the default, and the policy believes ``SANDBOX`` only of the sources Kairox runs in its sandbox."""

    SANDBOX = "sandbox"
    """The call starts them under the OS sandbox of its settings (``shell.exec``, plugin commands, ``dap.launch``)."""
    SESSION = "session"
    """They run already, held as the call that started them held them (``dap.continue``, ``dap.evaluate``)."""
    NONE = "none"
    """No Kairox sandbox holds them: a process Kairox did not start (``dap.attach``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ProgramArgs:
    """The arguments with which a tool names the program it runs (``dap.launch``): a person asked about the call is
    shown ``[cd CWD &&] [NAME=VALUE ...] PROGRAM ARG ...`` (the folder from the profile's ``cwd_arg``)."""

    program: str
    args: str | None = None
    """Argument holding the program's argument list."""
    env: str | None = None
    """Argument holding the variables set for the program (an object)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PermissionProfile:
    """What a tool needs. Extensions may only narrow it; the user's policy decides."""

    access: Access
    destructive: bool = False
    open_world: bool = False
    path_args: tuple[str, ...] = ()
    """Argument names holding file paths the tool reads or writes (checked against the sandbox roots)."""
    command_arg: str | None = None
    """Argument holding a shell command (matched against ``shell.exec(...)`` rules piece by piece)."""
    cwd_arg: str | None = None
    """Argument holding the folder the command runs in: part of the command for the rules (``cd DIR && ...``)."""
    reads: bool = False
    """A write tool that reads the file first (``fs.edit``): the rules on reading hold for it too."""
    confinement: Confinement = Confinement.SANDBOX
    """For an execute tool: where its programs run (``Confinement``)."""
    program: ProgramArgs | None = None
    """For a tool that runs a named program without a command line: how to show what it runs."""


READ_ONLY = PermissionProfile(access=Access.READ)


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolAnnotations:
    """MCP-style hints. Untrusted: they can narrow what Kairox allows, never widen it."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    name: str
    """Name the model sees: prefixed, at most 64 characters."""
    description: str
    input_schema: JsonObject
    source: ToolSource
    permission: PermissionProfile
    origin: str | None = None
    """Server, plugin or skill name; ``None`` for built-ins."""
    output_schema: JsonObject | None = None
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)
    timeout_sec: float | None = None
    """Per-call timeout; the registry's default when ``None``."""
    meta: JsonObject = field(default_factory=dict)
    annotations_trusted: bool = False
    """The user trusts this tool's annotations (``mcp_servers.NAME.trust_annotations``): only then can a
    ``readOnlyHint`` make an MCP tool a read."""

    def fingerprint(self) -> str:
        """A digest of what the model and the policy see of this tool (schema, description, annotations,
        profile): a session grant is bound to it, so a tool redefined under the same name asks again."""
        notes = self.annotations
        payload = {
            "name": self.name,
            "source": str(self.source),
            "origin": self.origin,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "annotations": [
                notes.title,
                notes.read_only_hint,
                notes.destructive_hint,
                notes.idempotent_hint,
                notes.open_world_hint,
            ],
            "trusted": self.annotations_trusted,
            "permission": [
                str(self.permission.access),
                self.permission.destructive,
                self.permission.open_world,
                list(self.permission.path_args),
                self.permission.command_arg,
                self.permission.reads,
                str(self.permission.confinement),
            ],
        }
        text = json.dumps(payload, sort_keys=True, default=str, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def object_schema(properties: JsonObject, required: Sequence[str] = ()) -> JsonObject:
    """The input schema of a tool taking exactly ``properties`` (``required`` listed only when there are any)."""
    schema: JsonObject = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    name: str
    arguments: JsonObject = field(default_factory=dict)
    call_id: str = ""


# --- results ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class TextContent:
    text: str
    type: Literal["text"] = "text"
    extra: JsonObject | None = field(default=None, compare=False)
    """Wire fields of an MCP server's block Kairox does not model (``annotations``, ``_meta``, ``title`` ...),
    kept so ``kairox serve`` passes the block on as it came."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ImageContent:
    data: str
    """Base64."""
    mime_type: str
    type: Literal["image"] = "image"
    extra: JsonObject | None = field(default=None, compare=False)
    """Wire fields of an MCP server's block Kairox does not model (``annotations``, ``_meta``, ``title`` ...),
    kept so ``kairox serve`` passes the block on as it came."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AudioContent:
    data: str
    """Base64."""
    mime_type: str
    type: Literal["audio"] = "audio"
    extra: JsonObject | None = field(default=None, compare=False)
    """Wire fields of an MCP server's block Kairox does not model (``annotations``, ``_meta``, ``title`` ...),
    kept so ``kairox serve`` passes the block on as it came."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EmbeddedResource:
    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    """Base64, when the resource is binary."""
    type: Literal["resource"] = "resource"
    extra: JsonObject | None = field(default=None, compare=False)
    """Wire fields of an MCP server's block Kairox does not model (``annotations``, ``_meta``, ``title`` ...),
    kept so ``kairox serve`` passes the block on as it came."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ResourceLink:
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    type: Literal["resource_link"] = "resource_link"
    extra: JsonObject | None = field(default=None, compare=False)
    """Wire fields of an MCP server's block Kairox does not model (``annotations``, ``_meta``, ``title`` ...),
    kept so ``kairox serve`` passes the block on as it came."""


Content = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResult:
    content: tuple[Content, ...] = ()
    structured: JsonObject | None = None
    is_error: bool = False
    meta: JsonObject = field(default_factory=dict)

    @classmethod
    def text(cls, text: str, *, structured: JsonObject | None = None) -> "ToolResult":
        return cls(content=(TextContent(text=text),), structured=structured)

    @classmethod
    def error(cls, message: str) -> "ToolResult":
        return cls(content=(TextContent(text=message),), is_error=True)

    def text_content(self) -> str:
        """All text parts joined by newlines (what a text-only model would read)."""
        return "\n".join(c.text for c in self.content if isinstance(c, TextContent))


# --- calling -----------------------------------------------------------------------------------------------------


ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]
"""``(progress, total, message)``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CallContext:
    """What a provider gets with each call besides the arguments."""

    call_id: str
    workspace: Path
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    progress: ProgressCallback | None = None
    unreadable: Callable[[Path], str | None] | None = None
    """For tools that read whole folders (search, listing): why a file found there must be left out (the deny
    or ask rule on reading it), or None. Called with the file's resolved path."""
