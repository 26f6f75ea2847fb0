"""The OpenAI-compatible client against a real loopback HTTP server, and the ChatModel contract.

Every ChatModel (the scripted fake and the HTTP client) passes the same contract: it returns
the completion's text, fails with ``LLMUnavailableError`` naming a reason, and counts tokens or
says it cannot.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from veracity.model.errors import ConfigError, LLMUnavailableError
from veracity.pipeline.llm.client import ChatModel, LLMSettings, OpenAIChat
from veracity.pipeline.llm.fake import ScriptedChat
from veracity.testing.llm_server import Fault, scripted_server

MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "Question: hi"}]


def _settings(url: str, **options: Any) -> LLMSettings:
    return LLMSettings(url, "scripted", **{"timeout_s": 5.0, "retries": 1, "backoff_s": 0.01, **options})


@pytest.fixture(params=["fake", "http", "http-stream"])
def make_model(request: pytest.FixtureRequest) -> Iterator[Callable[[str | Fault], ChatModel]]:
    """``make_model(reply)``: a ChatModel that answers ``reply`` (text or a failure)."""
    if request.param == "fake":

        def fake(reply: str | Fault) -> ChatModel:
            if isinstance(reply, Fault):
                return ScriptedChat(failure=LLMUnavailableError("scripted", reason="http_error"))
            return ScriptedChat(reply)

        yield fake
        return
    replies: list[str | Fault] = [""]
    with scripted_server(lambda _request: replies[-1]) as endpoint:

        def http(reply: str | Fault) -> ChatModel:
            replies.append(reply)
            return OpenAIChat(_settings(endpoint.base_url, stream=request.param == "http-stream"))

        yield http


def test_contract_text_back(make_model: Callable[[str | Fault], ChatModel]) -> None:
    model = make_model("Paris is the capital [1].")
    completion = model.complete(MESSAGES)
    assert completion.text == "Paris is the capital [1]."
    assert isinstance(model.model_id, str) and model.model_id


def test_contract_failure_names_a_reason(make_model: Callable[[str | Fault], ChatModel]) -> None:
    model = make_model(Fault(status=500))
    with pytest.raises(LLMUnavailableError) as caught:
        model.complete(MESSAGES)
    assert caught.value.reason == "http_error"


def test_contract_counts_tokens_or_says_unknown(make_model: Callable[[str | Fault], ChatModel]) -> None:
    counted = make_model("x").count_tokens("three little words")
    assert counted is None or counted > 0


def test_request_carries_model_messages_and_bearer_key() -> None:
    seen: list[Any] = []
    with scripted_server(lambda request: seen.append(request) or "ok [1]") as endpoint:
        chat = OpenAIChat(_settings(endpoint.base_url, api_key="sk-secret-123"))
        assert chat.complete(MESSAGES).text == "ok [1]"
    assert seen[0]["model"] == "scripted" and seen[0]["messages"][1]["content"] == "Question: hi"
    assert "sk-secret-123" not in repr(chat) and "sk-secret-123" not in repr(chat.settings)


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (Fault(status=429, retry_after=0), "rate_limited"),
        (Fault(status=503), "http_error"),
        (Fault(status=401), "http_error"),
        (Fault(body=b"<html>not json</html>"), "malformed"),
        (Fault(body=b'{"choices": []}'), "malformed"),
        (Fault(delay_s=1.5, text="late"), "timeout"),
        (Fault(text="one two three four five six", cut_after=3), "stream_cut"),
    ],
)
def test_failures_become_llm_unavailable_with_their_reason(fault: Fault, reason: str) -> None:
    with scripted_server(lambda _request: fault) as endpoint:
        chat = OpenAIChat(_settings(endpoint.base_url, timeout_s=1.0, stream=fault.cut_after is not None))
        with pytest.raises(LLMUnavailableError) as caught:
            chat.complete(MESSAGES)
    assert caught.value.reason == reason


def test_transient_failures_are_retried_with_backoff() -> None:
    replies = iter([Fault(status=503), Fault(status=429, retry_after=0), "fine [1]"])
    with scripted_server(lambda _request: next(replies)) as endpoint:
        completion = OpenAIChat(_settings(endpoint.base_url, retries=2)).complete(MESSAGES)
    assert completion.text == "fine [1]" and completion.attempts == 3


def test_a_client_error_is_not_retried() -> None:
    calls: list[int] = []
    with scripted_server(lambda _request: calls.append(1) or Fault(status=404)) as endpoint:
        with pytest.raises(LLMUnavailableError):
            OpenAIChat(_settings(endpoint.base_url, retries=3)).complete(MESSAGES)
    assert len(calls) == 1


def test_streamed_pieces_are_joined() -> None:
    with scripted_server(lambda _request: "Team 计划 不能 再用 SAML [1]。") as endpoint:
        completion = OpenAIChat(_settings(endpoint.base_url, stream=True)).complete(MESSAGES)
    assert completion.text == "Team 计划 不能 再用 SAML [1]。" and completion.first_token_seconds is not None


def test_endpoint_down_is_unreachable() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    chat = OpenAIChat(_settings(f"http://127.0.0.1:{port}/v1", retries=0))
    with pytest.raises(LLMUnavailableError) as caught:
        chat.complete(MESSAGES)
    assert caught.value.reason == "unreachable"


def test_llama_cpp_tokenizer_counts_with_the_server() -> None:
    with scripted_server() as endpoint:
        chat = OpenAIChat(_settings(endpoint.base_url, tokenizer="llama.cpp"))
        assert chat.count_tokens("three little words") == 3


@pytest.mark.parametrize(
    "options",
    [{"base_url": "ftp://x/v1"}, {"model": " "}, {"timeout_s": 0}, {"tokenizer": "tiktoken"}],
)
def test_bad_settings_are_config_errors(options: dict[str, Any]) -> None:
    values = {"base_url": "http://127.0.0.1:8080/v1", "model": "m", **options}
    with pytest.raises(ConfigError):
        LLMSettings(**values)
