"""The LLM composer: a language model writes the covered part of a decided answer; every claim is
verified against what it cites; the extractive answer is the floor.

Steps, after the policy decided the answer (:mod:`veracity.pipeline.composer`):

1. an abstain (or an answer without claims) is returned as decided: the model is not called;
2. the context is assembled (:mod:`.context`) from the evidence the gate accepted, with the
   chunks the decided claims cite reserved; the prompt lists the covered sub-questions (or the
   question, for required facts) and names what is not covered;
3. the model writes; an endpoint that is down, slow, rate-limited or answers malformed or cut
   off text leaves the decided (extractive) answer, marked ``llm_unavailable``;
4. its text is split into claims and each is verified (:mod:`.claims`); a failed claim is
   dropped and reported (its index and reason, never its text);
5. a covered sub-question (or required fact) that no verified claim covers any more, or whose
   best claim (the one holding most of its terms) was dropped, turns the status to partial
   (``unverified:<i>``, ``unverified_fact:<id>``): what was asked is not said just because a
   side remark about it survived; when no verified claim covers anything, the decided
   extractive answer is returned (``fallback_extractive``).

Each written claim says ``composer="llm"``; the trace says which model wrote the answer, the
outcome and the counts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ...model.contracts import AnswerStatus, Claim, Hit, Trust
from ...model.errors import LLMUnavailableError
from ...text.questions import SubQuestion
from ..answer import renumber, version_scopes
from ..composer import Evidence
from ..outcome import Answer
from .claims import (
    MIN_COVERAGE,
    ClaimCheck,
    Verifier,
    WrittenClaim,
    claim_coverage,
    rests_on_quote,
    split_claims,
)
from .client import ChatModel, Completion
from .context import Block, Part, admitted_hits, assemble, prompt
from .stream import CLAIM_LISTENER, TEXT_LISTENER, StreamedClaim, first_use_numbers

_PARTIAL_MARKER = re.compile(r"\[[^\]\n]*$")


class _Feeder:
    """Streams each written claim once it is complete and verified (see :mod:`.stream`)."""

    def __init__(
        self, make: Callable[[ClaimCheck], Claim], verifier: Verifier, evidence: Evidence,
        listener: Callable[[StreamedClaim | None], None],
    ) -> None:  # fmt: skip
        self.make, self.verifier, self.evidence, self.listener = make, verifier, evidence, listener
        self.text = ""
        self.sent = 0  # written claims looked at so far
        self.numbers: dict[int, int] = {}
        self.checked: dict[tuple[int, str, tuple[int, ...]], ClaimCheck] = {}

    def check(self, claim: WrittenClaim) -> ClaimCheck:
        """The claim's check, done once however often it is asked for."""
        key = (claim.index, claim.text, claim.blocks)
        if key not in self.checked:
            self.checked[key] = self.verifier.check(claim)
        return self.checked[key]

    def hear(self, text: str) -> None:
        """The model's text so far: stream the claims it has finished (all but the last)."""
        if not text.startswith(self.text):  # the client started over: what was streamed goes
            self.sent, self.numbers = 0, {}
            self.listener(None)
        self.text = text
        # a block number being written ("… days. [1") is not a sentence yet: leave it out
        self._stream(split_claims(_PARTIAL_MARKER.sub("", text))[:-1])

    def finish(self, checks: Sequence[ClaimCheck]) -> None:
        """The model is done: stream what is left (the last claim included)."""
        self._stream([c.claim for c in checks])

    def _stream(self, complete: Sequence[WrittenClaim]) -> None:
        for written in complete[self.sent :]:
            check = self.check(written)
            if check.verified:
                claim = self.make(check)
                fresh = first_use_numbers(self.numbers, claim.citation_ids)
                hits = self.evidence.hits
                cited = tuple(
                    replace(self.evidence.citations[hits[p - 1].chunk.chunk_id], citation_id=self.numbers[p])
                    for p in fresh
                )
                numbered = replace(claim, citation_ids=tuple(self.numbers[p] for p in claim.citation_ids))
                self.listener(StreamedClaim(numbered, cited))
        self.sent = max(self.sent, len(complete))


def carried_by_dropped(checks: Sequence[ClaimCheck], covered: Mapping[int, object]) -> list[int]:
    """Covered sub-questions whose best claim was dropped: a dropped claim holds more of the
    sub-question's term weight than every verified claim assigned to it."""
    lost = []
    for index in covered:
        kept = [c.share for c in checks if c.verified and c.subquestion == index]
        dropped = [c.share for c in checks if not c.verified and c.subquestion == index]
        if dropped and max(dropped) > max(kept, default=0.0):
            lost.append(index)
    return lost


class LLMComposer:
    """See the module docstring."""

    name = "llm"

    def __init__(self, model: ChatModel, *, context_tokens: int = 2048) -> None:
        """Write with ``model``; at most ``context_tokens`` tokens of evidence blocks per prompt."""
        self.model = model
        self.context_tokens = context_tokens

    def compose(self, decided: Answer, evidence: Evidence) -> Answer:
        """The written answer for ``decided`` (see the module docstring)."""
        if decided.status is AnswerStatus.ABSTAIN or not decided.claims:
            return decided
        started = time.perf_counter()
        cited_chunks = {c.citation_id: c.chunk_id for c in decided.citations}
        reserved = [cited_chunks[cid] for claim in decided.claims for cid in claim.citation_ids]
        hits = admitted_hits(evidence.hits, evidence.documents, decided.claims)
        blocks = assemble(
            hits, evidence.documents, reserved, budget=self.context_tokens,
            count_tokens=self.model.count_tokens, embed=evidence.embed,
        )  # fmt: skip
        number_of = {b.chunk_id: b.number for b in blocks}
        by_facts = bool(evidence.required_fact_ids)
        subquestions = () if by_facts else evidence.question.subquestions
        covered: dict[int, tuple[int, ...]] = {}
        for claim in decided.claims:
            if claim.subquestion is not None and not by_facts:
                numbers = tuple(number_of[cited_chunks[cid]] for cid in claim.citation_ids)
                covered[claim.subquestion] = tuple(
                    dict.fromkeys((*covered.get(claim.subquestion, ()), *numbers))
                )
        if by_facts:
            parts = [Part(evidence.question.text, tuple(sorted({number_of[c] for c in reserved})))]
        else:
            parts = [Part(subquestions[i].text, covered[i]) for i in sorted(covered)]
        missing = [*decided.uncovered_subquestions, *(f"fact {f}" for f in decided.missing_fact_ids)]
        messages = prompt(evidence.question.text, blocks, parts, missing)
        verifier = Verifier(
            blocks={b.number: b for b in blocks},
            subquestions=subquestions,
            covered=frozenset(covered),
            question_weights=evidence.weights,
            embed=evidence.embed,
        )
        listener = CLAIM_LISTENER.get()
        feeder = (
            _Feeder(lambda check: self._claim(check, blocks, evidence, decided), verifier, evidence, listener)
            if listener is not None else None
        )  # fmt: skip
        token = TEXT_LISTENER.set(feeder.hear if feeder is not None else None)
        try:
            completion = self.model.complete(messages)
            written = split_claims(completion.text)
            if not written:
                raise LLMUnavailableError("the language model wrote no sentence", reason="malformed")
        except LLMUnavailableError as exc:
            info = self._info("llm_unavailable", blocks, None, error=exc.reason)
            return self._trace(decided, info, (), started)
        finally:
            TEXT_LISTENER.reset(token)
        checks = [feeder.check(claim) if feeder is not None else verifier.check(claim) for claim in written]
        if feeder is not None:
            feeder.finish(checks)
        dropped = tuple((c.claim.index, c.reason.value) for c in checks if c.reason is not None)
        kept = [c for c in checks if c.verified]
        claims = [self._claim(c, blocks, evidence, decided) for c in kept]
        lost_parts = sorted(set(covered) - {c.subquestion for c in claims if c.subquestion is not None})
        lost_parts = sorted({*lost_parts, *carried_by_dropped(checks, covered)})
        decided_facts = list(dict.fromkeys(f for c in decided.claims for f in c.fact_ids))
        lost_facts = (
            [f for f in decided_facts if not any(f in c.fact_ids for c in claims)] if by_facts else []
        )
        nothing_left = (
            not claims
            or (by_facts and len(lost_facts) == len(decided_facts) > 0)
            or (not by_facts and covered and len(lost_parts) == len(covered))
        )
        info = self._info("", blocks, completion, checks)
        if nothing_left:
            return self._trace(decided, {**info, "outcome": "fallback_extractive"}, dropped, started)
        return self._written(
            decided, evidence, claims, lost_parts, lost_facts, subquestions, info, dropped, started
        )

    def _claim(
        self, check: ClaimCheck, blocks: Sequence[Block], evidence: Evidence, decided: Answer
    ) -> Claim:
        """A verified written claim; its citation ids are chunk positions in ``evidence.hits``
        order plus one (renumbered later), its facts those of the cited chunks it states: its
        terms cover the fact's quote, or the chunk sentence it rests on lies in the quote."""
        chunk_ids = [next(b.chunk_id for b in blocks if b.number == n) for n in check.claim.blocks]
        trusts = {evidence.documents[self._hit(evidence, c).chunk.document_id].trust for c in chunk_ids}
        decided_facts = {f for c in decided.claims for f in c.fact_ids}
        facts = []
        for chunk_id in chunk_ids:
            hit = self._hit(evidence, chunk_id)
            document = evidence.documents[hit.chunk.document_id]
            for fact in document.facts:
                stated = claim_coverage(fact.quote, check.claim.text, ()) >= MIN_COVERAGE or rests_on_quote(
                    check.claim.text, hit.chunk.text, fact.quote
                )
                if fact.fact_id in hit.chunk.fact_ids and fact.fact_id in decided_facts and stated:
                    facts.append(fact.fact_id)
        order = [h.chunk.chunk_id for h in evidence.hits]
        return Claim(
            text=check.claim.text,
            citation_ids=tuple(order.index(c) + 1 for c in chunk_ids),
            fact_ids=tuple(dict.fromkeys(facts)),
            source_trust=Trust.COMMUNITY.value if Trust.COMMUNITY in trusts else None,
            subquestion=check.subquestion,
            composer=self.name,
        )

    @staticmethod
    def _hit(evidence: Evidence, chunk_id: str) -> Hit:
        return next(h for h in evidence.hits if h.chunk.chunk_id == chunk_id)

    def _written(
        self, decided: Answer, evidence: Evidence, claims: list[Claim], lost_parts: list[int],
        lost_facts: list[str], subquestions: Sequence[SubQuestion], info: dict[str, str],
        dropped: tuple[tuple[int, str], ...], started: float,
    ) -> Answer:  # fmt: skip
        """The written answer: claims renumbered, status and reasons for what no longer holds."""
        temporary = [
            replace(evidence.citations[h.chunk.chunk_id], citation_id=i)
            for i, h in enumerate(evidence.hits, start=1)
        ]
        used = {cid for claim in decided.claims for cid in claim.citation_ids}
        related_chunks = [c.chunk_id for c in decided.citations if c.citation_id not in used]
        related = [i for i, h in enumerate(evidence.hits, start=1) if h.chunk.chunk_id in related_chunks]
        renumbered, cited = renumber(claims, temporary, related)
        lost_texts = [subquestions[i].text for i in lost_parts]
        status = AnswerStatus.PARTIAL if lost_parts or lost_facts else decided.status
        reasons = tuple(r for r in decided.reasons if not r.startswith("version_scope:"))
        reasons = (
            *reasons,
            *(f"unverified:{i}" for i in lost_parts),
            *(f"unverified_fact:{f}" for f in lost_facts),
            *version_scopes(cited, evidence.documents, evidence.version),
        )
        outcome = "partly_verified" if dropped or status is not decided.status else "verified"
        answer = replace(
            decided,
            status=status,
            claims=renumbered,
            citations=cited,
            missing_fact_ids=(*decided.missing_fact_ids, *lost_facts),
            uncovered_subquestions=(*decided.uncovered_subquestions, *lost_texts),
            reasons=reasons,
        )
        return self._trace(answer, {**info, "outcome": outcome}, dropped, started)

    def _info(
        self, outcome: str, blocks: Sequence[Block], completion: Completion | None,
        checks: Sequence[ClaimCheck] = (), *, error: str = "",
    ) -> dict[str, str]:  # fmt: skip
        """The trace's composer entry: model, outcome, context size, and the claim counts the
        evaluation reads (written, verified, supported by their citations, citations, precise ones)."""
        info = {
            "name": self.name,
            "model": self.model.model_id,
            "outcome": outcome,
            "blocks": str(len(blocks)),
            "context_tokens": str(sum(b.tokens for b in blocks)),
        }
        if error:
            info["error"] = error
        if completion is not None:
            info["claims_written"] = str(len(checks))
            info["claims_verified"] = str(sum(c.verified for c in checks))
            info["claims_supported"] = str(sum(c.supported for c in checks))
            info["citations"] = str(sum(len(c.claim.blocks) for c in checks))
            info["citations_precise"] = str(sum(c.precise_citations for c in checks))
            if completion.completion_tokens is not None:
                info["completion_tokens"] = str(completion.completion_tokens)
        return info

    @staticmethod
    def _trace(
        answer: Answer, info: dict[str, str], dropped: tuple[tuple[int, str], ...], started: float
    ) -> Answer:
        milliseconds = (time.perf_counter() - started) * 1000.0
        trace = replace(
            answer.trace,
            status=answer.status.value,
            reasons=answer.reasons,
            composer=tuple(info.items()),
            dropped_claims=dropped,
            timings_ms=(*answer.trace.timings_ms, ("compose_llm", milliseconds)),
        )
        return replace(answer, trace=trace)
