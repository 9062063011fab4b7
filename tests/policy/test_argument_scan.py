"""The scan for paths in a third-party tool's arguments is bounded, and says when it stopped before something that
may name a path; what cannot name one (numbers, plain text under a name that is no path's) is passed over quietly.
The engine asks about a call it could not read all of only when a rule or a protection depends on its paths."""

from pathlib import Path

import pytest

from kairox.config import ApprovalPolicy, PolicyConfig, SandboxPolicy
from kairox.policy import DecisionSource, PolicyEngine, PolicySettings, Rule, Verdict, parse_rule
from kairox.policy._facts import scan_path_arguments
from kairox.tools import Access, PermissionProfile, ToolSource, ToolSpec


def scan(arguments: dict[str, object]) -> tuple[list[str], str | None]:
    found: list[str] = []
    return found, scan_path_arguments(arguments, found)


def deep(levels: int, inner: object) -> object:
    """``inner`` inside ``levels`` objects."""
    for index in range(levels):
        inner = {f"level{index}": inner}
    return inner


QUIET = [
    ("numbers", {"vector": list(range(1000))}),
    ("plain-text", {"messages": [f"line {i}" for i in range(200)]}),
    ("plain-keys", {"options": {f"flag{i}": "on" for i in range(200)}}),
    ("many-arguments", {f"field{i}": i for i in range(500)}),
    ("deep-numbers", {"a": deep(6, {"count": 3, "ratio": 0.5})}),
    ("empty-deep", {"a": deep(6, [])}),
    ("urls", {"urls": [f"https://example.org/{i}" for i in range(100)]}),
]


@pytest.mark.parametrize(("case", "arguments"), QUIET, ids=[case for case, _ in QUIET])
def test_what_cannot_name_a_path_is_passed_over_without_a_report(case: str, arguments: dict[str, object]) -> None:
    assert scan(arguments) == ([], None)


REPORTED = [
    (
        "text-past-the-list",
        {"files": [f"f{i}" for i in range(65)]},
        "argument 'files' holds a list of 65 items and the policy reads the first 64",
    ),
    (
        "uri-past-the-list",
        {"items": [*range(64), "file:///etc/passwd"]},
        "argument 'items' holds a list of 65 items and the policy reads the first 64",
    ),
    (
        "object-past-the-list",
        {"items": [*range(64), {}, {"x": 1}]},
        "argument 'items' holds a list of 66 items and the policy reads the first 64",
    ),
    (
        "path-past-the-object",
        {"o": {**{f"k{i}": i for i in range(64)}, "dir": "/etc"}},
        "argument 'o' holds an object of 65 entries and the policy reads the first 64",
    ),
    (
        "list-too-deep",
        {"a": deep(6, [["x"]])},
        "argument 'a' nests lists or objects more than 6 deep and the policy reads 6 levels",
    ),
    (
        "path-past-the-arguments",
        {**{f"k{i}": 1 for i in range(64)}, "path": "x"},
        "the call has 65 arguments and the policy reads the first 64",
    ),
]


@pytest.mark.parametrize(("case", "arguments", "why"), REPORTED, ids=[case for case, _, _ in REPORTED])
def test_what_may_name_a_path_past_a_limit_is_reported(case: str, arguments: dict[str, object], why: str) -> None:
    assert scan(arguments)[1] == why


def test_the_scan_keeps_the_first_64_paths_and_reports_the_65th() -> None:
    found, why = scan({"paths": [f"p{i}" for i in range(64)], "more": [{"file": "q"}]})

    assert (found, why) == (
        [f"p{i}" for i in range(64)],
        "the call names more than 64 paths and the policy reads the first 64",
    )
    assert scan({"paths": [f"p{i}" for i in range(64)], "more": [{"name": "q"}]}) == (
        [f"p{i}" for i in range(64)],
        None,
    )


# (a string under a name that is no path's, the paths the scan reads in it)
FILE_URIS = [
    ("file:/etc/passwd", ["/etc/passwd"]),
    ("file:///etc/pa%73swd", ["/etc/passwd"]),
    ("file://localhost/etc/passwd", ["/etc/passwd"]),
    ("FILE://LOCALHOST/etc/passwd", ["/etc/passwd"]),
    ("file:////etc/passwd", ["/etc/passwd"]),
    ("file:%2Fetc%2Fpasswd", ["/etc/passwd"]),
    ("file:///etc/passwd?x=1#top", ["/etc/passwd"]),
    ("file:secrets/key", ["secrets/key"]),
    ("file:~/.ssh/id_rsa", ["~/.ssh/id_rsa"]),
    ("file://secrets/key", ["/key", "secrets/key"]),
    ("file://%2Fetc/passwd", ["/passwd", "/etc/passwd"]),
    ("file: notes on the design", []),
    ("file:", []),
    ("profile:/etc/passwd", []),
]


@pytest.mark.parametrize(("text", "paths"), FILE_URIS, ids=[text for text, _ in FILE_URIS])
def test_a_file_uri_is_read_as_the_paths_a_server_may_open(text: str, paths: list[str]) -> None:
    assert scan({"note": text}) == (paths, None)
    assert scan({"a": [{"b": f"  {text}  "}]}) == (paths, None)


def test_text_in_the_deepest_object_read_is_read() -> None:
    assert scan({"a": deep(5, {"path": "x"})}) == (["x"], None)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    for folder in ("ws", "home", "tmp"):
        (tmp_path / folder).mkdir()
    return tmp_path / "ws"


def engine(ws: Path, *patterns: tuple[str, str], approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST) -> PolicyEngine:
    rules = [
        Rule(action=a, pattern=p, layer="user", file="kairox.toml", line=i)
        for i, (a, p) in enumerate(patterns, start=1)
    ]
    config = PolicyConfig(approval_policy=approval, sandbox_policy=SandboxPolicy.WORKSPACE_WRITE)
    return PolicyEngine(
        PolicySettings.from_config(
            config, workspace=ws, rules=rules, home=ws.parent / "home", temp_dir=ws.parent / "tmp"
        )
    )


def tool(source: ToolSource, *, access: Access = Access.EXTERNAL, path_args: tuple[str, ...] = ()) -> ToolSpec:
    return ToolSpec(
        name="mcp__fs__read" if source is ToolSource.MCP else "ops__copy",
        description="",
        input_schema={"type": "object"},
        source=source,
        origin="fs" if source is ToolSource.MCP else "ops",
        permission=PermissionProfile(access=access, path_args=path_args),
    )


PAST = {"paths": [f"src/{i}.py" for i in range(65)]}
UNDER = {"paths": [f"src/{i}.py" for i in range(64)]}


def test_an_allow_rule_on_paths_vouches_only_for_a_call_it_could_read_all_of(ws: Path) -> None:
    policy, spec = engine(ws), tool(ToolSource.MCP)
    grant = parse_rule(Rule(action="allow", pattern="mcp__fs__read(src/**)", layer="session"))

    assert policy.matches_any([grant], spec, UNDER) == grant
    assert policy.matches_any([grant], spec, PAST) is None


def test_an_allow_rule_on_paths_asks_about_a_call_past_a_limit_and_names_itself(ws: Path) -> None:
    policy, spec = engine(ws, ("allow", "mcp__fs__read(src/**)")), tool(ToolSource.MCP)

    assert policy.decide(spec, UNDER).verdict is Verdict.ALLOW
    decision = policy.decide(spec, PAST)
    assert (decision.verdict, decision.source, str(decision.rule)) == (
        Verdict.ASK,
        DecisionSource.RULE,
        "allow rule 'mcp__fs__read(src/**)' (kairox.toml:1)",
    )


def test_a_kept_allow_for_a_tool_does_not_carry_a_call_past_a_limit(ws: Path) -> None:
    policy, spec = engine(ws, ("allow", "mcp__fs__*")), tool(ToolSource.MCP)
    for _ in range(3):  # the harmless call's decision is kept for the tool
        assert policy.decide(spec, {"message": "hi"}).verdict is Verdict.ALLOW

    decision = policy.decide(spec, {"a": deep(7, {"path": ".mcp.json"})})

    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.PROTECTED_PATH)
    assert decision.reason.startswith(
        "argument 'a' nests lists or objects more than 6 deep and the policy reads 6 levels, so the rest"
    )


def test_a_declared_path_argument_that_is_not_text_is_asked_about_when_a_rule_names_paths(ws: Path) -> None:
    spec = tool(ToolSource.PLUGIN, access=Access.EXECUTE, path_args=("source",))
    arguments = {"source": {"nested": "notes/today.md"}}

    assert engine(ws).decide(spec, arguments).verdict is Verdict.ALLOW  # no rule on paths: the OS sandbox holds it
    decision = engine(ws, ("deny", "plugin:ops(secrets/**)")).decide(spec, arguments)
    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.RULE)
    # a nested value the deny rule's pattern matches as it stands is denied outright: deny rules see nested values
    nested_secret = engine(ws, ("deny", "plugin:ops(secrets/**)")).decide(spec, {"source": {"nested": "secrets/key"}})
    assert (nested_secret.verdict, nested_secret.source) == (Verdict.DENY, DecisionSource.RULE)
    assert decision.reason == (
        "argument 'source' holds a dict where the policy reads a path, "
        "so deny rule 'plugin:ops(secrets/**)' (kairox.toml:1) cannot be "
        "checked against the rest; pass each path as text; no allow rule can vouch for what was not read"
    )


def test_a_declared_path_argument_of_a_writing_tool_that_is_not_text_is_asked_about(ws: Path) -> None:
    spec = tool(ToolSource.PLUGIN, access=Access.WRITE, path_args=("target",))

    decision = engine(ws, ("allow", "ops__copy")).decide(spec, {"target": ["notes.md", ["../outside"]]})

    assert (decision.verdict, decision.source) == (Verdict.ASK, DecisionSource.PROTECTED_PATH)
    assert "the protected paths and the writable roots" in decision.reason
