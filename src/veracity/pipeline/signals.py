"""Signals of an instruction aimed at the model, per sentence window of a text.

Layers, each explainable:

1. :func:`veracity.text.reveal.reveal` makes hidden text plain and names the
   hiding tricks it undid;
2. the revealed text is cut into sentences; each sentence is read with the two
   before it (and the heading above), so an order split across sentences, or
   addressed in a heading, is read whole;
3. each window gets named binary features: which cue families
   (:mod:`veracity.pipeline.cues`) occur, and which *combinations* occur: an
   override verb with a rule noun, a disclosure verb with a secret, an address
   to the model with a request, an exclusivity claim about this page, a role
   claim, a persona reassignment, fake message framing, hidden delivery... and
   the context that makes the same words ordinary: a reporting or example frame,
   a quotation, an operational object (a log, a notice, a table), a
   permission rather than an order, a protective "do not disclose".

The scorer (:mod:`veracity.pipeline.injection`) weighs these features; nothing
here decides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..text.reveal import plain, reveal
from .cues import FRAMING, PATTERNS, QUOTED

FEATURES: Final = (
    # single families: weak evidence alone
    "addressee",
    "override",
    "control",
    "secret",
    "exclusive",
    "authority",
    "request",
    "disclose",
    # combinations: what an order to the model looks like
    "vocative",
    "addressed_directive",
    "addressed_request",
    "conditional_ai",
    "framing",
    "override_control",
    "override_prior_control",
    "override_source",
    "exclusive_source",
    "self_reference_directive",
    "reframe_source",
    "disclose_secret",
    "requested_disclosure",
    "authority_claim",
    "role_change",
    "identity",
    "persistent_directive",
    "second_person_directive",
    "respond_to_user",
    "dictated_answer",
    "hidden_directive",
    "obfuscated",
    "hidden_markup",
    # context: the same words, not an order to the model
    "reporting",
    "quoted_directive",
    "operational",
    "permission",
    "protective",
    "audience_restriction",
)

_DIRECTIVE_FAMILIES: Final = ("override", "reframe", "disclose", "respond", "obey")
# A verbatim answer handed over: an answer verb, then a colon or an opening quote.
_DICTATED = re.compile(
    r"(?:answer|reply|respond|say|state)\w*\s*(?:with|is)?\s*[:：\"“「]|(?:回答|回复|答复|说)\s*[:：\"“「]"
)
_NEGATION = re.compile(
    r"(?:\bnot|\bnever|n't|\bno\b|\bne\b|\bnicht|\bnunca|\bjamais|\bnao|不|勿|别|禁止|不得|严禁|切勿|不能|不可)\W{0,3}"
    r"(?:\w+\W+){0,2}$"
)
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)(?=\s)|\n+")
_OBFUSCATION: Final = frozenset({"zero_width", "bidi", "spaced", "confusable", "tag_characters", "encoded"})
_MARKUP: Final = frozenset({"comment", "hidden_element"})


@dataclass(frozen=True, slots=True)
class Window:
    """One sentence read with its context: its features and where it sits."""

    index: int
    hidden: bool
    features: frozenset[str]


def sentences(text: str) -> list[str]:
    """Sentences of revealed text (cut after sentence marks and at line breaks)."""
    return [piece.strip() for piece in _SENTENCE_END.split(text) if piece and piece.strip()]


def _families(text: str) -> set[str]:
    return {name for name, pattern in PATTERNS.items() if pattern.search(text)}


def _near(text: str, first: str, second: tuple[str, ...], gap: int = 16) -> bool:
    """A ``first`` cue followed within ``gap`` characters by a cue of a ``second`` family."""
    for match in PATTERNS[first].finditer(text):
        tail = text[match.end() : match.end() + gap + 24]
        for family in second:
            found = PATTERNS[family].search(tail)
            if found is not None and found.start() <= gap:
                return True
    return False


def _quoted_directive(text: str) -> bool:
    return any(
        any(PATTERNS[f].search(span.group(0)) for f in (*_DIRECTIVE_FAMILIES, "control", "addressee"))
        for span in QUOTED.finditer(text)
    )


def _reported(sentence: str) -> tuple[str, bool]:
    """The sentence with its quotations blanked when it reports them (a reporting word outside the
    quotes: "attackers post text such as '...'"), and whether it did. The order inside a reported
    quotation is the author's example, not the author's order; ``quoted_directive`` keeps a trace."""
    outside = QUOTED.sub(" ", sentence)
    if outside == sentence or not PATTERNS["reporting"].search(outside):
        return sentence, False
    return outside, True


def _negated_only(sentence: str, family: str) -> bool:
    """Every cue of ``family`` in the sentence is negated ("must not reveal", "不得转发")."""
    matches = list(PATTERNS[family].finditer(sentence))
    return bool(matches) and all(
        _NEGATION.search(sentence[max(0, m.start() - 12) : m.start()]) for m in matches
    )


def _window_features(
    sentence: str, context: str, hidden: bool, tricks: frozenset[str]
) -> frozenset[str]:
    quoted = _quoted_directive(sentence)
    sentence, reported = _reported(sentence)
    here = _families(sentence)
    if "disclose" in here and _negated_only(sentence, "disclose"):
        here -= {"disclose"}  # a prohibition to disclose is not a request to
    around = _families(context) | here
    directive = bool(here & set(_DIRECTIVE_FAMILIES))
    # Spoken *to* the model, not *about* it: a vocative, a conditional "if you are an AI", a fake
    # header, a request word right before the model's name, the model's name right before a modal,
    # or the model's name with "you".
    addressed = (
        bool({"vocative", "conditional_ai"} & around)
        or bool(FRAMING.search(context + "\n" + sentence))
        or _near(sentence, "request", ("addressee",), gap=12)
        or _near(sentence, "addressee", ("request",), gap=6)
        or {"addressee", "second_person"} <= here
    )
    found = {name for name in ("addressee", "override", "control", "secret", "exclusive", "authority",
                               "request", "disclose") if name in here}  # fmt: skip
    combos = {
        "addressed_directive": addressed and directive,
        "addressed_request": addressed and "request" in around,
        "vocative": "vocative" in around,
        "conditional_ai": "conditional_ai" in around,
        "framing": bool(FRAMING.search(context + "\n" + sentence)),
        "override_control": "override" in here and "control" in around,
        "override_prior_control": {"override", "control", "prior"} <= here,
        "override_source": "override" in here and bool({"source", "self_reference"} & here),
        "exclusive_source": "exclusive" in here and bool({"source", "self_reference"} & here),
        "self_reference_directive": "self_reference" in here
        and bool({"reframe", "obey", "exclusive"} & here),
        "reframe_source": "reframe" in here and bool({"source", "self_reference", "first_person"} & here),
        "disclose_secret": "disclose" in here and "secret" in here,
        "requested_disclosure": {"disclose", "secret", "request"} <= here,
        "authority_claim": "authority" in here and bool({"first_person", "reframe", "identity"} & here),
        "role_change": "role_change" in here,
        "identity": "identity" in here,
        "persistent_directive": "persistence" in here and directive,
        "second_person_directive": "second_person" in here
        and bool({"override", "reframe", "obey"} & here),
        "respond_to_user": "respond" in here
        and "user_mention" in here
        and bool({"request", "persistence"} & around),
        # a verbatim answer handed over for whoever asks next: "when users ask X, always answer: Y"
        "dictated_answer": bool(_DICTATED.search(sentence))
        and (
            bool({"persistence", "user_mention"} & here)
            or _near(sentence, "request", ("respond",), gap=4)
            or _near(sentence, "exclusive", ("respond",), gap=4)
        ),
        "hidden_directive": hidden and (directive or addressed),
        "obfuscated": bool(tricks & _OBFUSCATION),
        "hidden_markup": bool(tricks & _MARKUP),
        "reporting": "reporting" in around,
        "quoted_directive": quoted and reported,
        "audience_restriction": "audience_restriction" in around,
        # the object of the verb is a log, a notice, a table...: "print the system log"
        "operational": "operational" in here
        and any(_near(sentence, family, ("operational",), gap=14) for family in _DIRECTIVE_FAMILIES),
        "permission": _near(sentence, "permission", _DIRECTIVE_FAMILIES) if "permission" in here else False,
        "protective": "protective" in here and "secret" in here and not addressed,
    }
    return frozenset(found | {name for name, on in combos.items() if on})


def windows(text: str, heading_path: Sequence[str] = ()) -> list[Window]:
    """Every sentence window of ``text`` (read under ``heading_path``) with its features."""
    revealed = reveal(text)
    heading = plain(" / ".join(heading_path))
    found: list[Window] = []
    index = 0
    for segment in revealed.segments:
        parts = sentences(segment.text)
        for position, sentence in enumerate(parts):
            before = parts[max(0, position - 2) : position]
            context = "\n".join([*([heading] if heading else []), *before])
            features = _window_features(sentence, context, segment.hidden, revealed.tricks)
            found.append(Window(index=index, hidden=segment.hidden, features=features))
            index += 1
    return found


def vector(features: frozenset[str]) -> list[float]:
    """The features as a 0/1 vector in :data:`FEATURES` order."""
    return [1.0 if name in features else 0.0 for name in FEATURES]
