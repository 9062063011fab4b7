"""Dotted keys: ``join_key`` writes segments as TOML quotes them and ``split_key`` reads them back the same way,
so a server whose name needs quoting (a quote, a backslash, a dot, a control character) can be found and changed."""

import tomllib
from pathlib import Path

import pytest

from kairox.config import join_key, resolve_config, set_value, split_key
from kairox.config._keys import key_positions
from kairox.runtime._operations import server_layer_file

NAMES = [
    "plain-name",
    "dotted.name",
    "with space",
    'a"quote',
    "back\\slash",
    'ends with \\"',
    'a"."b',
    "tab\there",
    "new\nline",
    "delete\x7fchar",
    "café",
    '"',
    "\\",
    "'single'",
]


@pytest.mark.parametrize("name", NAMES)
def test_a_joined_key_splits_back_into_its_segments_and_reads_so_in_toml(name: str) -> None:
    key = join_key(("mcp_servers", name, "enabled"))
    assert split_key(key) == ["mcp_servers", name, "enabled"]
    assert tomllib.loads(f"{key} = true") == {"mcp_servers": {name: {"enabled": True}}}
    assert key_positions(f"{key} = true\n")[key] == (1, 1)


@pytest.mark.parametrize(
    ("key", "parts"),
    [
        ('a."b\\u00e9c".d', ["a", "béc", "d"]),
        ('a."\\U0001F600"', ["a", "\U0001f600"]),
        ("a.'no\\escape'", ["a", "no\\escape"]),
        ('a . "x\\ty" . b', ["a", "x\ty", "b"]),
        ('"\\\\"', ["\\"]),
    ],
)
def test_split_key_reads_quoted_segments_as_toml_does(key: str, parts: list[str]) -> None:
    assert split_key(key) == parts
    assert tomllib.loads(f"{key} = 1") is not None


@pytest.mark.parametrize(
    "key", ['a."b\\q"', 'a."b\\u12"', 'a."\\uD800"', 'a."\\U00110000"', 'a."open', "a.'open", 'a."b"c', "a."]
)
def test_a_malformed_key_is_refused_with_the_key_named(key: str) -> None:
    with pytest.raises(ValueError, match="key") as caught:
        split_key(key)
    assert key in str(caught.value) or repr(key) in str(caught.value) or "ends with a dot" in str(caught.value)


def test_a_server_whose_name_needs_escapes_is_found_in_its_file_and_changed_there(
    tmp_path: Path, isolated_home: Path
) -> None:
    name = 'team "alpha" \\ prod'
    user_file = isolated_home / "kairox.toml"
    user_file.write_text(
        f'# servers of the team\n[{join_key(("mcp_servers", name))}]\ncommand = "python3"\nargs = ["-m", "server"]\n',
        encoding="utf-8",
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    resolved = resolve_config(workspace, env={"KAIROX_HOME": str(isolated_home)}, parse_cache=None)
    assert name in resolved.config.mcp_servers
    origin = resolved.provenance.get(join_key(("mcp_servers", name)))
    assert origin is not None and origin.file == user_file and origin.line == 2

    file = server_layer_file(resolved, "mcp_servers", name)
    assert file == user_file
    set_value(file, join_key(("mcp_servers", name, "enabled")), False)
    data = tomllib.loads(user_file.read_text(encoding="utf-8"))
    assert data["mcp_servers"][name] == {"command": "python3", "args": ["-m", "server"], "enabled": False}
    assert user_file.read_text(encoding="utf-8").startswith("# servers of the team\n")
    again = resolve_config(workspace, env={"KAIROX_HOME": str(isolated_home)}, parse_cache=None)
    assert again.config.mcp_servers[name].enabled is False
