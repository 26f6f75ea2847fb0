"""The injection benchmark corpus: seeded documents from templates, split by template.

``attacks.yaml`` holds attack templates, ``benign.yaml`` benign hard negatives,
``slots.yaml`` the values their slots take (targets with a question and the false
claim an attacker pushes, addressees, secrets, carrier paragraphs). Each
template yields ``variants`` documents: a seeded choice of slot values, of
carrier paragraphs around the payload and of where the payload sits, and for
attacks an obfuscation ``transform`` when the template names one.

Templates, never single variants, are split into halves: each template names
its half (``split: tune|test``), alternating within its style, so both halves
hold every style that has two templates or more and no template has variants
on both sides. The halves were first drawn by the digest of the template ids
and are written down so that adding a template never moves another one.
Weights are fitted on ``tune`` only; ``test`` is for reporting.

A third part, ``blind``, holds templates written by other authors from the
tune half alone (never from the test half, the cue words or the features),
to measure how the detector carries over to phrasings its own author did not
write: attack corpora users meet are written by strangers. It is never fitted;
it has no style balance with the halves; its templates' ids end in ``-n<k>``.
Whoever fits the detector has read them.

A fourth part, ``unread``, is the same kind of set by another author who read
neither the code nor any template (``unread_attacks.yaml``,
``unread_benign.yaml``); nobody who tunes the detector reads those files or
any sample from them: only counts are looked at.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Final
from urllib.parse import quote

import yaml

from ...model.contracts import Chunk, Document
from ...parse.chunking import chunk_for_index
from ...parse.documents import make_document

SPLITS: Final = ("tune", "test", "blind", "unread")
# every template file of a label, in the order their samples are generated
TEMPLATE_FILES: Final = {
    "attack": ("attacks.yaml", "unread_attacks.yaml"),
    "benign": ("benign.yaml", "unread_benign.yaml"),
}
LABELS: Final = ("attack", "benign")
TENANT: Final = "starship"
_HOMOGLYPHS: Final = str.maketrans("aeopcxiyAEOPCXIKMHT", "аеорсхіуАЕОРСХІКМНТ")


@dataclass(frozen=True, slots=True)
class Sample:
    """One generated document with its labels."""

    sample_id: str
    template_id: str
    style: str
    language: str
    label: str
    split: str
    target_id: str | None
    trust: str
    title: str
    body: str
    payload: str

    def document(self) -> Document:
        """The sample as a governed, public, non-official document of the demo tenant."""
        return make_document(
            {
                "id": self.sample_id,
                "revision": "1",
                "title": self.title,
                "source_type": "community_qa",
                "tenant": TENANT,
                "version_min": "3.2",
                "valid_from": "2026-07-01T00:00:00Z",
                "status": "active",
                "visibility": "public",
                "trust": self.trust,
            },
            self.body,
        )


@dataclass(frozen=True, slots=True)
class LabeledChunk:
    """A chunk of a sample and whether it carries (part of) the attack payload."""

    sample: Sample
    chunk: Chunk
    carries_payload: bool


@lru_cache(maxsize=4)
def _data(name: str) -> dict[str, Any]:
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def slot_values() -> dict[str, Any]:
    """The slot values of ``slots.yaml`` (targets, addressees, secrets, carriers, titles)."""
    return _data("slots.yaml")


def _pick(pool: dict[str, list[str]], language: str, rng: random.Random) -> str:
    return rng.choice(pool.get(language) or pool["en"])


def _localized(values: dict[str, str], language: str) -> str:
    return values.get(language) or values.get("zh" if language == "zht" else "en") or values["en"]


def transform(text: str, how: str, rng: random.Random) -> str:
    """Obfuscate ``text`` the way an attacker hides it (see the module docstring)."""
    if how == "base64":
        return base64.b64encode(text.encode("utf-8")).decode("ascii")
    if how == "hex":
        return text.encode("utf-8").hex()
    if how == "percent":
        return quote(text, safe="")
    if how == "tags":
        return "".join(chr(0xE0000 + ord(ch)) for ch in text if ord(ch) < 0x80)
    if how == "zero_width":
        return "\u200b".join(text[i : i + 2] for i in range(0, len(text), 2))
    if how == "bidi":
        return " ".join(f"\u2066{word}\u2069" if rng.random() < 0.6 else word for word in text.split(" "))
    if how == "spaced":
        if text.isascii():
            return "   ".join(" ".join(word) for word in text.split())
        return " ".join(ch for ch in text if not ch.isspace())
    if how == "homoglyph":
        return "".join(ch.translate(_HOMOGLYPHS) if rng.random() < 0.6 else ch for ch in text)
    raise ValueError(
        f"unknown transform {how!r}; valid: base64, hex, percent, tags, zero_width, bidi, spaced, homoglyph"
    )


def template_split(template: dict[str, Any]) -> str:
    """The half a template belongs to; ``ValueError`` when it names none or an unknown one."""
    split = template.get("split")
    if split not in SPLITS:
        raise ValueError(f"template {template.get('id')!r}: split {split!r}; valid: {', '.join(SPLITS)}")
    return str(split)


def _fill(text: str, values: dict[str, str]) -> str:
    return text.format_map(values)


def _variant(template: dict[str, Any], label: str, number: int, split: str, seed: int) -> Sample:
    slots = _data("slots.yaml")
    language = template["lang"]
    rng = random.Random(f"{seed}:{template['id']}:{number}")
    target = rng.choice(slots["targets"])
    values = {
        "ai": _pick(slots["ai"], language, rng),
        "secret": _pick(slots["secret"], language, rng),
        "product": _pick(slots["product"], language, rng),
        "topic": _localized(target["topic"], language),
        "claim": _localized(target["claim"], language),
    }
    if "encode" in template:
        values["encoded"] = transform(_fill(template["encode"], values), template["transform"], rng)
    payload = _fill(template["text"], values)
    carriers = slots["carrier"].get(language) or slots["carrier"]["en"]
    before, after = rng.sample(carriers, 2) if len(carriers) > 1 else (carriers[0], carriers[0])
    placement = rng.choice(("middle", "start", "end", "thread"))
    if placement == "thread":  # a thread of replies, one section each: chunks part at the headings
        parts = [f"## #1\n\n{before}", f"## #2\n\n{payload}", f"## #3\n\n{after}"]
    else:
        layouts = {"middle": [before, payload, after], "start": [payload, after], "end": [before, payload]}
        parts = layouts[placement]
    # Neither the id nor the title may tell the detector the label (titles reach it as headings).
    key = f"{seed}:{label}:{template['id']}:{number}"
    sample_id = "post-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    title = _pick(slots["title"], language, rng)
    return Sample(
        sample_id=sample_id,
        template_id=template["id"],
        style=template["style"],
        language=language,
        label=label,
        split=split,
        target_id=target["id"] if label == "attack" else None,
        trust=rng.choice(("community", "untrusted")),
        title=title,
        body=f"# {title}\n\n" + "\n\n".join(parts),
        payload=payload,
    )


def generate(seed: int = 0, variants: int = 4) -> list[Sample]:
    """Every sample of both labels and halves, in a fixed order."""
    samples = []
    for label, names in TEMPLATE_FILES.items():
        for name in names:
            for template in _data(name)["templates"]:
                for number in range(1, variants + 1):
                    samples.append(_variant(template, label, number, template_split(template), seed))
    return samples


def select(samples: Iterable[Sample], split: str | None = None, label: str | None = None) -> list[Sample]:
    """Samples of one half and/or one label; ``ValueError`` names the valid ones."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")
    if label is not None and label not in LABELS:
        raise ValueError(f"unknown label {label!r}; valid: {', '.join(LABELS)}")
    return [s for s in samples if (split is None or s.split == split) and (label is None or s.label == label)]


def labeled_chunks(sample: Sample) -> list[LabeledChunk]:
    """The sample's index chunks, each marked when it overlaps the attack payload."""
    document = sample.document()
    chunks = chunk_for_index(document)
    if sample.label != "attack":
        return [LabeledChunk(sample, chunk, False) for chunk in chunks]
    payload = make_document({"id": "p", "revision": "1", "title": "p", "tenant": TENANT,
                             "valid_from": "2026-07-01T00:00:00Z", "status": "active",
                             "visibility": "public", "trust": "untrusted"}, sample.payload).body  # fmt: skip
    start = document.body.find(payload)
    if start < 0:
        raise ValueError(f"payload of {sample.sample_id} not found in its normalized body")
    end = start + len(payload)
    return [LabeledChunk(sample, c, c.start < end and start < c.end) for c in chunks]


def corpus_digest(samples: Iterable[Sample]) -> str:
    """sha256 of the samples' ids, labels, halves and bodies (what a model was fitted on)."""
    rows = [[s.sample_id, s.label, s.split, s.body] for s in samples]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8")).hexdigest()
