"""Injection verdicts judged at ingest and read by asks: the same verdicts, judged once."""

from __future__ import annotations

import pytest

from veracity.kb.directory import open_kb
from veracity.kb.local import LocalKnowledgeBase
from veracity.kb.verdicts import texts_to_judge
from veracity.model.contracts import Trust
from veracity.pipeline import injection


def _same(answer):
    """An answer without its timings (the only part two runs may differ in)."""
    from dataclasses import replace

    return replace(answer, trace=replace(answer.trace, timings_ms=()))


def _rows(store) -> dict[str, tuple[str, ...]]:
    import json

    return {k: tuple(json.loads(s)) for k, s in store.connection.execute("SELECT * FROM injection_verdicts")}


def test_every_non_official_text_is_judged_once_at_ingest(demo_kb_dir) -> None:
    kb = open_kb(demo_kb_dir)
    try:
        catalog, stored = kb.catalog, _rows(kb.catalog.store)
        expected = {}
        for document in catalog.documents():
            for text, heading in texts_to_judge(document, catalog.chunks(document.document_id)):
                expected[injection.verdict_key(text, heading)] = injection.detect(text, heading).signals
        assert expected and stored == expected  # judged exactly as an ask would judge them
        official = [d for d in catalog.documents() if d.trust is Trust.OFFICIAL]
        assert official and all(not texts_to_judge(d, catalog.chunks(d.document_id)) for d in official)
        assert any(signals for signals in stored.values())  # the demo's injected page is among them
    finally:
        kb.catalog.store.close()


def test_asks_read_the_stored_verdicts_and_answer_the_same(demo_kb_dir, monkeypatch, config) -> None:
    kb = LocalKnowledgeBase(open_kb(demo_kb_dir), demo_kb_dir)
    try:
        before = kb.ask(config.running_question)
        assert before.trace.quarantined  # the demo's injected community page is held back

        def judged_again(*args, **kwargs):
            raise AssertionError(f"an ask judged a text the ingest had judged: {args!r:.200}")

        monkeypatch.setattr(injection, "detect", judged_again)
        again = kb.ask(config.running_question)
        assert _same(again) == _same(before)
    finally:
        kb.close()


def test_a_new_detector_judges_again_and_reindex_stores_it(demo_kb_dir, monkeypatch, config) -> None:
    from veracity.kb.reindex import rebuild

    engine = open_kb(demo_kb_dir)
    kb = LocalKnowledgeBase(engine, demo_kb_dir)
    try:
        before = kb.ask(config.running_question)
        stored = len(_rows(engine.catalog.store))
        monkeypatch.setattr(injection, "detector_version", lambda: "cues-a-newer-one")
        judged = []
        real = injection.detect
        monkeypatch.setattr(injection, "detect", lambda *a, **k: judged.append(a) or real(*a, **k))
        assert _same(kb.ask(config.running_question)) == _same(before) and judged  # old verdicts are not read
        rebuild(engine, demo_kb_dir)
        assert len(_rows(engine.catalog.store)) == 2 * stored  # the newer detector's, beside the old
        judged.clear()
        assert _same(kb.ask(config.running_question)) == _same(before) and not judged
    finally:
        kb.close()


@pytest.mark.parametrize("trust", [Trust.COMMUNITY, Trust.UNTRUSTED])
def test_untrusted_pages_are_judged_whole_too(trust) -> None:
    from veracity.fixtures import fixture_documents

    document = next(d for d in fixture_documents() if d.trust is Trust.COMMUNITY)
    from dataclasses import replace

    texts = texts_to_judge(replace(document, trust=trust), [])
    assert texts == ([] if trust is Trust.COMMUNITY else [(document.body, ())])


def test_the_service_reads_them_too_on_its_reranking_thread(served_kb, monkeypatch) -> None:
    """The gateway reranks on a helper thread (for its timeout): the stored verdicts go along."""
    from veracity.kb.gateway import Gateway

    gate = Gateway.open(served_kb[0])
    try:
        caller = gate.admit(served_kb[1].public)
        question = "我们正在使用 2.8 的 Team 计划和旧 SAML 单点登录。升级到 3.2 后，还能继续使用 SAML 吗？"
        before = gate.ask(caller, question).answer
        gate.cache.clear()

        def judged_again(*args, **kwargs):
            raise AssertionError(f"an ask judged a text the ingest had judged: {args!r:.200}")

        monkeypatch.setattr(injection, "detect", judged_again)
        again = gate.ask(caller, question)
        assert _same(again.answer) == _same(before) and not again.degraded
    finally:
        gate.close()


def test_a_delete_leaves_no_verdict_of_the_document(demo_kb_dir) -> None:
    from veracity.kb.lifecycle import delete

    engine = open_kb(demo_kb_dir)
    try:
        catalog = engine.catalog
        judged = next(d for d in catalog.documents() if texts_to_judge(d, catalog.chunks(d.document_id)))
        texts = texts_to_judge(judged, catalog.chunks(judged.document_id))
        keys = {injection.verdict_key(text, heading) for text, heading in texts}
        before = _rows(catalog.store)
        assert keys <= set(before)
        delete(engine, demo_kb_dir, judged.document_id)
        after = _rows(catalog.store)
        assert not keys & set(after) and set(after) == set(before) - keys  # the others stay
    finally:
        engine.catalog.store.close()
