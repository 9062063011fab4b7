"""``$KAIROX_HOME/plugins/installed.json``: which version of which plugin is installed, from where."""

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from kairox._util._files import write_atomically
from kairox.plugins._manifest import TrustLevel


@dataclass(frozen=True, kw_only=True, slots=True)
class InstallRecord:
    name: str
    marketplace: str
    version: str
    path: Path
    source: str
    trust: TrustLevel = TrustLevel.COMMUNITY
    disabled_reason: str | None = None
    """Set when the plugin was installed disabled (incompatible), with the reason."""

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["path"] = str(self.path)
        data["trust"] = str(self.trust)
        return data


class InstallRecords:
    """The installed-plugins file, written atomically."""

    def __init__(self, home: Path) -> None:
        self.file = home / "plugins" / "installed.json"

    def read(self) -> dict[str, InstallRecord]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # missing, not JSON, not UTF-8
            return {}
        plugins = data.get("plugins") if isinstance(data, dict) else None
        records: dict[str, InstallRecord] = {}
        for name, raw in plugins.items() if isinstance(plugins, dict) else []:
            try:
                records[name] = InstallRecord(
                    name=name,
                    marketplace=str(raw["marketplace"]),
                    version=str(raw["version"]),
                    path=Path(raw["path"]),
                    source=str(raw.get("source", "")),
                    trust=TrustLevel(raw.get("trust", "community")),
                    disabled_reason=raw.get("disabled_reason"),
                )
            except (KeyError, TypeError, ValueError):
                continue
        return records

    def write(self, records: dict[str, InstallRecord]) -> None:
        body = {
            "plugins": {
                name: {k: v for k, v in r.to_json().items() if k != "name"} for name, r in sorted(records.items())
            }
        }
        write_atomically(self.file, (json.dumps(body, indent=2) + "\n").encode(), mode=0o600)

    def put(self, record: InstallRecord) -> None:
        records = self.read()
        records[record.name] = record
        self.write(records)

    def remove(self, name: str) -> InstallRecord | None:
        records = self.read()
        record = records.pop(name, None)
        if record is not None:
            self.write(records)
        return record
