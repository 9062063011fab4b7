"""What the attack corpus builds on: a policy engine over a real temp workspace, the built-in tools' specs, and
MCP tool specs the way the adapter makes them."""

from pathlib import Path

from kairox.config import ApprovalPolicy, PolicyConfig, SandboxPolicy
from kairox.policy import Decision, PolicyEngine, PolicySettings, Rule
from kairox.tools import BUILTIN_SPECS, Access, PermissionProfile, ToolAnnotations, ToolSource, ToolSpec

SPECS = {spec.name: spec for spec in BUILTIN_SPECS}
SHELL = SPECS["shell.exec"]


def workspace(tmp_path: Path) -> Path:
    for folder in ("ws/src", "ws/secrets", "home", "tmp"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    return tmp_path / "ws"


def engine(
    ws: Path, *patterns: tuple[str, str], approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST, network: bool = False
) -> PolicyEngine:
    """An engine whose rules are ``(action, pattern)`` pairs written in the user's file at line 1, 2 ..."""
    rules = [
        Rule(action=a, pattern=p, layer="user", file="kairox.toml", line=i)
        for i, (a, p) in enumerate(patterns, start=1)
    ]
    config = PolicyConfig(
        approval_policy=approval, sandbox_policy=SandboxPolicy.WORKSPACE_WRITE, network_access=network
    )
    return PolicyEngine(
        PolicySettings.from_config(
            config, workspace=ws, rules=rules, home=ws.parent / "home", temp_dir=ws.parent / "tmp"
        )
    )


def shell(policy: PolicyEngine, command: str) -> Decision:
    return policy.decide(SHELL, {"command": command})


def mcp_tool(
    server: str, tool: str, annotations: ToolAnnotations | None = None, schema: dict | None = None
) -> ToolSpec:
    """An MCP tool as the adapter lists it from a server whose annotations the user has not marked trusted."""
    notes = annotations or ToolAnnotations()
    read_only = notes.read_only_hint is True
    return ToolSpec(
        name=f"mcp__{server}__{tool}",
        description=f"{tool} of {server}",
        input_schema=schema or {"type": "object"},
        source=ToolSource.MCP,
        origin=server,
        # what the adapter declared before annotations needed the user's trust: the tool's own claim
        permission=PermissionProfile(
            access=Access.EXTERNAL,
            destructive=not read_only and notes.destructive_hint is not False,
            open_world=notes.open_world_hint is not False,
        ),
        annotations=notes,
    )
