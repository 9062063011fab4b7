"""The parse cache: a cached resolve is the uncached one
(values, every origin, every problem), and no edit is missed."""

import os
import time
from pathlib import Path

from tests.config._corpus import Scenario, build_corpus

from kairox.config import Layer, ResolvedConfig, resolve_config
from kairox.config._layers import LayerStatus
from kairox.config._parse_cache import ConfigParseCache


def resolve(scenario: Scenario, cache: ConfigParseCache | None) -> ResolvedConfig:
    return resolve_config(
        scenario.workspace,
        env=scenario.env,
        cli_overrides=scenario.cli_overrides,
        profile=scenario.profile,
        parse_cache=cache,
    )


def test_cached_resolve_equals_uncached_over_a_corpus_of_layered_configs(tmp_path: Path) -> None:
    corpus = build_corpus(tmp_path)
    cache = ConfigParseCache()
    settled = ConfigParseCache(settle_ns=0)  # the stat alone decides: the path a long-lived process takes
    for scenario in corpus:
        uncached = resolve(scenario, None)
        for attempt in range(2):
            for cached in (resolve(scenario, cache), resolve(scenario, settled)):
                assert cached == uncached, (scenario.name, attempt)
                assert cached.provenance == uncached.provenance  # every key, with its file, line, layer and shadowed
                assert cached.to_json(redact=False) == uncached.to_json(redact=False), (scenario.name, attempt)


def test_corpus_covers_problems_trust_and_every_layer(tmp_path: Path) -> None:
    results = {s.name: resolve(s, ConfigParseCache()) for s in build_corpus(tmp_path)}
    assert [(p.key, p.line, p.message) for p in results["bad-schema-user"].problems] == [
        (
            "policy.sandbox_policy",
            6,
            "Input should be 'read_only', 'workspace_write' or 'danger_full_access' (got 'wide_open')",
        ),
        (
            "tools.default_timeout_sec",
            3,
            "Input should be a valid number, unable to parse string as a number (got 'soon')",
        ),
        ("tools.output_limt_chars", 2, "unknown key 'output_limt_chars'"),
        ("mcp_servers.x", 7, "set `command` (stdio) or `url` (sse / streamable_http)"),
        ("mcp_servers.x.args", 8, "Input should be a valid list (got 3)"),
    ]
    assert results["bad-toml-project"].problems[0].message.startswith("not valid TOML")
    assert results["bad-toml-project"].problems[0].line == 2
    assert results["too-deep-local"].problems[0].message == "not valid TOML: nested more than 64 levels deep"
    assert results["bad-utf8-system"].problems[0].message.startswith("cannot read:")
    assert results["merged-clash"].problems[0].file == "env:KAIROX_CONFIG__TOOLS__OUTPUT_LIMIT_CHARS"
    statuses = {info.layer: info.status for info in results["untrusted-env-cli"].layers}
    assert statuses[Layer.PROJECT] == LayerStatus.UNTRUSTED and statuses[Layer.ENV] == LayerStatus.LOADED
    assert (
        results["untrusted"].pending
        and not results["trusted-pinned"].pending
        and results["trusted-then-changed"].pending
    )
    assert results["profile-env"].profile == "fast" and results["profile-missing"].problems[0].key == "profiles.fsat"


def _workspace(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    home.mkdir()
    return (
        workspace,
        workspace / "kairox.toml",
        {"KAIROX_HOME": str(home), "KAIROX_SYSTEM_CONFIG": str(tmp_path / "none.toml")},
    )


def test_edits_of_the_same_size_with_the_mtime_set_back_are_seen_at_once(tmp_path: Path) -> None:
    workspace, file, env = _workspace(tmp_path)
    cache = ConfigParseCache(settle_ns=10**12)  # however slow the machine, every read here is within the window
    file.write_text('model = "m-00"\n', encoding="utf-8")
    mtime = file.stat().st_mtime_ns
    for round_ in range(40):  # many rewrites land in the same clock tick as the read before them
        file.write_text(f'model = "m-{round_:02d}"\n', encoding="utf-8")
        os.utime(file, ns=(mtime, mtime))
        resolved = resolve_config(workspace, env=env, parse_cache=cache)
        assert resolved.config.model == f"m-{round_:02d}"
        assert resolved.provenance["model"].file == file and resolved.provenance["model"].line == 1
        again = resolve_config(workspace, env=env, parse_cache=cache)
        assert again == resolved


def test_a_file_replaced_by_another_of_the_same_size_and_times_is_seen(tmp_path: Path) -> None:
    workspace, file, env = _workspace(tmp_path)
    cache = ConfigParseCache(settle_ns=0)  # even when the stat alone is trusted: the inode tells
    file.write_text('model = "first"\n', encoding="utf-8")
    st = file.stat()
    time.sleep(0.05)
    assert resolve_config(workspace, env=env, parse_cache=cache).config.model == "first"
    assert resolve_config(workspace, env=env, parse_cache=cache).config.model == "first"
    other = tmp_path / "other.toml"
    other.write_text('model = "other"\n', encoding="utf-8")
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, file)
    assert resolve_config(workspace, env=env, parse_cache=cache).config.model == "other"
    file.unlink()
    gone = resolve_config(workspace, env=env, parse_cache=cache)
    assert gone.config.model is None
    assert {info.layer: info.status for info in gone.layers}[Layer.PROJECT] == LayerStatus.NOT_FOUND


def test_a_file_turning_invalid_and_back_gives_the_uncached_diagnostics(tmp_path: Path) -> None:
    workspace, file, env = _workspace(tmp_path)
    cache = ConfigParseCache()
    texts = [
        "[tools]\noutput_limit_chars = 5000\n",
        "[tools]\noutput_limit_chars = 50\n",
        "[tools\n",
        "[tools]\noutput_limit_chars = 5000\n",
    ]
    for text in texts:
        file.write_text(text, encoding="utf-8")
        cached, uncached = (
            resolve_config(workspace, env=env, parse_cache=cache),
            resolve_config(workspace, env=env, parse_cache=None),
        )
        assert cached == uncached
    assert [p.message for p in resolve_config(workspace, env=env, parse_cache=cache).problems] == []


def test_env_and_cli_layers_follow_their_input(tmp_path: Path) -> None:
    workspace, file, env = _workspace(tmp_path)
    file.write_text('model = "file"\n', encoding="utf-8")
    cache = ConfigParseCache()
    for model in ("one", "two", "one"):
        resolved = resolve_config(workspace, env={**env, "KAIROX_MODEL": model}, parse_cache=cache)
        assert resolved.config.model == model and resolved.provenance["model"].source == "env:KAIROX_MODEL"
        by_cli = resolve_config(workspace, env=env, cli_overrides=(f"model={model}-cli",), parse_cache=cache)
        assert by_cli.config.model == f"{model}-cli" and by_cli.provenance["model"].source == "cli:-c model"
    assert resolve_config(workspace, env=env, parse_cache=cache).config.model == "file"


def test_a_key_segment_holding_a_double_quote_resolves(tmp_path: Path) -> None:
    workspace, file, env = _workspace(tmp_path)
    file.write_text("[skills.entries.'say \"hi\"']\nenabled = false\n", encoding="utf-8")
    for cache in (None, ConfigParseCache()):
        resolved = resolve_config(workspace, env=env, parse_cache=cache)
        assert not resolved.problems
        assert resolved.config.skills.entries['say "hi"'].enabled is False


def test_a_file_written_again_with_the_same_bytes_resolves_the_same_and_an_edit_after_it_is_seen(
    tmp_path: Path,
) -> None:
    workspace, file, env = _workspace(tmp_path)
    cache = ConfigParseCache(settle_ns=0)
    file.write_text('model = "same"\n', encoding="utf-8")
    first = resolve_config(workspace, env=env, parse_cache=cache)
    time.sleep(0.01)
    file.write_text('model = "same"\n', encoding="utf-8")  # a new stat, the same bytes
    os.utime(file, ns=(file.stat().st_atime_ns, file.stat().st_mtime_ns + 10**9))
    again = resolve_config(workspace, env=env, parse_cache=cache)
    assert again == first == resolve_config(workspace, env=env, parse_cache=None)
    file.write_text('model = "edited"\n', encoding="utf-8")
    assert resolve_config(workspace, env=env, parse_cache=cache).config.model == "edited"
