"""A named deny or ask rule on an argument the policy reads as a path holds for the path, however it is spelled
(attack corpus): ``mcp__h__t0(.path=/etc/*)`` refuses ``//etc/passwd``, ``/tmp/../etc/passwd``, ``../`` up to
``/etc`` and ``file:///etc/passwd`` as it refuses ``/etc/passwd``, the way a named allow rule compares a path as
a path. The tool is a real MCP server that writes a marker file each time it really runs."""

from pathlib import Path

import pytest
from tests.security.test_value_rules import ALLOW_SERVER, _call, _ids, rule

from kairox._util._json import JsonObject
from kairox.policy import Rule

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

DENY_ETC = rule("deny", "mcp__h__t0(.path=/etc/*)", 2)
DENY_SECRETS = rule("deny", "mcp__h__t0(.target=secrets/**)", 3)

SPELLED = (
    ("as-written", {"path": "/etc/passwd"}, DENY_ETC),
    ("double-slash", {"path": "//etc/passwd"}, DENY_ETC),
    ("dot-folder", {"path": "/./etc/passwd"}, DENY_ETC),
    ("up-and-back", {"path": "/tmp/../etc/passwd"}, DENY_ETC),
    ("relative-up", {"path": "../../../../../../../../etc/passwd"}, DENY_ETC),
    ("file-uri", {"path": "file:///etc/passwd"}, DENY_ETC),
    ("file-uri-in-a-list", {"path": ["src/a", "FILE:/etc/passwd"]}, DENY_ETC),
    ("workspace-relative", {"target": "./secrets/key"}, DENY_SECRETS),
    ("workspace-absolute", {"target": "{ws}/secrets/key"}, DENY_SECRETS),
    ("through-src", {"target": "src/../secrets/key"}, DENY_SECRETS),
)
OTHER = (
    ("another-file", {"path": "/usr/share/doc"}),
    ("another-folder", {"target": "src/key"}),
)


def _filled(arguments: JsonObject, ws: Path) -> JsonObject:
    return {k: v.replace("{ws}", str(ws)) if isinstance(v, str) else v for k, v in arguments.items()}


@pytest.mark.parametrize(("case", "arguments", "deny"), SPELLED, ids=_ids(SPELLED))  # type: ignore[arg-type]
async def test_a_named_deny_rule_on_a_path_holds_for_every_spelling_of_it(
    tmp_path: Path, case: str, arguments: JsonObject, deny: Rule
) -> None:
    result, asked, ran = await _call(
        tmp_path, _filled(arguments, tmp_path / "ws"), ALLOW_SERVER, DENY_ETC, DENY_SECRETS
    )

    assert asked == []
    assert result.meta["decision"]["reason"] == f"denied by deny rule {deny.pattern!r} (kairox.toml:{deny.line})"
    assert result.is_error and ran == []


@pytest.mark.parametrize(("case", "arguments", "deny"), SPELLED, ids=_ids(SPELLED))  # type: ignore[arg-type]
async def test_a_named_ask_rule_on_a_path_holds_for_every_spelling_of_it(
    tmp_path: Path, case: str, arguments: JsonObject, deny: Rule
) -> None:
    ask = Rule(action="ask", pattern=deny.pattern, layer="user", file="kairox.toml", line=deny.line)
    result, asked, ran = await _call(tmp_path, _filled(arguments, tmp_path / "ws"), ALLOW_SERVER, ask)

    assert (
        len(asked) == 1 and asked[0].reason == f"ask rule {deny.pattern!r} (kairox.toml:{deny.line}) asks for approval"
    )
    assert result.is_error and ran == []


@pytest.mark.parametrize(("case", "arguments"), OTHER, ids=_ids(OTHER))
async def test_another_path_runs(tmp_path: Path, case: str, arguments: JsonObject) -> None:
    result, asked, ran = await _call(tmp_path, arguments, ALLOW_SERVER, DENY_ETC, DENY_SECRETS)

    assert asked == []
    assert (result.is_error, result.text_content(), ran) == (False, "ok t0", ["t0-1"])
