from kairox._util._expand import expand_vars
from kairox._util._names import mcp_tool_name, suggest


def test_mcp_tool_names_are_prefixed_and_normalised() -> None:
    assert mcp_tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert mcp_tool_name("my server", "get.file/v2") == "mcp__my_server__get_file_v2"


def test_long_mcp_tool_names_are_cut_with_a_stable_distinct_hash() -> None:
    first = mcp_tool_name("a-very-long-server-name-for-testing", "an_even_longer_tool_name_that_goes_on_and_on_1")
    second = mcp_tool_name("a-very-long-server-name-for-testing", "an_even_longer_tool_name_that_goes_on_and_on_2")
    assert len(first) == 64 and len(second) == 64
    assert first != second
    assert first == mcp_tool_name(
        "a-very-long-server-name-for-testing", "an_even_longer_tool_name_that_goes_on_and_on_1"
    )
    assert first.startswith("mcp__a-very-long-server-name-for-testing__an_even_longe_")


def test_expansion_uses_defaults_and_reports_missing_variables() -> None:
    env = {"HOST": "127.0.0.1", "EMPTY": ""}
    assert expand_vars("http://${HOST}:${PORT:-8080}/mcp", env).value == "http://127.0.0.1:8080/mcp"
    assert expand_vars("${EMPTY:-fallback}", env).value == "fallback"
    result = expand_vars("Bearer ${TOKEN}", env)
    assert (result.value, result.missing) == ("Bearer ", ("TOKEN",))
    assert expand_vars("$HOME and ${", env).value == "$HOME and ${"


def test_suggest_finds_the_close_key_only() -> None:
    assert suggest("aproval_policy", ["approval_policy", "sandbox_policy"]) == "approval_policy"
    assert suggest("zzz", ["approval_policy"]) is None
