"""The compiled matcher of deny-by-name rules gives the same answer as reading every rule in order."""

import itertools

from kairox.policy._rules import NameDenials, ParsedRule, Rule, RuleAction, RuleRef, parse_rule
from kairox.tools import Access, PermissionProfile, ToolSource, ToolSpec

PATTERNS = (
    "mcp__github",
    "mcp__git*__push",
    "mcp__*__delete_*",
    "fs.read",
    "fs.write",
    "skill",
    "plugin:ops*",
    "shell.exec",
    "mcp__s0[0-4]__tool_1?",
    "web.*",
    "mcp__a.b__x",
    "shell.exec(rm *)",
    "fs.read(secrets/**)",
    "*",
    "mcp__srv__tool(x=1)",
    "mcp__github__",
    "[!m]*",
)
SPECS = (
    ("mcp__github__create_issue", ToolSource.MCP, "mcp:github", Access.WRITE, ()),
    ("mcp__gitlab__push", ToolSource.MCP, "mcp:gitlab", Access.WRITE, ()),
    ("mcp__files__delete_all", ToolSource.MCP, "mcp:files", Access.WRITE, ("path",)),
    ("mcp__s03__tool_12", ToolSource.MCP, "mcp:s03", Access.READ, ()),
    ("mcp__s07__tool_12", ToolSource.MCP, "mcp:s07", Access.READ, ()),
    ("mcp__aXb__x", ToolSource.MCP, "mcp:aXb", Access.READ, ()),
    ("mcp__a.b__x", ToolSource.MCP, "mcp:a.b", Access.READ, ()),
    ("fs.read", ToolSource.BUILTIN, None, Access.READ, ("path",)),
    ("fs.list", ToolSource.BUILTIN, None, Access.READ, ("path",)),
    ("fs.edit", ToolSource.BUILTIN, None, Access.WRITE, ("path",)),
    ("lsp.definition", ToolSource.LSP, "lsp:py", Access.READ, ("path",)),
    ("shell.exec", ToolSource.BUILTIN, None, Access.EXECUTE, ()),
    ("web.fetch", ToolSource.BUILTIN, None, Access.READ, ()),
    ("skill.run", ToolSource.SKILL, "pr-review", Access.READ, ()),
    ("skill", ToolSource.MCP, "mcp:x", Access.READ, ()),
    ("ops_deploy", ToolSource.PLUGIN, "plugin:ops-tools", Access.EXECUTE, ()),
    ("ops_deploy", ToolSource.PLUGIN, "plugin:dev", Access.EXECUTE, ()),
    ("multi\nline", ToolSource.MCP, "mcp:m", Access.READ, ()),
)


def spec(name: str, source: ToolSource, origin: str | None, access: Access, paths: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        name=name,
        description="",
        input_schema={"type": "object"},
        source=source,
        origin=origin,
        permission=PermissionProfile(access=access, path_args=paths),
    )


def by_reading_each(rules: list[ParsedRule], tool: ToolSpec) -> RuleRef | None:
    for rule in rules:
        if rule.ref.action is RuleAction.DENY and rule.names_tool_only and rule.matches_tool(tool):
            return rule.ref
    return None


def test_every_order_of_rules_gives_the_first_matching_rule() -> None:
    parsed = [parse_rule(Rule(action="deny", pattern=p, line=i)) for i, p in enumerate(PATTERNS, 1)]
    tools = [spec(*s) for s in SPECS]
    checked = 0
    for size in (1, 2, 3):
        for chosen in itertools.permutations(parsed, size):
            rules = list(chosen)
            matcher = NameDenials(rules)
            for tool in tools:
                assert matcher.first(tool) == by_reading_each(rules, tool), ([r.ref.pattern for r in rules], tool.name)
                checked += 1
    assert checked > 50_000
    full = NameDenials(parsed)
    hidden = {f"{tool.name} {tool.origin}": full.first(tool) for tool in tools}
    assert hidden["mcp__github__create_issue mcp:github"] == parsed[0].ref
    assert hidden["fs.list None"] == parsed[3].ref  # fs.read holds for every built-in tool that reads paths
    assert hidden["ops_deploy plugin:ops-tools"] == parsed[6].ref
    assert hidden["ops_deploy plugin:dev"] == parsed[13].ref  # only `*` names it


def test_allow_and_ask_rules_and_rules_with_a_specifier_never_hide() -> None:
    rules = [
        parse_rule(Rule(action="allow", pattern="mcp__github")),
        parse_rule(Rule(action="ask", pattern="*")),
        parse_rule(Rule(action="deny", pattern="mcp__github__create_issue(title=x*)")),
    ]
    assert NameDenials(rules).first(spec(*SPECS[0])) is None
