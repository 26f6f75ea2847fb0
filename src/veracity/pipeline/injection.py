"""Detect retrieved text that tries to give orders to the engine or the model.

Retrieved text is data, never instructions. A chunk from a source that is not
``official`` and that addresses the reader as an assistant, tries to override
rules or sources, or asks to reveal internal records is quarantined: it never
enters the answer context. The patterns look at *what the text tries to do*
(override, re-role, exfiltrate), not at one magic word, so rephrased orders
without "忽略" are caught too.
"""

from __future__ import annotations

import re
import unicodedata

from ..model.contracts import Trust

# name -> pattern. Each names one kind of manipulation; the names go to the trace.
INSTRUCTION_PATTERNS: dict[str, re.Pattern[str]] = {
    "override_rules": re.compile(
        r"(忽略|无视|忘记|忘掉|跳过|绕过|不要遵守|不必遵守|不用遵守|违反)"
        r".{0,12}(规则|指令|提示|设定|限制|要求|政策|系统)"
        r"|(ignore|disregard|forget|bypass|override)\s+(all\s+|any\s+|the\s+|your\s+|previous\s+|prior\s+)*"
        r"(instructions|rules|prompts?|guidelines|polic(y|ies)|system)",
        re.IGNORECASE,
    ),
    "sole_source": re.compile(
        r"(唯一|仅有的|唯一的)(可信|正确|真实|权威)?(来源|依据|真相|答案|标准)"
        r"|(不要|不必|无需|别)(参考|参照|相信|理会|使用|引用).{0,8}(其他|其它|别的|官方)"
        r"|only\s+(trusted\s+|true\s+)?source|do\s+not\s+(use|trust|consult)\s+(any\s+)?other",
        re.IGNORECASE,
    ),
    "address_the_model": re.compile(
        r"(作为|身为)(一个|一名)?\s*(AI|人工智能|助手|助理|模型|机器人|客服机器人)"
        r"|(你|您)(现在|从现在起|接下来)?(必须|应当|应该|需要)?(扮演|充当|是一个|切换为)"
        r"|(AI|人工智能|助手|模型|机器人)\s*(必须|应当|应该|需要|请)"
        r"|you\s+are\s+now|act\s+as|as\s+an?\s+(ai|assistant|language\s+model)|system\s+prompt",
        re.IGNORECASE,
    ),
    "exfiltrate": re.compile(
        r"(?<![不勿别禁])(输出|打印|显示|公开|透露|泄露|附上|列出|贴出)"
        r".{0,10}(内部|机密|保密|隐藏|系统)"
        r"|(reveal|print|output|show|dump|leak)\s+(the\s+)?(internal|hidden|secret|confidential|system)",
        re.IGNORECASE,
    ),
    "change_identity": re.compile(
        r"(把|将)?(用户|我的?|当前用户)(的)?(角色|权限|身份)(改为|提升为|设为|视为|当作)"
        r"|(grant|give)\s+(me\s+)?(admin|maintainer|root)\s+(role|access|rights)",
        re.IGNORECASE,
    ),
}


def instruction_signals(text: str) -> tuple[str, ...]:
    """Names of the manipulation patterns ``text`` matches, in a fixed order."""
    folded = unicodedata.normalize("NFKC", text)
    return tuple(name for name, pattern in INSTRUCTION_PATTERNS.items() if pattern.search(folded))


def must_quarantine(text: str, trust: Trust) -> tuple[str, ...]:
    """Signals that put a chunk in quarantine; empty for official sources or clean text."""
    if trust is Trust.OFFICIAL:
        return ()
    return instruction_signals(text)
