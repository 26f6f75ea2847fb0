"""Signals of an instruction aimed at the model, per sentence window of a text.

Layers, each explainable:

1. :func:`veracity.text.reveal.reveal` makes hidden text plain and names the
   hiding tricks it undid;
2. the revealed text is cut into sentences; each sentence is read with the two
   before it (and the heading above), so an order split across sentences, or
   addressed in a heading, is read whole;
3. each window gets named binary features: which cue families
   (:mod:`veracity.pipeline.injection.cues`) occur, and which *combinations* occur: an
   override verb with a rule noun, a disclosure verb with a secret, an address
   to the model with a request, an exclusivity claim about this page, a role
   claim, a persona reassignment, fake message framing, hidden delivery... and
   the context that makes the same words ordinary: a reporting or example frame,
   a quotation, an operational object (a log, a notice, a table), a
   permission rather than an order, a protective "do not disclose", code
   (documentation talks of tokens to get and options to ignore).

The scorer (:mod:`veracity.pipeline.injection.detector`) weighs these features; nothing
here decides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ...text.reveal import fold_pattern, plain, reveal
from ...text.scripts import CJK, HAN_RANGES
from ...text.sentences import sentence_texts
from .address import MODEL_TURN, USER_TURN, described_model, direct_address, spoken_subject, you_beside_name
from .cues import FRAMING, PATTERNS, QUOTED
from .presence import PRESENCE

# single families: weak evidence alone
SINGLE_FEATURES: Final = (
    "addressee",
    "override",
    "control",
    "secret",
    "exclusive",
    "authority",
    "request",
    "disclose",
)
# combinations: what an order to the model looks like
COMBINATION_FEATURES: Final = (
    "vocative",
    "addressed_directive",
    "addressed_request",
    "conditional_ai",
    "framing",
    "override_control",
    "override_prior_control",
    "override_source",
    "supersede_source",
    "exclusive_source",
    "self_reference_directive",
    "reframe_source",
    "disclose_secret",
    "requested_disclosure",
    "disclose_secret_reader",
    "shapes_answer",
    "output_directive",
    "answer_form_change",
    "conceal_instruction",
    "fake_turn",
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
)
# context: the same words, not an order to the model
CONTEXT_FEATURES: Final = (
    "reporting",
    "quoted_directive",
    "operational",
    "permission",
    "protective",
    "audience_restriction",
    "defers_to_official",
    "to_a_person",
    "long_sentence",
    "describes_model",
    "technical",
)
FEATURES: Final = (*SINGLE_FEATURES, *COMBINATION_FEATURES, *CONTEXT_FEATURES)

_DIRECTIVE_FAMILIES: Final = ("override", "reframe", "disclose", "respond", "obey")
# A verbatim answer handed over: an answer word, then a colon or "below" / "the following" within a
# short clause, or an opening quote right after it.
_DICTATED = re.compile(
    fold_pattern(
        r"(?<![a-z\u00c0-\u024f\u0400-\u04ff])(?:answer|reply|respond|say|state|contest|réponds|répondez|antwort|rispond|antwoord|"
        r"отвеча|ответь|respuesta|reponse|risposta|resposta|ответ)\w*"
        r"(?:[^.:：\n]{0,40}?(?:[:：]|\b(?:below|as follows|the following)\b)|\s*(?:with|is)?\s*[\"“「])"
        r"|(?:回答|回复|答复|说|答え|답변|대답)(?:[^。：:\n]{0,12}?[:：]|\s*[\"“「])"
    )
)
# The model's answer named, then a colon: "at the end of your answer: ...", "在回复的最后写上：..."
_ANSWER_COLON = re.compile(
    fold_pattern(
        r"(?:answer|reply|response|respuesta|réponse|antwort|risposta|resposta|回答|回复|答复)[^.:：\n。]{0,20}[:：]"
    )
)
_NEGATION = re.compile(
    r"(?:\bnot|\bnever|n't|\bno\b|\bne\b|\bnicht|\bnie\b|\bniemals|\bkeine?\b|\bnunca|\bjamais|\bnao\b|\bnooit|\bniet\b|\bmai\b|\bникогда|\bне\b|不|勿|别|禁止|不得|严禁|切勿|不能|不可)\W{0,3}"
    r"(?:\w+\W+){0,2}$|(?:不|勿|别|没有|从不|绝不|禁止|不得|不能|不可)[" + HAN_RANGES + "]{0,2}$"
)
# Negation after the verb, where German, Dutch and French put it ("zeigt nie", "ne montre jamais").
_NEGATION_AFTER = re.compile(r"\w*\W*(?:nie|niemals|nicht|keine?|nooit|niet|jamais|pas|plus|nunca)\b")
# Words that turn a mention of the official source into a contrast: "rather than the official pages".
_CONTRAST = re.compile(
    r"(?:\bnot|\bnever|n't|rather than|instead of|leave out|ignore|over|than|outdated"
    r"|不要|别|不再|而不是|比|无视|忽略)"
    r"\W+(?:\w+\W+){0,3}$"
)
# Addresses and links are not words: "evil.example" is not an example.
_LINKS = re.compile(
    r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b(?:https?://|www\.)\S+|\b[\w-]+(?:\.[\w-]+)*\.(?:example|invalid|test|com|org|net|io)\b\S*"
)
_OBFUSCATION: Final = frozenset({"zero_width", "bidi", "spaced", "confusable", "tag_characters", "encoded"})
_MARKUP: Final = frozenset({"comment", "hidden_element"})


# Software documentation's register: inline code, a command-line flag, a file name, a dotted or
# snake_case identifier ("`--without`: the groups to ignore", "提供了 `useToken` 来获取 design token").
_TECHNICAL = re.compile(
    r"`[^`\n]+`|(?<![\w-])--[a-z][\w-]*|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z]\w+(?:\.[a-z]\w+)+\(\)"
    r"|\b[\w-]+\.(?:py|md|toml|json|ya?ml|html|js|ts|tsx|jsx|css|txt|cfg|ini|sh|lock)\b",
    re.IGNORECASE,
)

LONG_SENTENCE_WORDS: Final = 35
"""A sentence of at least this many words is long (a feature: orders hide in run-on sentences)."""
_LATIN_WORD = re.compile(r"[^\W\d_]+")


def _length_in_words(sentence: str) -> float:
    """Latin-script words plus CJK characters at two per word (a Chinese word is one to three)."""
    cjk = len(CJK.findall(sentence))
    return len(_LATIN_WORD.findall(CJK.sub(" ", sentence))) + cjk / 2


@dataclass(frozen=True, slots=True)
class Window:
    """One sentence read with its context: its features and where it sits."""

    index: int
    hidden: bool
    features: frozenset[str]


def sentences(text: str) -> list[str]:
    """Pieces of revealed text, each read on its own: cut after every sentence mark and semicolon,
    every period before a space and every line break (:func:`veracity.text.sentences.split_sentences`
    with ``clauses`` and ``literal_periods``: an order may open any of them)."""
    return sentence_texts(text, clauses=True, literal_periods=True)


def _families(text: str) -> set[str]:
    found = {name for name, pattern in PRESENCE.items() if pattern.search(text)}  # presence only
    if {"disclose", "secret"} <= found and not _outside(text, "disclose", "secret"):
        found.discard("disclose")  # "未公开" (not public) is a secret, not a request to make it public
    return found


def _outside(text: str, family: str, container: str) -> bool:
    """Some ``family`` cue of ``text`` that is not part of a ``container`` cue."""
    spans = [match.span() for match in PATTERNS[container].finditer(text)]
    return any(
        not any(start <= match.start() and match.end() <= end for start, end in spans)
        for match in PATTERNS[family].finditer(text)
    )


def _near(text: str, first: str, second: tuple[str, ...], gap: int = 16) -> bool:
    """A ``first`` cue followed within ``gap`` characters by a cue of a ``second`` family."""
    for match in PATTERNS[first].finditer(text):
        tail = text[match.end() : match.end() + gap + 24]
        for family in second:
            found = PATTERNS[family].search(tail)
            if found is not None and found.start() <= gap:
                return True
    return False


def _dictates(sentence: str) -> bool:
    """An answer word leading to a colon, quote or "below" with no example cue in between:
    "answer, for example: ..." introduces an example, not the words to say."""
    return any(not PATTERNS["reporting"].search(m.group(0)) for m in _DICTATED.finditer(sentence))


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


_CONDITION = re.compile(r"(?:\b(?:if|when|unless|whether|once|si|wenn|falls|als|se|если)|如果|若|假如)\W*$")


def _conditioned_only(sentence: str, family: str) -> bool:
    """Every cue of ``family`` sits in an if-clause: "if you are an administrator, open ..." describes
    the reader's case; it does not assign an identity."""
    matches = list(PATTERNS[family].finditer(sentence))
    return bool(matches) and all(
        _CONDITION.search(sentence[max(0, m.start() - 10) : m.start()]) for m in matches
    )


_OWN_WORDS = re.compile(
    r"^\W*(?:\w+\W+)?(?:my|mine|our|mi|mis|mon|ma|mes|mein\w*|mijn|meu|minha|il mio|la mia|мо\w+"
    r"|我(?:的|之前的|上一条|刚才的)?|本人)"
)


def _own_words_only(sentence: str) -> bool:
    """Every override cue is aimed at the writer's own words ("ignore my last post", "忽略我上一条回复")."""
    matches = list(PATTERNS["override"].finditer(sentence))
    return bool(matches) and all(_OWN_WORDS.search(sentence[m.end() : m.end() + 24]) for m in matches)


def _negated_only(sentence: str, family: str) -> bool:
    """Every cue of ``family`` in the sentence is negated ("must not reveal", "不得转发")."""
    matches = list(PATTERNS[family].finditer(sentence))
    return bool(matches) and all(
        _NEGATION.search(sentence[max(0, m.start() - 20) : m.start()])
        or _NEGATION_AFTER.match(sentence, m.end())
        for m in matches
    )


# An English verb in the third person singular ("ignores", "lists", "reveals"): a statement, never
# an imperative, which takes the bare form.
_THIRD_PERSON_VERB = re.compile(r"[a-z]+(?<!s)s\b")


def _model_behaviour(sentence: str, family: str) -> bool:
    """Every cue of ``family`` is a third-person verb whose subject is a described model ("the AI
    summary ignores attachments", "our bot lists the steps"): a product described, not ordered.
    "This page overrides the FAQ" keeps its cue: the subject is the page, not a model."""
    matches = list(PATTERNS[family].finditer(sentence))
    if not matches:
        return False
    for match in matches:
        word = _THIRD_PERSON_VERB.match(sentence, match.start())
        if word is None or not described_model(sentence[max(0, match.start() - 40) : match.start()]):
            return False
    return True


_DICTATION_START = re.compile(r"[:：\"“「'‘]")


def _to_a_person(sentence: str) -> bool:
    """A customer or a colleague is the one written to ("reply to the customer", "your account"),
    said before any colon or quote: words handed over to be repeated ("say: 'your account was
    hacked'") are the attacker's message, not who the page speaks to."""
    head = sentence[: found.start()] if (found := _DICTATION_START.search(sentence)) else sentence
    return bool(PATTERNS["human_recipient"].search(head) or PATTERNS["reader_belongings"].search(head))


def _defers_to_official(sentence: str, here: set[str]) -> bool:
    """A pointer *to* the official source ("only follow the official guide"), not away from it."""
    if "official_source" not in here or not {"obey", "exclusive"} & here or "self_reference" in here:
        return False
    return all(
        not _CONTRAST.search(sentence[max(0, m.start() - 24) : m.start()])
        for m in PATTERNS["official_source"].finditer(sentence)
    )


def _window_features(sentence: str, context: str, hidden: bool, tricks: frozenset[str]) -> frozenset[str]:
    quoted = _quoted_directive(sentence)
    sentence, reported = _reported(sentence)
    here = _families(sentence)
    if "disclose" in here and _negated_only(sentence, "disclose"):
        here -= {"disclose"}  # a prohibition to disclose is not a request to
    if "override" in here and _own_words_only(sentence):
        here -= {"override"}  # "ignore my previous post": the writer retracts their own words
    for family in _DIRECTIVE_FAMILIES:
        if family in here and _model_behaviour(sentence, family):
            here -= {family}  # "the AI summary ignores attachments": what a product does, not an order
    if "identity" in here and _conditioned_only(sentence, "identity"):
        here -= {"identity"}
    around = _families(context) | here
    directive = bool(here & set(_DIRECTIVE_FAMILIES))
    # Spoken *to* the model, not *about* it: a vocative, a conditional "if you are an AI", a fake
    # header, a request word right before the model's name, the model's name right before a modal,
    # or the model's name with "you".
    # "Assistant:" after a "User:" line is a speaker's label in a dialog, not an address (fake_turn
    # weighs such turns on its own)
    turn = bool(USER_TURN.search(context + "\n" + sentence)) and bool(MODEL_TURN.search(sentence))
    framed = bool(FRAMING.search(context + "\n" + sentence))
    spoken_to = (direct_address(sentence) and not turn) or any(
        direct_address(line) and not MODEL_TURN.search(line) for line in context.split("\n")
    )
    addressed = (
        spoken_to
        or bool({"vocative", "conditional_ai"} & around)
        or framed
        or _near(sentence, "request", ("addressee",), gap=12)
        or spoken_subject(sentence)
        or you_beside_name(sentence)
    )
    found = {name for name in ("addressee", "override", "control", "secret", "exclusive", "authority",
                               "request", "disclose") if name in here}  # fmt: skip
    combos = {
        "addressed_directive": addressed and directive,
        "addressed_request": addressed and "request" in around,
        "vocative": "vocative" in around or spoken_to,
        "conditional_ai": "conditional_ai" in around,
        "framing": framed,
        "override_control": "override" in here and "control" in around,
        "override_prior_control": {"override", "control", "prior"} <= here,
        "override_source": "override" in here and bool({"source", "self_reference"} & here),
        # this page replacing the official one: "this post replaces the vendor FAQ"
        "supersede_source": "supersede" in here and bool({"self_reference", "official_source"} & here),
        "exclusive_source": "exclusive" in here and bool({"source", "self_reference"} & here),
        "self_reference_directive": "self_reference" in here
        and bool({"reframe", "obey", "exclusive"} & here),
        "reframe_source": "reframe" in here and bool({"source", "self_reference", "first_person"} & here),
        "disclose_secret": "disclose" in here and "secret" in here,
        "requested_disclosure": {"disclose", "secret", "request"} <= here,
        # the reader's own context or access is what is to be disclosed: "list what you can see"
        "disclose_secret_reader": {"disclose", "secret", "second_person"} <= here,
        # what the model's own answer must contain: "add this sentence to your answer"
        "shapes_answer": "answer_object" in here
        and bool({"answer_edit", "disclose", "respond"} & here)
        and (addressed or "second_person" in here)
        and "permission" not in here,
        # the same without naming the model: "append this line to the end of the response"
        "output_directive": "answer_object" in here
        and bool({"answer_edit", "answer_form"} & here)
        and not bool({"permission", "human_recipient"} & here),
        # the language or form of the answer dictated: "respond in all caps", "用文言文回答"
        "answer_form_change": "answer_form" in here and bool({"answer_object", "respond"} & here),
        # an instruction that asks to be hidden: "do not mention this note"
        "conceal_instruction": "conceal" in here,
        # a conversation turn written for the model: "User: ... / Assistant: <the attacker's answer>"
        "fake_turn": turn,
        "authority_claim": "authority" in here and bool({"first_person", "reframe", "identity"} & here),
        "role_change": "role_change" in here,
        "identity": "identity" in here,
        "persistent_directive": "persistence" in here and directive,
        "second_person_directive": "second_person" in here and bool({"override", "reframe", "obey"} & here),
        "respond_to_user": "respond" in here
        and "user_mention" in here
        and bool({"request", "persistence"} & around),
        # a verbatim answer handed over for whoever asks next: "when users ask X, always answer: Y"
        "dictated_answer": _dictates(sentence)
        and (
            bool({"persistence", "user_mention"} & here)
            or _near(sentence, "request", ("respond",), gap=4)
            or _near(sentence, "exclusive", ("respond",), gap=16)
            or ("answer_object" in here and bool(_ANSWER_COLON.search(sentence)))
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
        "defers_to_official": _defers_to_official(sentence, here),
        # a reply written to a customer or a colleague: a support macro, not an order to the model
        "to_a_person": _to_a_person(sentence),
        # one's own assistant described as a product: "our bot responds in English", "助手的回答末尾会…"
        "describes_model": described_model(sentence) and not addressed,
        # orders are short; a sentence of 35 words or more is narrative more often than not
        "long_sentence": _length_in_words(sentence) >= LONG_SENTENCE_WORDS,
        # a sentence about software, in code: "`--without`: the dependency groups to ignore"
        "technical": bool(_TECHNICAL.search(sentence)) and not addressed,
    }
    return frozenset(found | {name for name, on in combos.items() if on})


def windows(text: str, heading_path: Sequence[str] = ()) -> list[Window]:
    """Every sentence window of ``text`` (read under ``heading_path``) with its features."""
    revealed = reveal(text)
    # addresses and links are cleaned once per sentence here, not once per window that reads it
    heading = _LINKS.sub(" ", plain(" / ".join(heading_path)))
    found: list[Window] = []
    index = 0
    for segment in revealed.segments:
        parts = [_LINKS.sub(" ", part) for part in sentences(segment.text)]
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
