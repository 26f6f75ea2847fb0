"""A real model behind a server the user started (llama.cpp's ``llama-server``, Ollama, vLLM, …).

Skipped unless ``VERACITY_TEST_LLM_URL`` names its base URL (``http://127.0.0.1:8080/v1``);
``VERACITY_TEST_LLM_MODEL`` names the model (default ``local``, which llama-server ignores) and
``VERACITY_TEST_LLM_TOKENIZER=llama.cpp`` counts tokens with the server. Nothing here checks what
the model writes word for word: only that the contract holds with a real model, on the demo's
questions, whatever it writes (its claims verified or dropped, never a better status than the
extractive answer's, the extractive answer when nothing verifies).
"""

from __future__ import annotations

import os

import pytest

from veracity.fixtures import TenantConfig
from veracity.model.contracts import AnswerStatus, Principal
from veracity.pipeline.answer import verify_claims
from veracity.pipeline.engine import Engine
from veracity.pipeline.llm.client import LLMSettings, OpenAIChat
from veracity.pipeline.llm.composer import LLMComposer

URL = os.environ.get("VERACITY_TEST_LLM_URL")
RANK = {AnswerStatus.ABSTAIN: 0, AnswerStatus.PARTIAL: 1, AnswerStatus.ANSWER: 2}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not URL, reason="set VERACITY_TEST_LLM_URL to a running OpenAI-compatible server"),
]


@pytest.mark.parametrize(
    "question",
    ["3.2 的 Team 能用 SAML 吗", "3.2 的 Team 能用 SAML 吗？3.2 支持量子加密登录吗？"],
)
def test_a_local_model_keeps_the_contract(
    demo_kb: Engine, config: TenantConfig, question: str
) -> None:
    asker = Principal.of(config.tenant, "public")
    extractive = demo_kb.ask(question, asker, "3.2", config.as_of)
    settings = LLMSettings(
        str(URL),
        os.environ.get("VERACITY_TEST_LLM_MODEL", "local"),
        timeout_s=300.0,
        stream=True,
        tokenizer=os.environ.get("VERACITY_TEST_LLM_TOKENIZER") or None,
    )
    demo_kb.composer = LLMComposer(OpenAIChat(settings), context_tokens=settings.context_tokens)
    try:
        written = demo_kb.ask(question, asker, "3.2", config.as_of)
    finally:
        demo_kb.composer = None
    composer = dict(written.trace.composer)
    assert composer["outcome"] != "llm_unavailable", composer.get("error")
    assert RANK[written.status] <= RANK[extractive.status] and written.claims
    verify_claims(written.claims, written.citations)
    assert int(composer["claims_verified"]) <= int(composer["claims_written"])
