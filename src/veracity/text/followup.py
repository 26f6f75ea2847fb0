"""A follow-up question resolved against the turn before it, so that it can be asked alone.

"What about the Enterprise plan?" after "Can Team plans use SAML?" is asked as "Can Enterprise
plan use SAML?"; "那 2.8 呢？" after "3.2 的 Team 计划能用 SAML 吗？" as "2.8 的 Team 计划能用
SAML 吗？". Only the shape of the question is read, never the documents:

- a follow-up is **elliptical** when it opens with a follow-up phrase ("what about", "how
  about", "and", "那", "那么", "还有") or closes with "呢"; what remains is its subject;
- a subject that is a **version** replaces the version the previous question names (or, when it
  names none, becomes the version asked about);
- another subject replaces the previous question's phrase with the **same head word** (its
  last word, compared without case or a plural "s"; in Chinese the same characters), together
  with as many words before it as the subject has modifiers ("Team plans" → "Enterprise
  plan"); an acronym replaces the previous question's only acronym ("SAML" → "SCIM");
- a follow-up that is not elliptical, or whose subject has no counterpart, is asked as it was
  written; the version asked about last is carried over unless the follow-up names one.

The resolved question is then asked like any other (every gate applies); earlier answers are
never evidence. The result says what was carried, so a reader sees how the question was read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from .scripts import HAN_RANGES

__all__ = ["Resolved", "resolve_followup"]

_LEAD: Final = re.compile(
    r"^\s*(?:and\s+)?(?:what|how)\s+about\s+|^\s*what\s+of\s+|^\s*(?:and|also)\s+(?:for\s+)?|^\s*same\s+for\s+"
    r"|^\s*(?:那么|那|还有|另外|对于|如果是)\s*",
    re.IGNORECASE,
)
"""Follow-up phrases (grammar only) that open an elliptical question."""
_TRAIL: Final = re.compile(r"\s*(?:呢|then)?\s*[?？.。!！]*\s*$", re.IGNORECASE)
_ARTICLE: Final = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_VERSION: Final = re.compile(r"(?<![\w.])v?(\d+(?:\.(?:\d+|x|\*))+)(?![\w.])", re.IGNORECASE)
"""A version written in a question: ``3.2``, ``v2.8.1``, and a series such as ``2.x`` or ``3.*``."""
_VERSION_WORDS: Final = re.compile(r"^(?:version|release|版本)\s*|\s*(?:版本|版)$", re.IGNORECASE)
_ACRONYM: Final = re.compile(r"[A-Z][A-Z0-9]{1,9}")
_SEGMENT: Final = re.compile(rf"[{HAN_RANGES}]+|[^\s{HAN_RANGES}?？,，.。!！;；:：()（）]+")


@dataclass(frozen=True, slots=True)
class Resolved:
    """The question to ask, the version to ask about, and what was carried from the turn before.

    ``carried`` holds ``subject`` (the previous phrase and what replaced it) and ``version``
    when they came from the previous turn; empty when the follow-up was asked as written.
    """

    question: str
    version: str | None
    carried: dict[str, str] = field(default_factory=dict)


def _singular(word: str) -> str:
    word = word.casefold()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _subject(question: str) -> str | None:
    """The subject of an elliptical follow-up, or ``None`` when the question is not one."""
    opened = _LEAD.search(question)
    closed = re.search(r"呢\s*[?？]*\s*$", question)
    if not opened and not closed:
        return None
    subject = question[opened.end() if opened else 0 :]
    subject = _ARTICLE.sub("", _TRAIL.sub("", subject)).strip()
    return subject or None


def _version_of(subject: str) -> str | None:
    """The version a follow-up asks about ("那 3.2 呢？"): a concrete one (a series is no version
    an ask can take)."""
    found = _VERSION.fullmatch(_VERSION_WORDS.sub("", subject).strip())
    return found.group(1) if found and found.group(1)[-1].isdigit() and "*" not in found.group(1) else None


def _replace_subject(previous: str, subject: str) -> tuple[str, str] | None:
    """``previous`` with its phrase matching ``subject`` replaced, and that phrase; else ``None``."""
    words = [m for m in _SEGMENT.finditer(subject)]
    if not words:
        return None
    head = words[-1].group()
    if re.fullmatch(rf"[{HAN_RANGES}]+", head):
        at = previous.find(head)
        if at < 0:
            return None
        end = at + len(head)
        before = [m for m in _SEGMENT.finditer(previous[:at])]
    else:
        found = next(
            (m for m in _SEGMENT.finditer(previous) if _singular(m.group()) == _singular(head)), None
        )
        if found is None:
            return None
        at, end = found.start(), found.end()
        before = [m for m in _SEGMENT.finditer(previous[:at])]
    modifiers = len(words) - 1
    if modifiers > len(before):
        return None
    start = before[-modifiers].start() if modifiers else at
    phrase = previous[start:end]
    if phrase.casefold() == subject.casefold():
        return None
    return previous[:start] + subject + previous[end:], phrase


def _replace_acronym(previous: str, subject: str) -> tuple[str, str] | None:
    """An acronym subject ("SCIM") in place of the previous question's one acronym ("SAML")."""
    if not _ACRONYM.fullmatch(subject):
        return None
    found = [m for m in _SEGMENT.finditer(previous) if _ACRONYM.fullmatch(m.group())]
    if len(found) != 1 or found[0].group() == subject:
        return None
    return previous[: found[0].start()] + subject + previous[found[0].end() :], found[0].group()


def resolve_followup(question: str, previous: str | None, previous_version: str | None, version: str | None
                     ) -> Resolved:  # fmt: skip
    """``question`` resolved against the previous turn's resolved question and version.

    ``version`` is the one the follow-up was asked with (``None``: not given). Without a
    previous turn the question is asked as written.
    """
    question = question.strip()
    if previous is None:
        return Resolved(question, version)
    subject = _subject(question)
    carried: dict[str, str] = {}
    if subject is not None and (named := _version_of(subject)) is not None:
        in_text = _VERSION.search(previous)
        if in_text is not None:
            resolved = previous[: in_text.start(1)] + named + previous[in_text.end(1) :]
            carried["subject"] = f"{in_text.group(1)} → {named}"
            # the version asked about follows the text only when the previous turn named one too
            asked = version if version is not None else (named if previous_version else None)
            return Resolved(resolved, asked, carried)
        carried["subject"] = f"version → {named}"
        return Resolved(previous, version or named, carried)
    resolved = question
    if subject is not None and (
        replaced := _replace_subject(previous, subject) or _replace_acronym(previous, subject)
    ):
        resolved, phrase = replaced
        carried["subject"] = f"{phrase} → {subject}"
    if version is None and previous_version is not None and _VERSION.search(resolved) is None:
        version = previous_version
        carried["version"] = previous_version
    return Resolved(resolved, version, carried)
