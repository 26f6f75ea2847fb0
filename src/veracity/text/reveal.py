"""Reveal what a text hides from its human reader, so that it can be inspected.

Text that tries to steer a model often hides from the person who reviews it:
in HTML comments or invisible elements, between zero-width or bidi control
characters, in Unicode tag characters, as base64 / hex / percent-encoded runs,
with letters spaced apart (``忽 略 之 前``, ``i g n o r e``), with Cyrillic or
Greek look-alike letters inside Latin words, or in traditional characters where
a reader of simplified ones would look. :func:`reveal` undoes each of these and
returns what a model would read, as segments:

- the visible text (NFKC, controls removed, markup stripped, spacing joined,
  look-alikes, accents and traditional characters folded, case folded);
- each hidden or decoded piece as its own segment, marked ``hidden``.

It also names the tricks it undid (``Revealed.tricks``): hiding is itself a
signal. Nothing here decides whether the text gives orders; it only makes the
text plain. Language-generic: no word lists, only scripts and encodings.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote

from .hant import fold_traditional
from .scripts import BIDI_RANGES, HAN_RANGES, ZERO_WIDTH_RANGES

_ZERO_WIDTH = re.compile(f"[{ZERO_WIDTH_RANGES}]")
_BIDI = re.compile(f"[{BIDI_RANGES}]")
_TAG_CHARACTERS = re.compile("[\U000e0000-\U000e007f]+")
_HTML_COMMENT = re.compile(r"<!--(.*?)(?:-->|$)", re.DOTALL)
_MARKDOWN_COMMENT = re.compile(r"^\[(?://|comment|_)\]:\s*(?:#|<>)\s*[(\"'](.*?)[)\"']\s*$", re.MULTILINE)
_HIDDEN_ELEMENT = re.compile(
    r"<(?P<tag>[a-z][a-z0-9]*)\b(?P<attrs>[^>]*)>(?P<body>.*?)</(?P=tag)\s*>", re.IGNORECASE | re.DOTALL
)
_HIDING_ATTRIBUTE = re.compile(
    r"\bhidden\b|aria-hidden\s*=\s*[\"']?true|display\s*:\s*none|visibility\s*:\s*hidden"
    r"|font-size\s*:\s*0(?:\.0*)?(?:px|pt|em|rem|%)?\s*(?:;|[\"'])|opacity\s*:\s*0(?:\.0*)?\s*(?:;|[\"'])"
    r"|color\s*:\s*(?:#fff(?:fff)?|white|transparent)\b|(?:width|height)\s*:\s*0(?:px)?\s*(?:;|[\"'])",
    re.IGNORECASE,
)
# a tag that closes the model's context is kept as text (see _tag_to_text)
_CONTEXT_END_TAG = re.compile(
    r"</\s*(?:context|documents?|retrieved[\w-]*|search[_-]?results|sources?|knowledge)\s*>", re.IGNORECASE
)
# a doubled bracket is chat-template framing (<<SYS>>), not an HTML tag: left for the framing cue
_TAG = re.compile(r"(?<!<)</?[a-z][a-z0-9]*\b[^<>]*>(?!>)|<![a-z][^<>]*>", re.IGNORECASE)
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]?){12,}(?![0-9A-Fa-f])")
# A URL-encoded token: three escapes or more among the characters a query string uses.
_PERCENT_RUN = re.compile(r"[\w.~+\-]*(?:%[0-9A-Fa-f]{2}[\w.~+\-]*){3,}")
_ESCAPE_RUN = re.compile(r"(?:\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}){4,}")
# Single letters separated by one space or mark, four or more: "i g n o r e", "忽 略 之 前".
_SPACED_LATIN = re.compile(r"(?<![\w])(?:[^\W\d_][ .\-_*·]){2,}[^\W\d_](?![\w])")
_SPACED_CJK = re.compile(
    rf"(?<![{HAN_RANGES}])(?:[{HAN_RANGES}][ \u3000.\-_*·]+){{2,}}"
    rf"[{HAN_RANGES}](?![{HAN_RANGES}])"
)
_WORD = re.compile(r"\w+")
# Cyrillic and Greek letters that look like Latin ones, folded only inside words that mix scripts.
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁԛԝӏвнкмтАВЕКМНОРСТХУІЈЅαεικνοτυρΑΒΕΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdqwlbhkmtABEKMHOPCTXYIJSaeikvotupABEHIKMNOPTYX",
)


# Latin letters without their accents ("énumère" and "énumérer" share "enumer"): word lists are
# written in dictionary form, and conjugation moves accents. Only Latin letters: Japanese voicing
# marks and Hangul must not be decomposed.
_ACCENTS = {
    code: "".join(c for c in unicodedata.normalize("NFD", chr(code)) if not unicodedata.combining(c))
    for code in range(0x00C0, 0x0250)
}


def fold_accents(text: str) -> str:
    """``text`` with accents dropped from Latin letters (other scripts untouched)."""
    return text.translate(_ACCENTS)


def fold_pattern(pattern: str) -> str:
    """A regex written over folded text, folded the same way (accents, traditional characters),
    so that "開示" in a word list meets "开示" in the text; case and regex syntax are left alone."""
    return fold_accents(fold_traditional(pattern))


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of the revealed text; ``hidden`` when a human reader would not have seen it."""

    text: str
    hidden: bool


@dataclass(frozen=True, slots=True)
class Revealed:
    """What a model reads in a text, and which hiding tricks were undone to get there."""

    segments: tuple[Segment, ...]
    tricks: frozenset[str]

    @property
    def text(self) -> str:
        """Every segment, visible first, one per line."""
        return "\n".join(segment.text for segment in self.segments)


def _printable_share(text: str) -> float:
    if not text:
        return 0.0
    good = sum(1 for ch in text if ch.isprintable() or ch in "\n\t")
    letters = sum(1 for ch in text if ch.isalpha())
    return good / len(text) if letters >= len(text) * 0.4 else 0.0


def _decoded(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if _printable_share(text) >= 0.9 and len(text.strip()) >= 6 else None


def _decode_base64(run: str) -> str | None:
    stripped = run.rstrip("=")
    if len(stripped) < 16 or stripped.isdigit() or (stripped.isalpha() and stripped.islower()):
        return None  # a plain word, path or number, not an encoding
    padded = stripped + "=" * (-len(stripped) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            found = _decoded(decode(padded))
        except (binascii.Error, ValueError):
            continue
        if found is not None:
            return found
    return None


def _decode_hex(run: str) -> str | None:
    try:
        return _decoded(bytes.fromhex(re.sub(r"[ :]", "", run)))
    except ValueError:
        return None


def _decode_escapes(run: str) -> str | None:
    try:
        return _decoded(run.encode("ascii").decode("unicode_escape").encode("utf-8"))
    except (UnicodeDecodeError, UnicodeEncodeError):
        return None


def _encoded_pieces(text: str) -> list[str]:
    pieces = []
    for pattern, decode in (
        (_BASE64_RUN, _decode_base64),
        (_HEX_RUN, _decode_hex),
        (_ESCAPE_RUN, _decode_escapes),
    ):
        for match in pattern.finditer(text):
            found = decode(match.group(0))
            if found is not None:
                pieces.append(found)
    for match in _PERCENT_RUN.finditer(text):
        try:
            found = unquote(match.group(0).replace("+", " "), errors="strict")
        except UnicodeDecodeError:
            continue
        if _printable_share(found) >= 0.9:
            pieces.append(found)
    return pieces


def _fold_confusables(text: str) -> tuple[str, bool]:
    changed = False

    def fold(match: re.Match[str]) -> str:
        nonlocal changed
        word = match.group(0)
        has_latin = any("a" <= ch.lower() <= "z" for ch in word)
        folded = word.translate(_CONFUSABLES)
        if has_latin and folded != word:
            changed = True
            return folded
        return word

    return _WORD.sub(fold, text), changed


def _join_spaced(text: str) -> tuple[str, bool]:
    changed = False

    def join(match: re.Match[str]) -> str:
        nonlocal changed
        changed = True
        return re.sub(r"[ \u3000.\-_*·]+", "", match.group(0))

    text = _SPACED_CJK.sub(join, text)
    # Spaced Latin words are separated by wider gaps ("i g n o r e   a l l"): keep those as one space.
    text = _SPACED_LATIN.sub(join, text)
    return text, changed


def _hidden_markup(text: str, tricks: set[str]) -> tuple[str, list[str]]:
    hidden: list[str] = []

    def comment(match: re.Match[str]) -> str:
        tricks.add("comment")
        hidden.append(match.group(1))
        return "\n"

    text = _HTML_COMMENT.sub(comment, text)
    text = _MARKDOWN_COMMENT.sub(comment, text)

    def element(match: re.Match[str]) -> str:
        if _HIDING_ATTRIBUTE.search(match.group("attrs")):
            tricks.add("hidden_element")
            hidden.append(_TAG.sub(" ", match.group("body")))
            return " "
        return match.group(0)

    previous = None
    while previous != text:  # nested hidden elements
        previous, text = text, _HIDDEN_ELEMENT.sub(element, text)
    return _TAG.sub(_tag_to_text, text), hidden


def _tag_to_text(match: re.Match[str]) -> str:
    """Markup is dropped, except a tag that closes the model's context ("</context>"): a fake end of
    the retrieved material is framing, kept on a line of its own for the framing cue."""
    return "\n" + match.group(0) + "\n" if _CONTEXT_END_TAG.fullmatch(match.group(0)) else " "


def plain(text: str) -> str:
    """NFKC, controls dropped, look-alikes, accents and traditional characters folded, case folded."""
    text = unicodedata.normalize("NFKC", text)
    text = _BIDI.sub("", _ZERO_WIDTH.sub("", text))
    text, _ = _fold_confusables(text)
    return fold_accents(fold_traditional(text).casefold())


def reveal(text: str) -> Revealed:
    """The segments a model would read in ``text`` and the tricks undone (see the module docstring)."""
    tricks: set[str] = set()
    text = unicodedata.normalize("NFKC", text)
    hidden: list[str] = []

    def tag_characters(match: re.Match[str]) -> str:
        tricks.add("tag_characters")
        hidden.append("".join(chr(ord(ch) - 0xE0000) for ch in match.group(0)))
        return " "

    text = _TAG_CHARACTERS.sub(tag_characters, text)
    if _ZERO_WIDTH.search(text):
        tricks.add("zero_width")
        text = _ZERO_WIDTH.sub("", text)
    if _BIDI.search(text):
        tricks.add("bidi")
        text = _BIDI.sub("", text)
    text, markup = _hidden_markup(text, tricks)
    hidden.extend(markup)
    decoded = _encoded_pieces(text) + [piece for item in hidden for piece in _encoded_pieces(item)]
    if decoded:
        tricks.add("encoded")
    segments = []
    for content, is_hidden in [(text, False), *((h, True) for h in [*hidden, *decoded])]:
        content = unicodedata.normalize("NFKC", content)
        content, spaced = _join_spaced(content)
        content, confusable = _fold_confusables(content)
        if spaced:
            tricks.add("spaced")
        if confusable:
            tricks.add("confusable")
        content = fold_accents(fold_traditional(content).casefold()).strip()
        if content:
            segments.append(Segment(content, is_hidden))
    return Revealed(tuple(segments), frozenset(tricks))
