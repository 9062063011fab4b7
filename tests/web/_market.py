"""A plugin marketplace in a folder, as a team shares one: a plugin with skills, a command and permissions, one
that needs a newer Kairox, and one whose files live in a git repository."""

from pathlib import Path

from tests.plugins.conftest import write_json, write_skill


def build_market(root: Path) -> Path:
    write_json(
        root / ".claude-plugin" / "marketplace.json",
        {
            "name": "team-market",
            "owner": {"name": "Team"},
            "plugins": [
                {
                    "name": "review-kit",
                    "source": "./plugins/review-kit",
                    "description": "Review helpers for pull requests",
                    "category": "productivity",
                    "tags": ["review", "git"],
                },
                {
                    "name": "future-kit",
                    "source": "./plugins/future-kit",
                    "description": "Needs a Kairox from the future",
                },
                {
                    "name": "remote-kit",
                    "source": {"source": "github", "repo": "example/remote-kit"},
                    "description": "Lives in git",
                },
            ],
        },
    )
    kit = root / "plugins" / "review-kit"
    write_json(
        kit / ".claude-plugin" / "plugin.json",
        {
            "name": "review-kit",
            "version": "1.4.0",
            "description": "Review helpers for pull requests",
            "permissions": {"sandboxPolicy": "read_only", "networkAccess": False},
        },
    )
    write_skill(kit / "skills" / "review", "review", "Review a change")
    (kit / "commands").mkdir()
    (kit / "commands" / "summarize.md").write_text("Summarize the change.\n", encoding="utf-8")
    write_json(
        root / "plugins" / "future-kit" / ".claude-plugin" / "plugin.json",
        {"name": "future-kit", "version": "0.9.0", "compatibility": {"kairoxVersion": ">=99"}},
    )
    return root


def register(home: Path, market: Path) -> Path:
    config = home / "kairox.toml"
    config.write_text(f'# my settings\n[plugins.marketplaces.team-market]\nsource = "{market}"\n', encoding="utf-8")
    return config
