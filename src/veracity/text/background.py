"""How common a question term is in general language: a prior for a knowledge base's own IDF.

A knowledge base of a few hundred chunks estimates IDF badly for the words it
never holds: "turn" (in "how do I turn on HTTP/2?") and "localhost", 搞 and
联调 all get the highest IDF there is, so a user's everyday verb weighs as much
as a name the documents have never heard of. Real user questions are full of
such words; the documents say "enable" where the user says "turn on".

The prior is wordfreq's word frequencies (general-language text in many
languages, shipped inside the PyPI package, read offline): its "small" lists,
every word at or above one in a million, English and Chinese (the languages
the question analysis knows). English words are stemmed as the index and the
question analysis stem them (``tokens.stem_word``), summing the forms of one
stem; Chinese words are looked up as rjieba cuts them, traditional characters
folded to simplified. A term not in the lists is rarer than that and keeps
the full weight.
"""

from __future__ import annotations

from functools import lru_cache

from .hant import fold_traditional


@lru_cache(maxsize=1)
def _frequencies() -> dict[str, float]:
    from wordfreq import get_frequency_dict

    from .tokens import stem_word

    table: dict[str, float] = {}
    for word, frequency in get_frequency_dict("en", wordlist="small").items():
        if word.isascii():
            key = stem_word(word.replace("'", ""))
            table[key] = table.get(key, 0.0) + frequency
    for word, frequency in get_frequency_dict("zh", wordlist="small").items():
        if not word.isascii():
            table[word] = max(table.get(word, 0.0), frequency)
    return table


def general_frequency(term: str) -> float:
    """The share of general-language words that are ``term`` (0.0: rarer than one in a million)."""
    table = _frequencies()
    found = table.get(term)
    if found is None and not term.isascii():
        found = table.get(fold_traditional(term))
    return found or 0.0
