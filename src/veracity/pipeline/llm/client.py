"""A chat model behind a protocol, and a client for any OpenAI-compatible chat-completions endpoint.

:class:`OpenAIChat` speaks the ``POST {base_url}/chat/completions`` protocol that OpenAI,
vLLM, Ollama (``http://127.0.0.1:11434/v1``), llama.cpp's ``llama-server``
(``http://127.0.0.1:8080/v1``) and LM Studio serve. It uses only the standard library
(``http.client``), so the core install needs nothing more.

Failures become :class:`~veracity.model.errors.LLMUnavailableError` with a ``reason``:

- ``unreachable`` (connection refused, DNS), ``timeout`` (no answer within ``timeout_s``,
  the whole request counted), ``rate_limited`` (HTTP 429), ``http_error`` (another status),
  ``malformed`` (no JSON, or no message in it), ``stream_cut`` (a stream that ended before the
  model finished).

Connection failures, timeouts, 429, 5xx and cut streams are retried ``retries`` times with
exponential backoff (``backoff_s``, doubled each time; a 429's ``Retry-After`` is honoured up to
:data:`MAX_RETRY_AFTER_S`); other failures are not, since asking again gets the same answer.
The API key is sent as a bearer token and appears in no message, ``repr`` or trace.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, runtime_checkable
from urllib.parse import urlsplit

from ...model.errors import ConfigError, LLMUnavailableError
from .stream import TEXT_LISTENER, heard

Message = Mapping[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": text}``."""

MAX_RETRY_AFTER_S: Final = 10.0
"""The longest a 429's ``Retry-After`` is waited for; past it the answer degrades instead."""
RETRIED_STATUSES: Final = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """Where the model is and how to talk to it.

    ``base_url`` ends where ``/chat/completions`` starts (``http://127.0.0.1:8080/v1``).
    ``tokenizer="llama.cpp"`` counts prompt tokens with the server's own tokenizer
    (``POST /tokenize``); otherwise they are estimated
    (:func:`veracity.pipeline.llm.context.estimate_tokens`).
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 60.0
    retries: int = 2
    backoff_s: float = 0.5
    stream: bool = False
    max_tokens: int = 512
    temperature: float = 0.0
    context_tokens: int = 2048
    tokenizer: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"LLM base URL {self.base_url!r} is not an http(s) URL; give one such as "
                "http://127.0.0.1:8080/v1 (llama.cpp) or http://127.0.0.1:11434/v1 (Ollama)"
            )
        if not self.model.strip():
            raise ConfigError("the LLM model name is empty; give the name the endpoint serves (--llm-model)")
        if self.timeout_s <= 0 or self.retries < 0 or self.backoff_s < 0 or self.context_tokens < 64:
            raise ConfigError(
                "LLM settings out of range: timeout_s > 0, retries >= 0, backoff_s >= 0, context_tokens >= 64"
            )
        if self.tokenizer not in (None, "llama.cpp"):
            raise ConfigError(f"unknown LLM tokenizer {self.tokenizer!r}; valid: llama.cpp (or none)")


@dataclass(frozen=True, slots=True)
class Completion:
    """What the model wrote, and what it cost."""

    text: str
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0
    first_token_seconds: float | None = None
    attempts: int = 1


@runtime_checkable
class ChatModel(Protocol):
    """A chat model: messages in, one completion out.

    ``complete`` raises :class:`~veracity.model.errors.LLMUnavailableError` (with its
    ``reason``) when no usable completion came back; ``count_tokens`` returns the model's own
    token count of a text, or ``None`` when the model's tokenizer is not known.
    """

    model_id: str

    def complete(self, messages: Sequence[Message]) -> Completion:
        """One completion of ``messages``."""
        ...

    def count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` by the model's tokenizer, ``None`` when unknown."""
        ...


class _Retry(Exception):
    def __init__(self, reason: str, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.wait = wait


class OpenAIChat:
    """A :class:`ChatModel` over an OpenAI-compatible endpoint (see the module docstring)."""

    def __init__(self, settings: LLMSettings) -> None:
        """Talk to ``settings.base_url`` as ``settings.model``."""
        self.settings = settings
        self.model_id = settings.model
        parts = urlsplit(settings.base_url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._path = parts.path.rstrip("/")

    def __repr__(self) -> str:
        return f"<OpenAIChat {self.settings.base_url} model={self.settings.model!r}>"

    # -- transport ----------------------------------------------------------------

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return kind(self._host, self._port, timeout=timeout)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    def complete(self, messages: Sequence[Message]) -> Completion:
        """One completion, retried as the module docstring says."""
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [dict(m) for m in messages],
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_tokens,
            # streamed when asked for, or when a caller shows the claims as they are written
            "stream": self.settings.stream or TEXT_LISTENER.get() is not None,
        }
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                completion = self._once(payload, started)
                return Completion(
                    text=completion.text,
                    finish_reason=completion.finish_reason,
                    prompt_tokens=completion.prompt_tokens,
                    completion_tokens=completion.completion_tokens,
                    seconds=time.monotonic() - started,
                    first_token_seconds=completion.first_token_seconds,
                    attempts=attempt,
                )
            except _Retry as exc:
                if attempt > self.settings.retries:
                    raise LLMUnavailableError(
                        f"the language model at {self.settings.base_url} failed after {attempt} "
                        f"attempts: {exc}",
                        reason=exc.reason,
                    ) from None
                delay = self.settings.backoff_s * 2 ** (attempt - 1)
                if exc.wait is not None:
                    delay = max(delay, exc.wait)
                if exc.wait is not None and exc.wait > MAX_RETRY_AFTER_S:
                    raise LLMUnavailableError(
                        f"the language model at {self.settings.base_url} asks to wait {exc.wait:.0f} s",
                        reason=exc.reason,
                    ) from None
                time.sleep(delay)

    def _once(self, payload: bytes, started: float) -> Completion:
        remaining = self.settings.timeout_s - (time.monotonic() - started)
        if remaining <= 0:
            raise _Retry("timeout", f"no answer within {self.settings.timeout_s:g} s")
        connection = self._connection(remaining)
        try:
            connection.request(
                "POST", f"{self._path}/chat/completions", body=payload, headers=self._headers()
            )
            response = connection.getresponse()
            status = response.status
            if status in RETRIED_STATUSES:
                wait = _retry_after(response.getheader("Retry-After")) if status == 429 else None
                response.read()
                reason = "rate_limited" if status == 429 else "http_error"
                raise _Retry(reason, f"HTTP {status}", wait)
            if status != 200:
                response.read()
                raise LLMUnavailableError(
                    f"the language model at {self.settings.base_url} answered HTTP {status}; "
                    "check --llm-base-url, --llm-model and VERACITY_LLM_API_KEY",
                    reason="http_error",
                )
            kind = response.getheader("Content-Type") or ""
            if "text/event-stream" in kind:
                return _read_stream(response, started, self.settings.timeout_s)
            return _read_json(response.read())
        except TimeoutError:
            raise _Retry("timeout", f"no answer within {self.settings.timeout_s:g} s") from None
        except (ConnectionError, OSError, http.client.HTTPException) as exc:
            if isinstance(exc, http.client.IncompleteRead):
                raise _Retry("stream_cut", "the response ended early") from None
            raise _Retry("unreachable", f"{type(exc).__name__}") from None
        finally:
            connection.close()

    def count_tokens(self, text: str) -> int | None:
        """llama.cpp's count (``POST /tokenize``) when ``tokenizer="llama.cpp"``; else ``None``."""
        if self.settings.tokenizer != "llama.cpp":
            return None
        root = self._path[: -len("/v1")] if self._path.endswith("/v1") else self._path
        connection = self._connection(self.settings.timeout_s)
        try:
            body = json.dumps({"content": text}, ensure_ascii=False).encode("utf-8")
            connection.request("POST", f"{root}/tokenize", body=body, headers=self._headers())
            response = connection.getresponse()
            data = json.loads(response.read()) if response.status == 200 else {}
            tokens = data.get("tokens") if isinstance(data, dict) else None
            return len(tokens) if isinstance(tokens, list) else None
        except (OSError, ValueError, http.client.HTTPException):
            return None
        finally:
            connection.close()


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _malformed(what: str) -> LLMUnavailableError:
    return LLMUnavailableError(f"the language model's answer is malformed: {what}", reason="malformed")


def _read_json(raw: bytes) -> Completion:
    """A non-streamed chat completion."""
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        text = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise _malformed("no choices[0].message.content in the JSON") from None
    if not isinstance(text, str):
        raise _malformed("the message content is not text")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Completion(
        text=text,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
    )


def _read_stream(response: http.client.HTTPResponse, started: float, timeout_s: float) -> Completion:
    """A streamed chat completion: server-sent ``data:`` lines up to ``data: [DONE]``."""
    pieces: list[str] = []
    finish: str | None = None
    first: float | None = None
    heard("")  # a new attempt: whatever an earlier, cut one wrote is gone
    usage: dict[str, Any] = {}
    done = False
    while True:
        if time.monotonic() - started > timeout_s:
            raise _Retry("timeout", f"the stream ran past {timeout_s:g} s")
        line = response.readline()
        if not line:
            break
        text = line.decode("utf-8", errors="replace").strip()
        if not text.startswith("data:"):
            continue
        data = text[len("data:") :].strip()
        if data == "[DONE]":
            done = True
            break
        try:
            event = json.loads(data)
            choice = (event.get("choices") or [{}])[0]
        except (ValueError, AttributeError, TypeError):
            raise _malformed("a stream event is not JSON") from None
        if isinstance(event.get("usage"), dict):
            usage = event["usage"]
        delta = choice.get("delta") or {}
        content = delta.get("content") if isinstance(delta, dict) else None
        if isinstance(content, str) and content:
            if first is None:
                first = time.monotonic() - started
            pieces.append(content)
            heard("".join(pieces))
        if choice.get("finish_reason"):
            finish = choice["finish_reason"]
    if not done and finish is None:
        raise _Retry("stream_cut", "the stream ended before the model finished")
    return Completion(
        text="".join(pieces),
        finish_reason=finish,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        first_token_seconds=first,
    )
