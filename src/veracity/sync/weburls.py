"""URL rules of the website crawler: canonical form, same-site test, page-like paths, globs, sitemaps, robots.

Pure functions over strings and bytes; :mod:`veracity.sync.web` does the fetching.
"""

from __future__ import annotations

import posixpath
import re
import zlib
from fnmatch import fnmatchcase
from urllib.parse import quote, urljoin, urlsplit, urlunsplit
from urllib.robotparser import RobotFileParser
from xml.etree import ElementTree

__all__ = [
    "PAGE_SUFFIXES",
    "Origin",
    "looks_like_page",
    "normalize_url",
    "origin_of",
    "origin_text",
    "parse_robots",
    "parse_sitemap",
    "path_of",
    "path_selected",
    "resolve",
]

Origin = tuple[str, str, int]
"""``(scheme, lower-case host, port)``: two URLs are on the same site when these are equal."""

PAGE_SUFFIXES = frozenset({"", ".html", ".htm", ".md", ".txt"})
"""Last-segment suffixes a link must have to be followed (``""``: none, or a trailing ``/``)."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
# characters left as they are when a path or query is re-quoted ("%" so that existing escapes survive)
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = "/?%:@!$&'()*+,;=-._~"
_NUMERIC_SUFFIX = re.compile(r"\.\d+")


def origin_of(url: str) -> Origin | None:
    """The site of an http(s) URL, ``None`` for any other scheme or a malformed URL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port if port is not None else _DEFAULT_PORTS[scheme]


def _netloc(origin: Origin) -> str:
    scheme, host, port = origin
    shown = f"[{host}]" if ":" in host else host
    return shown if port == _DEFAULT_PORTS[scheme] else f"{shown}:{port}"


def origin_text(origin: Origin) -> str:
    """``scheme://host[:port]`` of a site, the port left out when it is the scheme's default."""
    return f"{origin[0]}://{_netloc(origin)}"


def normalize_url(url: str) -> str:
    """The canonical spelling of a URL: no fragment or credentials, lower-case scheme and host.

    The default port is dropped, an empty path becomes ``/``, and characters that may not
    appear in a request line (spaces, non-ASCII) are percent-encoded; the query is kept.
    A URL that is not http(s) only loses its fragment.
    """
    origin = origin_of(url)
    parts = urlsplit(url.strip())
    if origin is None:
        return urlunsplit(parts._replace(fragment=""))
    path = quote(parts.path, safe=_PATH_SAFE) or "/"
    query = quote(parts.query, safe=_QUERY_SAFE)
    return urlunsplit((origin[0], _netloc(origin), path, query, ""))


def resolve(base: str, href: str) -> str | None:
    """``href`` resolved against ``base`` and normalized; ``None`` when it is not an http(s) URL."""
    try:
        joined = urljoin(base, href.strip())
    except ValueError:
        return None
    return normalize_url(joined) if origin_of(joined) is not None else None


def path_of(url: str) -> str:
    """The path of a URL (``/`` when empty), the part include/exclude globs are matched against."""
    return urlsplit(url).path or "/"


def looks_like_page(url: str) -> bool:
    """Whether a link's path names a page: a trailing ``/``, no suffix, or one of :data:`PAGE_SUFFIXES`.

    A purely numeric suffix (``/release-1.2``) counts as none: it is a version, not a file type.
    """
    path = path_of(url)
    if path.endswith("/"):
        return True
    suffix = posixpath.splitext(posixpath.basename(path))[1].lower()
    return suffix in PAGE_SUFFIXES or _NUMERIC_SUFFIX.fullmatch(suffix) is not None


def path_selected(url: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> bool:
    """Whether the URL's path matches an include glob (any, when none are given) and no exclude glob."""
    path = path_of(url)
    if include and not any(fnmatchcase(path, pattern) for pattern in include):
        return False
    return not any(fnmatchcase(path, pattern) for pattern in exclude)


def parse_robots(body: bytes) -> RobotFileParser:
    """A robots.txt parser loaded with ``body`` (empty: everything allowed)."""
    parser = RobotFileParser()
    # parse() also stamps the parser as read; an unread parser would disallow everything
    parser.parse(body.decode("utf-8", errors="replace").splitlines())
    return parser


def _local_name(tag: str) -> str:
    return tag.rpartition("}")[2]


def parse_sitemap(body: bytes, max_bytes: int) -> tuple[bool, list[str]]:
    """``(is_index, loc URLs in document order)`` of a sitemap or sitemap index.

    A gzip-compressed body is inflated first, to at most ``max_bytes``. Raises ``ValueError``
    when the body is not a well-formed sitemap.
    """
    if body[:2] == b"\x1f\x8b":
        try:
            inflater = zlib.decompressobj(wbits=31)
            body = inflater.decompress(body, max_bytes + 1)
        except zlib.error as error:
            raise ValueError(f"bad gzip data: {error}") from error
        if len(body) > max_bytes:
            raise ValueError(f"more than {max_bytes:,} bytes once inflated")
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as error:
        raise ValueError(f"not XML: {error}") from error
    kind = _local_name(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        raise ValueError(f"root element <{kind}> is neither <urlset> nor <sitemapindex>")
    locs = [
        element.text.strip()
        for element in root.iter()
        if _local_name(element.tag) == "loc" and element.text and element.text.strip()
    ]
    return kind == "sitemapindex", locs
