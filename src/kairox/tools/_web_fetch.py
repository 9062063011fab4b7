"""``web.fetch`` (A6): a web page as readable text (HTML made markdown by ``markdownify``), a text or JSON document
as it is. Behind the gate like every tool: the policy decides on the URL's host (``web.fetch(domain:HOST)`` rules;
loopback, link-local and private hosts ask, cloud metadata hosts are refused, unless an allow rule names them).
Here, at the call, each hop is checked again on the addresses its name resolves to, and the connection goes to
the address that was checked (a name that resolves to a private address is refused unless a rule names it); a
redirect to another host is not followed but told, so the model's next call passes the gate for that host."""

import ipaddress
import re
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio

from kairox._util._json import JsonObject
from kairox.errors import ToolCallError
from kairox.tools._model import Access, PermissionProfile, ToolResult, ToolSource, ToolSpec, object_schema

MAX_BYTES = 5_000_000
"""What is read of a response at most; the rest is cut (the registry's output cap then applies to the text)."""
MAX_REDIRECTS = 5
METADATA_HOSTS = frozenset(
    {"169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "metadata.google.internal", "metadata"}
)
"""Cloud instance metadata endpoints (AWS, ECS, GCP, Alibaba): refused unless an allow rule names them."""

WEB_FETCH_SPEC = ToolSpec(
    name="web.fetch",
    description=(
        "Fetch a web page (http or https) and return it as markdown; text and JSON documents come back as they "
        "are. A redirect to another host is not followed: the result names the new URL to fetch."
    ),
    input_schema=object_schema({"url": {"type": "string", "description": "The http(s) URL to fetch."}}, ["url"]),
    source=ToolSource.BUILTIN,
    origin="builtin",
    permission=PermissionProfile(access=Access.READ, open_world=True),
    meta={"url_argument": "url"},
)

HostKind = Literal["metadata", "private"]


def host_kind(host: str) -> HostKind | None:
    """``metadata`` for a cloud metadata host, ``private`` for ``localhost`` and any address that is not global
    (loopback, link-local, private, shared, reserved), None for a public address or a name."""
    name = host.strip("[]").rstrip(".").lower()
    if name in METADATA_HOSTS:
        return "metadata"
    if name == "localhost" or name.endswith(".localhost"):
        return "private"
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if str(address) in METADATA_HOSTS:
        return "metadata"
    return None if address.is_global else "private"


def url_host(url: object) -> str | None:
    """The host of an http(s) URL, lower case; None for anything else."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return parts.hostname if parts.scheme in ("http", "https") and parts.hostname else None


def _listed(host: str, domains: tuple[str, ...]) -> bool:
    """``pypi.org`` names that host, ``*.example.com`` the names below it (as ``sandbox.allowed_domains`` reads)."""
    return any(fnmatchcase(host, d.lower()) for d in domains)


def rule_hosts(rules: Iterable[Any]) -> tuple[str, ...]:
    """The host globs of the allow rules ``web.fetch(domain:HOST)``: names that may resolve to a private address."""
    found = (_DOMAIN_RULE.fullmatch(str(r.pattern).strip()) for r in rules if str(r.action) == "allow")
    return tuple(m.group(1).strip().lower() for m in found if m)


_DOMAIN_RULE = re.compile(r"web\.fetch\s*\(\s*domain:([^()]+)\)")


async def fetch_page(arguments: JsonObject, *, allowlist: tuple[str, ...] | None, named: tuple[str, ...]) -> ToolResult:
    """``named``: the hosts allow rules name (:func:`rule_hosts`), which may resolve to a private address (one
    written in the URL was decided by the gate already)."""
    import httpx

    url = str(arguments.get("url", "")).strip()
    if url_host(url) is None:
        raise ToolCallError(tool="web.fetch", reason=f"{url!r} is not an http(s) URL with a host")
    first = url_host(url)
    async with httpx.AsyncClient(timeout=30.0, follow_redirects=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            target = httpx.URL(url)
            host = target.host.lower()
            if host != first:
                return ToolResult.text(
                    f"{arguments['url']} redirects to {url}, on another host; call web.fetch with that URL to read it"
                )
            if allowlist is not None and not _listed(host, allowlist):
                raise ToolCallError(
                    tool="web.fetch",
                    reason=f"{host} is not in sandbox.allowed_domains (the sandbox's network is an allowlist)",
                    hint=f"add {host} to sandbox.allowed_domains in your user configuration",
                )
            port = target.port or (443 if target.scheme == "https" else 80)
            address = await _checked_address(host, port, lambda name: _listed(name, named))
            request = client.build_request(
                "GET",
                target.copy_with(host=address),
                headers={"Host": target.netloc.decode("ascii"), "Accept": "text/html, text/*;q=0.9, */*;q=0.5"},
                extensions={"sni_hostname": host} if target.scheme == "https" else {},
            )
            try:
                response = await client.send(request, stream=True)
                try:
                    if response.is_redirect and "location" in response.headers:
                        url = str(target.join(response.headers["location"]))
                        continue
                    body = bytearray()
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > MAX_BYTES:
                            break
                finally:
                    await response.aclose()
            except httpx.HTTPError as exc:
                raise ToolCallError(tool="web.fetch", reason=f"{url} could not be fetched: {exc}") from exc
            return _page(url, response, bytes(body))
    raise ToolCallError(tool="web.fetch", reason=f"{arguments['url']} redirects more than {MAX_REDIRECTS} times")


async def _checked_address(host: str, port: int, names_private: Callable[[str], bool]) -> str:
    kind = host_kind(host)
    if kind is not None:  # written in the URL: the gate asked about it, or a rule named it
        return host.strip("[]")
    try:
        found = await anyio.getaddrinfo(host, port)
    except OSError as exc:
        raise ToolCallError(tool="web.fetch", reason=f"{host} could not be resolved: {exc}") from exc
    addresses = [str(info[4][0]) for info in found]
    for address in addresses:
        if host_kind(address) is not None and not names_private(host):
            raise ToolCallError(
                tool="web.fetch",
                reason=f"{host} resolves to {address}, a {host_kind(address)} address",
                hint=f"an allow rule naming it lets web.fetch reach it: web.fetch(domain:{host})",
            )
    return addresses[0]


def _page(url: str, response: Any, body: bytes) -> ToolResult:
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    cut = len(body) > MAX_BYTES
    text = body[:MAX_BYTES].decode(response.encoding or "utf-8", errors="replace")
    title = None
    if "html" in kind:
        title, text = _markdown(text)
    elif not (kind.startswith("text/") or kind.endswith(("json", "xml")) or not kind):
        return ToolResult.error(f"{url} is {kind} ({len(body)} bytes), not text; web.fetch returns text documents")
    note = f"\n\n[web.fetch: only the first {MAX_BYTES} bytes were read]" if cut else ""
    head = f"# {title}\n" if title else ""
    return ToolResult.text(
        f"{head}URL: {url} ({response.status_code}, {kind or 'no content type'})\n\n{text.strip()}{note}",
        # the structured form carries the page itself: hosts that show only structuredContent show the document
        structured={
            "url": url,
            "status": response.status_code,
            "content_type": kind,
            "title": title,
            "content": text.strip(),
            "truncated": cut,
        },
    )


def _markdown(html: str) -> tuple[str | None, str]:
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    for tag in soup(["head", "script", "style", "noscript", "svg", "iframe", "template"]):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    return title or None, re.sub(r"\n{3,}", "\n\n", text)
