"""``CatalogEntry``: one MCP server as the official MCP Registry describes it (``server.json``, schema 2025-12-11).

The mapping is faithful: every field of the format has a place, nothing is guessed, and what Kairox does not
know is kept in ``extra`` (and the whole document in ``raw``), so an entry can be shown and passed on as read.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kairox._util._json import JsonObject
from kairox.errors import KairoxError

OFFICIAL_META = "io.modelcontextprotocol.registry/official"
"""Where a registry puts its own facts about an entry (``status``, ``publishedAt``, ``isLatest``)."""
KAIROX_META = "dev.kairox/catalog"
"""Kairox's own facts in the built-in list (``tags``), under ``_meta`` as the format asks for extensions."""


class CatalogFormatError(KairoxError):
    """A catalog document or one of its entries does not have the shape of ``server.json``."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(
            f"{where}: {reason}", hint="the catalog source serves data Kairox cannot read; tell its maintainer"
        )
        self.where, self.reason = where, reason


class _Reader:
    """Typed access to one JSON object, each failure naming the path of the bad field."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise CatalogFormatError(where, f"expected an object, got {_kind(data)}")
        self.data: dict[str, Any] = data
        self.where = where

    def text(self, key: str, *, required: bool = False) -> str | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise CatalogFormatError(self.where, f"`{key}` is missing")
            return None
        if not isinstance(value, str):
            raise CatalogFormatError(f"{self.where}.{key}", f"expected a string, got {_kind(value)}")
        return value

    def flag(self, key: str) -> bool:
        value = self.data.get(key, False)
        if not isinstance(value, bool):
            raise CatalogFormatError(f"{self.where}.{key}", f"expected true or false, got {_kind(value)}")
        return value

    def items(self, key: str) -> list[tuple[str, Any]]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise CatalogFormatError(f"{self.where}.{key}", f"expected a list, got {_kind(value)}")
        return [(f"{self.where}.{key}[{index}]", item) for index, item in enumerate(value)]

    def table(self, key: str) -> dict[str, Any]:
        value = self.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise CatalogFormatError(f"{self.where}.{key}", f"expected an object, got {_kind(value)}")
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        found = []
        for where, item in self.items(key):
            if not isinstance(item, str):
                raise CatalogFormatError(where, f"expected a string, got {_kind(item)}")
            found.append(item)
        return tuple(found)

    def extra(self, known: frozenset[str]) -> JsonObject:
        return {k: v for k, v in self.data.items() if k not in known}

    def variables(self) -> dict[str, "CatalogInput"]:
        """``variables``: URL variables by name, each an input whose name is its key."""
        found = self.table("variables").items()
        return {key: CatalogInput.parse(item, f"{self.where}.variables.{key}", named=False) for key, item in found}


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogInput:
    """An ``Input`` of the format: an environment variable, a header, an argument's value or a URL variable."""

    name: str | None = None
    """The variable's or header's name (absent for URL variables, whose name is their key)."""
    description: str | None = None
    is_required: bool = False
    is_secret: bool = False
    format: str = "string"
    value: str | None = None
    """A fixed value; ``{name}`` parts are filled from ``variables``."""
    default: str | None = None
    placeholder: str | None = None
    choices: tuple[str, ...] = ()
    variables: Mapping[str, "CatalogInput"] = field(default_factory=dict)
    extra: JsonObject = field(default_factory=dict)

    @classmethod
    def parse(cls, data: Any, where: str, *, named: bool) -> "CatalogInput":
        r = _Reader(data, where)
        variables = r.variables()
        return cls(
            name=r.text("name", required=named),
            description=r.text("description"),
            is_required=r.flag("isRequired"),
            is_secret=r.flag("isSecret"),
            format=r.text("format") or "string",
            value=r.text("value"),
            default=r.text("default"),
            placeholder=r.text("placeholder"),
            choices=r.strings("choices"),
            variables=variables,
            extra=r.extra(_INPUT_FIELDS),
        )


_INPUT_FIELDS = frozenset(
    """
    name description isRequired isSecret format value default placeholder choices variables
    """.split()
)


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogArgument:
    """A ``runtimeArguments`` or ``packageArguments`` item: ``positional`` (a value) or ``named`` (``--flag value``)."""

    type: str
    """``positional`` or ``named``."""
    input: CatalogInput
    name: str | None = None
    """The flag, with its dashes (named arguments)."""
    value_hint: str | None = None
    """A label for a positional argument; not part of the command line."""
    is_repeated: bool = False

    @classmethod
    def parse(cls, data: Any, where: str) -> "CatalogArgument":
        r = _Reader(data, where)
        kind = r.text("type", required=True)
        if kind not in ("positional", "named"):
            raise CatalogFormatError(f"{where}.type", f'expected "positional" or "named", got {kind!r}')
        name = r.text("name", required=kind == "named")
        plain = {k: v for k, v in r.data.items() if k not in ("type", "name", "valueHint", "isRepeated")}
        return cls(
            type=kind,
            input=CatalogInput.parse(plain, where, named=False),
            name=name,
            value_hint=r.text("valueHint"),
            is_repeated=r.flag("isRepeated"),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogTransport:
    """A package's or remote's ``transport``: ``stdio``, ``streamable-http`` or ``sse``."""

    type: str
    url: str | None = None
    headers: tuple[CatalogInput, ...] = ()
    variables: Mapping[str, CatalogInput] = field(default_factory=dict)
    """URL variables (remotes): ``{tenant}`` in ``url`` is filled from here."""
    extra: JsonObject = field(default_factory=dict)

    @classmethod
    def parse(cls, data: Any, where: str) -> "CatalogTransport":
        r = _Reader(data, where)
        kind = r.text("type", required=True)
        assert kind is not None
        if kind not in ("stdio", "streamable-http", "sse"):
            raise CatalogFormatError(f"{where}.type", f"unknown transport {kind!r} (stdio, streamable-http or sse)")
        url = r.text("url", required=kind != "stdio")
        headers = tuple(CatalogInput.parse(item, w, named=True) for w, item in r.items("headers"))
        return cls(
            type=kind,
            url=url,
            headers=headers,
            variables=r.variables(),
            extra=r.extra(frozenset({"type", "url", "headers", "variables"})),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogPackage:
    """A ``packages[]`` item: how to download and run the server locally."""

    registry_type: str
    """``npm``, ``pypi``, ``oci``, ``mcpb`` (or another registry Kairox cannot install from)."""
    identifier: str
    version: str | None
    """The exact version; the format rejects ranges and ``latest``."""
    transport: CatalogTransport
    registry_base_url: str | None = None
    runtime_hint: str | None = None
    """``npx``, ``uvx``, ``docker`` ...: the program that runs the package."""
    runtime_arguments: tuple[CatalogArgument, ...] = ()
    package_arguments: tuple[CatalogArgument, ...] = ()
    environment_variables: tuple[CatalogInput, ...] = ()
    file_sha256: str | None = None
    extra: JsonObject = field(default_factory=dict)

    @classmethod
    def parse(cls, data: Any, where: str) -> "CatalogPackage":
        r = _Reader(data, where)
        version = r.text("version")
        if version == "latest":
            raise CatalogFormatError(f"{where}.version", '"latest" is not an exact version')
        if "transport" not in r.data:
            raise CatalogFormatError(where, "`transport` is missing")
        return cls(
            registry_type=r.text("registryType", required=True) or "",
            identifier=r.text("identifier", required=True) or "",
            version=version,
            transport=CatalogTransport.parse(r.data["transport"], f"{where}.transport"),
            registry_base_url=r.text("registryBaseUrl"),
            runtime_hint=r.text("runtimeHint"),
            runtime_arguments=tuple(CatalogArgument.parse(item, w) for w, item in r.items("runtimeArguments")),
            package_arguments=tuple(CatalogArgument.parse(item, w) for w, item in r.items("packageArguments")),
            environment_variables=tuple(
                CatalogInput.parse(item, w, named=True) for w, item in r.items("environmentVariables")
            ),
            file_sha256=r.text("fileSha256"),
            extra=r.extra(_PACKAGE_FIELDS),
        )

    @property
    def label(self) -> str:
        """``npm:@scope/name@1.2.3``: which package this is, for messages and ``--package``."""
        return f"{self.registry_type}:{self.identifier}" + (f"@{self.version}" if self.version else "")


_PACKAGE_FIELDS = frozenset(
    """
    registryType identifier version transport registryBaseUrl runtimeHint runtimeArguments packageArguments
    environmentVariables fileSha256
    """.split()
)
_SERVER_FIELDS = frozenset(
    """
    $schema name title description version websiteUrl repository packages remotes icons _meta
    """.split()
)


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogEntry:
    """One MCP server of a catalog: what it is, where it comes from, how it can be run.

    ``packages`` and ``remotes`` are read from ``raw`` when used (a listing of 20,000 entries needs only
    names and descriptions); a malformed one raises :class:`CatalogFormatError` naming its path then.
    """

    id: str
    """``server.json`` ``name``, reverse-DNS: ``io.github.modelcontextprotocol/filesystem``."""
    description: str
    version: str
    title: str | None = None
    website_url: str | None = None
    repository: JsonObject | None = None
    """``url``, ``source``, ``subfolder``, ``id`` as given."""
    tags: tuple[str, ...] = ()
    status: str = "active"
    """The registry's status: ``active``, ``deprecated`` or ``deleted``; only active entries are listed."""
    source: str = "builtin"
    """The catalog source this entry came from."""
    meta: JsonObject = field(default_factory=dict)
    """``_meta`` of the document, and of the registry's response wrapper, as given."""
    extra: JsonObject = field(default_factory=dict)
    """Top-level fields this version of Kairox does not know, kept as they were."""
    raw: JsonObject = field(default_factory=dict, compare=False, repr=False)
    """The whole ``server.json`` document."""
    where: str = field(default="", compare=False, repr=False)
    """Where the document was read (``source[index]``), for messages about it."""

    @property
    def packages(self) -> tuple[CatalogPackage, ...]:
        reader = _Reader(self.raw, self.where or self.id)
        return tuple(CatalogPackage.parse(item, w) for w, item in reader.items("packages"))

    @property
    def remotes(self) -> tuple[CatalogTransport, ...]:
        reader = _Reader(self.raw, self.where or self.id)
        return tuple(CatalogTransport.parse(item, w) for w, item in reader.items("remotes"))

    def _raw_items(self, key: str) -> list[dict[str, Any]]:
        items = self.raw.get(key)
        return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []

    @property
    def package_identifiers(self) -> tuple[str, ...]:
        """The packages' identifiers, read without checking the rest of each package."""
        return tuple(i for p in self._raw_items("packages") if isinstance(i := p.get("identifier"), str))

    @property
    def short_name(self) -> str:
        """The last part of the id, as a server name: ``filesystem``."""
        tail = self.id.rsplit("/", 1)[-1]
        cleaned = "".join(c if c.isalnum() or c in "_-" else "-" for c in tail).strip("-")
        return cleaned or "server"

    @property
    def transports(self) -> tuple[str, ...]:
        """Every transport the entry offers, packages first."""
        kinds = [
            t.get("type") if isinstance(t := p.get("transport"), dict) else None for p in self._raw_items("packages")
        ]
        kinds += [r.get("type") for r in self._raw_items("remotes")]
        return tuple(dict.fromkeys(k for k in kinds if isinstance(k, str)))

    def matches(self, words: list[str]) -> bool:
        """Whether every word occurs in the name, title, description, tags or a package identifier."""
        text = self.search_text
        return all(word in text for word in words)

    @property
    def search_text(self) -> str:
        # the name, not the id's namespace: every `io.github.*` id would match `git`
        parts = [self.short_name, self.title or "", self.description, *self.tags, *self.package_identifiers]
        return " ".join(parts).lower()

    def to_json(self) -> JsonObject:
        """A summary for ``--json`` listings (``raw`` holds the whole document)."""
        labels = []
        for package in self._raw_items("packages"):
            version = package.get("version")
            labels.append(
                f"{package.get('registryType')}:{package.get('identifier')}"
                + (f"@{version}" if isinstance(version, str) else "")
            )
        return {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "version": self.version,
            "source": self.source,
            "status": self.status,
            "website_url": self.website_url,
            "repository": self.repository,
            "transports": list(self.transports),
            "packages": labels,
            "remotes": [r.get("url") for r in self._raw_items("remotes")],
            "tags": list(self.tags),
        }


def parse_entry(
    document: Any, *, source: str, where: str, wrapper_meta: Mapping[str, Any] | None = None
) -> CatalogEntry:
    """A ``CatalogEntry`` from one ``server.json`` document; ``wrapper_meta`` is the registry response's ``_meta``.

    The top level is checked here; ``packages`` and ``remotes`` items when the entry's ``packages`` or
    ``remotes`` are first used.
    """
    r = _Reader(document, where)
    meta = dict(r.table("_meta"))
    for key, value in (wrapper_meta or {}).items():
        meta.setdefault(key, value)
    official = meta.get(OFFICIAL_META)
    status = official.get("status") if isinstance(official, dict) else None
    if status is not None and not isinstance(status, str):
        raise CatalogFormatError(f"{where}._meta.{OFFICIAL_META}.status", f"expected a string, got {_kind(status)}")
    ours = meta.get(KAIROX_META)
    tags = _Reader(ours, f"{where}._meta.{KAIROX_META}").strings("tags") if isinstance(ours, dict) else ()
    repository = r.data.get("repository")
    if repository is not None and not isinstance(repository, dict):
        raise CatalogFormatError(f"{where}.repository", f"expected an object, got {_kind(repository)}")
    for key in ("packages", "remotes"):
        for item_where, item in r.items(key):
            if not isinstance(item, dict):
                raise CatalogFormatError(item_where, f"expected an object, got {_kind(item)}")
    return CatalogEntry(
        id=r.text("name", required=True) or "",
        description=r.text("description", required=True) or "",
        version=r.text("version", required=True) or "",
        title=r.text("title"),
        website_url=r.text("websiteUrl"),
        repository=repository,
        tags=tags,
        status=status or "active",
        source=source,
        meta=meta,
        extra=r.extra(_SERVER_FIELDS),
        raw=r.data,
        where=where,
    )
