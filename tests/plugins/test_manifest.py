"""Manifest resolution (P1), fields (P2) and ${KAIROX_PLUGIN_ROOT} expansion (P3)."""

from pathlib import Path

from tests.plugins.conftest import make_plugin, write_json, write_skill

from kairox.config import LspServerConfig, McpServerConfig
from kairox.errors import Diagnostic, ExtensionLoadFailure, Severity
from kairox.plugins import ContributionKind, PluginOrigin, load_plugin


def test_kairox_manifest_wins_over_codex_and_claude_and_the_others_are_listed(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "p", {"name": "from-claude"}, manifest_dir=".claude-plugin")
    write_json(root / ".codex-plugin" / "plugin.json", {"name": "from-codex"})
    write_json(root / ".kairox-plugin" / "plugin.json", {"name": "from-kairox", "version": "1.0.0"})
    write_json(root / ".cursor-plugin" / "plugin.json", {"name": "from-cursor"})

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is not None and problems == []
    assert (plugin.name, plugin.manifest_format, plugin.manifest_path) == (
        "from-kairox",
        "kairox",
        root.resolve() / ".kairox-plugin" / "plugin.json",
    )
    assert plugin.other_manifests == (
        root.resolve() / ".codex-plugin" / "plugin.json",
        root.resolve() / ".claude-plugin" / "plugin.json",
        root.resolve() / ".cursor-plugin" / "plugin.json",
    )


def test_codex_manifest_wins_over_claude(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "p", {"name": "from-claude"})
    write_json(root / ".codex-plugin" / "plugin.json", {"name": "from-codex"})

    plugin, _ = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is not None
    assert (plugin.name, plugin.manifest_format) == ("from-codex", "codex")


def test_folder_with_standard_layout_and_no_manifest_loads_named_after_the_folder(tmp_path: Path) -> None:
    root = tmp_path / "layout-only"
    write_skill(root / "skills" / "pdf", "pdf")
    (root / "commands").mkdir()
    (root / "commands" / "review.md").write_text("Review the diff.\n")
    (root / "agents").mkdir()
    (root / "agents" / "helper.md").write_text("An agent.\n")

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is not None and problems == []
    assert (plugin.name, plugin.manifest_format, plugin.manifest_path) == ("layout-only", "layout", None)
    assert [c.key for c in plugin.contributions()] == ["skill:pdf", "command:review", "agent:helper"]
    assert [s.qualified_name for s in (*plugin.skills, *plugin.commands)] == ["layout-only:pdf", "layout-only:review"]


def test_folder_without_manifest_or_layout_is_reported(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()

    plugin, problems = load_plugin(tmp_path / "empty", origin=PluginOrigin.PATH)

    assert plugin is None
    assert [(p.severity, p.source) for p in problems] == [(Severity.ERROR, str((tmp_path / "empty").resolve()))]
    assert "no manifest" in problems[0].reason


def test_unknown_fields_warn_and_wrong_types_fail_the_plugin(tmp_path: Path) -> None:
    good = make_plugin(tmp_path / "good", {"name": "good", "flavour": "mint", "interface": {"x": 1}})
    bad = make_plugin(tmp_path / "bad", {"name": "bad", "keywords": "not-a-list", "version": 3})

    plugin, warnings = load_plugin(good, origin=PluginOrigin.PATH)
    failed, errors = load_plugin(bad, origin=PluginOrigin.PATH)

    assert plugin is not None
    manifest = str(good.resolve() / ".claude-plugin" / "plugin.json")
    assert warnings == [
        Diagnostic(kind="plugin", name="good", reason="unknown manifest field 'flavour' is ignored", source=manifest)
    ]
    assert failed is None
    assert len(errors) == 1 and isinstance(errors[0], ExtensionLoadFailure)
    assert (
        errors[0].reason == "manifest fields have the wrong type: version: Input should "
        "be a valid string; keywords: Input should be a valid list"
    )


def test_broken_json_manifest_is_one_diagnostic_with_its_line(tmp_path: Path) -> None:
    root = tmp_path / "broken"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{\n  "name": "broken",\n  "version": \n}\n')

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is None
    assert [(p.source, p.line, p.severity) for p in problems] == [
        (str(root.resolve() / ".claude-plugin" / "plugin.json"), 4, Severity.ERROR)
    ]


def test_plugin_root_variables_expand_in_servers_hooks_and_tools(tmp_path: Path) -> None:
    root = make_plugin(
        tmp_path / "srv",
        {
            "name": "srv",
            "mcpServers": {
                "inline": {"command": "${KAIROX_PLUGIN_ROOT}/bin/server", "args": ["--root", "${PLUGIN_ROOT}"]}
            },
            "lspServers": {
                "py": {"command": "pylsp", "extensionToLanguage": {".py": "python"}, "startupTimeout": 5000}
            },
            "tools": [
                {"name": "count", "command": "${CLAUDE_PLUGIN_ROOT}/tools/count.sh", "inputSchema": {"type": "object"}}
            ],
        },
    )
    (root / "tools").mkdir()
    (root / "tools" / "count.sh").write_text("#!/bin/sh\nwc -c\n")
    write_json(
        root / ".mcp.json", {"flat": {"type": "http", "url": "https://example.test/mcp", "oauth": {"clientId": "x"}}}
    )
    write_json(
        root / "hooks" / "hooks.json",
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Write",
                        "hooks": [
                            {"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/check.sh", "timeout": 5}
                        ],
                    }
                ]
            }
        },
    )
    (root / "hooks" / "check.sh").write_text("exit 0\n")

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is not None and problems == []
    real = root.resolve()
    servers = {s.name: s.config for s in plugin.mcp_servers}
    assert servers == {
        "flat": McpServerConfig(type="streamable_http", url="https://example.test/mcp", oauth=True),
        "inline": McpServerConfig(
            type="stdio", command=f"{real}/bin/server", args=["--root", str(real)], cwd=str(real)
        ),
    }
    assert [s.provenance for s in plugin.mcp_servers] == ["plugin:srv", "plugin:srv"]
    assert [s.config for s in plugin.lsp_servers] == [
        LspServerConfig(command="pylsp", languages=["python"], file_patterns=["*.py"], startup_timeout_sec=5.0)
    ]
    assert [(h.event, h.matcher, h.command, h.timeout_sec, h.scripts) for h in plugin.hooks] == [
        ("pre_tool_use", "Write", f"sh {real}/hooks/check.sh", 5.0, (real / "hooks" / "check.sh",))
    ]
    assert [t.declaration.command for t in plugin.tools] == [str(real / "tools" / "count.sh")]
    assert [c.key for c in plugin.contributions()] == [
        "tool:count",
        "hook:pre_tool_use",
        "mcp_server:flat",
        "mcp_server:inline",
        "lsp_server:py",
    ]


def test_kairox_hook_list_form_runs_scripts_by_interpreter(tmp_path: Path) -> None:
    root = make_plugin(
        tmp_path / "k",
        {
            "name": "k",
            "hooks": [
                {"event": "pre_turn", "script": "./hooks/inject.js"},
                {"event": "PostToolUse", "command": "true", "matcher": "fs.*"},
            ],
        },
        manifest_dir=".kairox-plugin",
    )
    (root / "hooks").mkdir()
    (root / "hooks" / "inject.js").write_text("console.log('context')\n")

    plugin, problems = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is not None and problems == []
    real = root.resolve()
    assert [(h.name, h.event, h.command, h.matcher) for h in plugin.hooks] == [
        ("pre_turn", "pre_turn", f"node {real}/hooks/inject.js", None),
        ("post_tool_use", "post_tool_use", "true", "fs.*"),
    ]


def test_empty_hooks_files_are_one_error_each(tmp_path: Path) -> None:
    as_list = make_plugin(tmp_path / "a", {"name": "a"})
    write_json(as_list / "hooks" / "hooks.json", [])
    as_object = make_plugin(tmp_path / "b", {"name": "b"})
    write_json(as_object / "hooks" / "hooks.json", {})
    wrapped = make_plugin(tmp_path / "c", {"name": "c"})
    write_json(wrapped / "hooks" / "hooks.json", {"hooks": {}})

    results = [load_plugin(p, origin=PluginOrigin.PATH) for p in (as_list, as_object, wrapped)]

    for (plugin, problems), root in zip(results, (as_list, as_object, wrapped), strict=True):
        assert plugin is not None and plugin.hooks == ()
        assert [(p.severity, p.source) for p in problems] == [
            (Severity.ERROR, str(root.resolve() / "hooks" / "hooks.json"))
        ]


def test_marketplace_entry_serves_as_manifest_for_a_bare_folder(tmp_path: Path) -> None:
    root = tmp_path / "clangd-lsp"
    root.mkdir()
    entry = {
        "name": "clangd-lsp",
        "version": "1.0.0",
        "source": "./plugins/clangd-lsp",
        "strict": False,
        "lspServers": {"clangd": {"command": "clangd"}},
    }

    plugin, problems = load_plugin(root, origin=PluginOrigin.VALIDATE, fallback=entry)

    assert plugin is not None and problems == []
    assert (plugin.manifest_format, plugin.version) == ("marketplace", "1.0.0")
    assert [c.key for c in plugin.contributions()] == ["lsp_server:clangd"]


def test_commands_in_subfolders_are_namespaced(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "p", {"name": "p"})
    (root / "commands" / "git").mkdir(parents=True)
    (root / "commands" / "git" / "commit.md").write_text("Commit.\n")

    plugin, _ = load_plugin(root, origin=PluginOrigin.PATH)

    assert plugin is not None
    assert [(e.kind, e.name, e.qualified_name) for e in plugin.commands] == [
        (ContributionKind.COMMAND, "git:commit", "p:git:commit")
    ]
