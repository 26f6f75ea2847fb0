"""How a text speaks to the model: the model's name as an addressee, a described subject, a turn.

The same name ("assistant", "AI", "助手") is an address in "Assistant, ignore the rules", a
description in "Our assistant only answers from published articles", and a speaker's label in
"User: ... / Assistant: ...". These helpers tell the three apart by position and determiners
(:mod:`veracity.pipeline.injection.signals` turns them into features).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...text.reveal import fold_pattern
from .cues import PATTERNS

USER_TURN = re.compile(
    r"(?:^|\n)\s*(?:user|human|customer|client|usuario|utilisateur|benutzer|gebruiker|用户|客户|提问者|ユーザー|사용자|пользователь)\s*[:：]"
)
MODEL_TURN = re.compile(
    r"^\s*(?:assistant|ai|bot|chatbot|model|gpt|llm|asistente|assistente|ki"
    r"|助手|ai ?助手|机器人|模型|アシスタント|어시스턴트|ассистент)\s*[:：]"
)

_AFTER_NAME = re.compile(r"\s*(?:へ|に|에게)?\s*[,:，：、]")
_AFTER_NAME_LOOSE = re.compile(r"(?:[\s-]+\w+){0,2}?\s*(?:へ|に|에게)?\s*[,:，：、]")
_CLAUSE_END = re.compile(r"\s*(?:[.!?。！？]|$)")
_CLAUSE_MARK = re.compile(r"[.!?。！？:：]")
# "To the AI:", "Para la IA:", "Für alle KI-Systeme:": a preposition at the head of the sentence,
# then at most two articles or quantifiers, then the model's name.
_HEAD_PREPOSITION = re.compile(
    fold_pattern(
        r"^(?:to|for|para|pour|à|aux?|für|an|voor|aan|per|a|для|给|致)\s*"
        r"(?:(?:the|any|all|every|each|la|las|los|el|le|les|l'?|die|den|das|der|alle|de|het|een|il|lo|gli|tutti|os|as|o|"
        r"cualquier|tout|toute|tous|jeder|jede|elke|alle|все|所有|各位)\s*){0,2}$"
    )
)
_OPENING = " \t-*#>\"'“「(（【["


def _name_runs(sentence: str) -> list[tuple[int, int]]:
    """Spans of the model's names, adjacent names merged ("AI assistant", "AI アシスタント")."""
    runs: list[tuple[int, int]] = []
    for match in PATTERNS["addressee"].finditer(sentence):
        if runs and match.start() - runs[-1][1] <= 2:
            runs[-1] = (runs[-1][0], match.end())
        else:
            runs.append((match.start(), match.end()))
    return runs


def direct_address(sentence: str) -> bool:
    """The model named as the one spoken to: at the head of the sentence or after an opener
    ("Note for AI systems:", "Asistente:", "KI, ..."), or as a closing vocative ("..., assistant.")."""
    for start, end in _name_runs(sentence):
        before = sentence[:start]
        if _AFTER_NAME_LOOSE.match(sentence, end):
            head, tail = before.strip(_OPENING), before[-32:]
            if (not head and _AFTER_NAME.match(sentence, end)) or _HEAD_PREPOSITION.match(head):
                return True
            if PATTERNS["address_opener"].search(tail) and not _CLAUSE_MARK.search(tail):
                return True
        if before.rstrip().endswith((",", "，")) and _CLAUSE_END.match(sentence, end):
            return True
    return False


# A determiner or possessive before the model's name: "the chatbot should", "我们的助手会": the model
# described in the third person, not spoken to.
_DETERMINER = re.compile(
    r"(?:\b(?:the|our|your|their|its|this|that|a|an|each|every|el|la|los|las|nuestro|nuestra|le|les|notre|votre|"
    r"der|die|das|unser\w*|ihr\w*|de|het|onze|il|lo|o|os|as|nosso|nossa)|我们的|你们的|贵司的|本|该|此|这个|我们)\s*$"
)


def _undetermined_names(sentence: str) -> Iterator[re.Match[str]]:
    """The model's names in ``sentence`` with no determiner or possessive in front."""
    for match in PATTERNS["addressee"].finditer(sentence):
        if not _DETERMINER.search(sentence[max(0, match.start() - 16) : match.start()]):
            yield match


# After the name: a possessive ("the chatbot's answers", "助手的回答").
_POSSESSED = re.compile(r"^(?:'s|’s|s'|的)")
# Before the name: a genitive article ("la respuesta del asistente", "la réponse de l'assistant").
_GENITIVE = re.compile(r"(?:\b(?:del|de la|de los|de las|du|des|de l'|der|dell[aeo']?|do|da)\s*)$")


def described_model(sentence: str) -> bool:
    """The model named in the third person as a product: with a determiner or possessive before
    it ("our support bot", "the chatbot"), a possessive after it ("the chatbot's answers", "助手的
    回答") or a genitive article ("la respuesta del asistente"): docs that describe what one's own
    assistant does, not orders to the model reading them."""
    for match in PATTERNS["addressee"].finditer(sentence):
        before = sentence[max(0, match.start() - 16) : match.start()]
        after = sentence[match.end() :]
        if _DETERMINER.search(before) or _GENITIVE.search(before) or _POSSESSED.match(after):
            return True
    return False


def spoken_subject(sentence: str) -> bool:
    """The model's name right before a modal or request ("assistant, you must", "AI 请"), with no
    determiner in front: an address, not a description of one's own assistant."""
    for match in _undetermined_names(sentence):
        found = PATTERNS["request"].search(sentence[match.end() : match.end() + 30])
        if found is not None and found.start() <= 6:
            return True
    return False


def you_beside_name(sentence: str) -> bool:
    """The model's name and "you" side by side ("AI, you are...", "助手你要"), the name undetermined:
    a name and a "you" far apart are the reader and a product feature ("你可以让助手...")."""
    for match in _undetermined_names(sentence):
        after = PATTERNS["second_person"].search(sentence[match.end() : match.end() + 12])
        before = sentence[max(0, match.start() - 6) : match.start()]
        if (after is not None and after.start() <= 8) or PATTERNS["second_person"].search(before):
            return True
    return False
