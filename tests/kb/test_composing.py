"""Which composer writes a knowledge base's answers: options over the stored setting over the
extractive default; the key only from the environment; a served knowledge base uses its setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from veracity.kb.composing import LLMOptions, make_composer
from veracity.kb.local import open_local
from veracity.model.errors import ConfigError
from veracity.pipeline.llm.client import OpenAIChat
from veracity.pipeline.llm.composer import LLMComposer
from veracity.service.core.gateway import Gateway
from veracity.testing.llm_server import faithful_reply, scripted_server

STORED = {"base_url": "http://127.0.0.1:9/v1", "model": "stored", "timeout_s": 5.0}


def _model(composer: object) -> OpenAIChat:
    assert isinstance(composer, LLMComposer) and isinstance(composer.model, OpenAIChat)
    return composer.model


def test_the_extractive_composer_is_the_default() -> None:
    assert make_composer(LLMOptions(), {}) is None
    assert make_composer(LLMOptions(composer="extractive"), STORED) is None


def test_options_override_the_stored_setting_and_the_key_comes_from_the_environment() -> None:
    environ = {"VERACITY_LLM_API_KEY": "sk-zz9"}
    model = _model(make_composer(LLMOptions(model="given"), STORED, environ=environ))
    settings = model.settings
    assert (settings.base_url, settings.model, settings.timeout_s, settings.api_key) == (
        STORED["base_url"], "given", 5.0, "sk-zz9",
    )  # fmt: skip
    other = dict(STORED, api_key_env="OTHER_KEY")
    assert _model(make_composer(LLMOptions(), other, environ={"OTHER_KEY": "o"})).settings.api_key == "o"
    assert "sk-zz9" not in repr(model) + repr(settings)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"base_url": "http://h/v1", "model": "m", "api_key": "x"}, "stays in the environment"),
        ({"base_url": "http://h/v1", "model": "m", "colour": "red"}, "unknown LLM setting"),
        ({"model": "m"}, "--llm-base-url"),
        ({"base_url": "http://h/v1", "model": "m", "timeout_s": -1}, "out of range"),
    ],
)
def test_a_bad_stored_setting_is_refused(demo_kb_dir: Path, values: dict[str, object], message: str) -> None:
    with open_local(demo_kb_dir, create=False) as kb, pytest.raises(ConfigError, match=message):
        kb.set_llm(values)


def test_a_served_knowledge_base_writes_with_its_stored_setting(served_kb: tuple[Path, object]) -> None:
    folder, keys = served_kb
    with scripted_server(faithful_reply) as endpoint:
        with open_local(folder, create=False) as kb:
            kb.set_llm({"base_url": endpoint.base_url, "model": "scripted"})
        gate = Gateway.open(folder)
        try:
            served = gate.ask(gate.admit(keys.public), "3.2 的 Team 能用 SAML 吗", version="3.2")  # type: ignore[attr-defined]
        finally:
            gate.close()
    assert served.answer.claims and all(c.composer == "llm" for c in served.answer.claims)
    assert endpoint.requests
