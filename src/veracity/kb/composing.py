"""Which composer writes a knowledge base's answers, and how to reach its language model.

Configuration, highest first:

- the caller's options (``--composer``, ``--llm-base-url``, ``--llm-model``, ``--llm-timeout``,
  ``--llm-stream``, ``--llm-context-tokens``, ``--llm-tokenizer``);
- the knowledge base's own setting (``kb_settings`` key ``llm``, written by
  ``veracity composer --kb DIR …``): base URL, model, timeout, stream, context budget, tokenizer;
- the default: the extractive composer.

The API key comes only from the environment variable named by ``api_key_env`` (default
:data:`API_KEY_ENV`): a knowledge base file is copied and shared, so it holds no secret, and the
key is never printed, logged or traced.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import apsw

from ..catalog.settings import delete_setting, get_setting, put_setting
from ..model import registry
from ..model.errors import ConfigError
from ..pipeline.composer import Composer

if TYPE_CHECKING:  # the LLM client loads when a composer is made, not for every extractive ask
    from ..pipeline.llm.client import LLMSettings

__all__ = [
    "API_KEY_ENV", "COMPOSERS", "LLMOptions", "llm_composer", "make_composer", "store_llm", "stored_llm",
]  # fmt: skip

API_KEY_ENV: Final = "VERACITY_LLM_API_KEY"
"""The default variable holding the LLM endpoint's API key (a knowledge base stores only the
variable's name, never the key)."""
COMPOSERS: Final = registry.COMPOSERS
"""Composers by name: ``extractive``, ``llm`` and any a plugin registers (:mod:`veracity.model.registry`)."""
_SETTING: Final = "llm"
_STORED_FIELDS: Final = (
    "base_url", "model", "timeout_s", "stream", "context_tokens", "tokenizer", "api_key_env",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class LLMOptions:
    """What a caller said about the composer; ``None`` leaves a field to the stored setting."""

    composer: str | None = None
    base_url: str | None = None
    model: str | None = None
    timeout_s: float | None = None
    stream: bool | None = None
    context_tokens: int | None = None
    tokenizer: str | None = None


def stored_llm(connection: apsw.Connection | None) -> dict[str, Any]:
    """The knowledge base's LLM setting (empty when it has none or lives in memory)."""
    if connection is None:
        return {}
    stored = get_setting(connection, _SETTING)
    return dict(stored) if stored else {}


def store_llm(connection: apsw.Connection, values: Mapping[str, Any] | None) -> dict[str, Any]:
    """Record (``None``: forget) the knowledge base's LLM setting; returns what is stored.

    Checked first: the same rules as the options (an http(s) URL, a model name).
    """
    if values is None:
        delete_setting(connection, _SETTING)
        return {}
    unknown = sorted(set(values) - set(_STORED_FIELDS))
    if unknown or "api_key" in values:
        raise ConfigError(
            f"unknown LLM setting(s) {unknown}; valid: {', '.join(_STORED_FIELDS)} "
            f"(the key itself stays in the environment, {API_KEY_ENV})"
        )
    clean = {k: v for k, v in values.items() if v is not None}
    _settings(clean, None)
    put_setting(connection, _SETTING, clean)
    return clean


def _settings(values: Mapping[str, Any], environ: Mapping[str, str] | None) -> LLMSettings:
    from ..pipeline.llm.client import LLMSettings

    if not values.get("base_url") or not values.get("model"):
        raise ConfigError(
            "the llm composer needs an endpoint and a model: --llm-base-url URL --llm-model NAME "
            "(or store them with 'veracity composer --kb DIR --llm-base-url URL --llm-model NAME')"
        )
    key_env = str(values.get("api_key_env") or API_KEY_ENV)
    options: dict[str, Any] = {
        name: values[name]
        for name in ("timeout_s", "stream", "context_tokens", "tokenizer")
        if values.get(name) is not None
    }
    return LLMSettings(
        base_url=str(values["base_url"]),
        model=str(values["model"]),
        api_key=(environ or {}).get(key_env) or None,
        **options,
    )


def make_composer(
    options: LLMOptions, stored: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> Composer | None:
    """The composer ``options`` and the ``stored`` setting ask for; ``None`` for the extractive one.

    ``--llm-base-url`` alone chooses the llm composer; ``--composer extractive`` turns a stored
    setting off for one call. ``environ`` defaults to the process environment.
    """
    stored = dict(stored or {})
    name = options.composer or ("llm" if options.base_url or stored else "extractive")
    factory = COMPOSERS[name]  # ConfigError naming the valid ones
    if name == "extractive":
        return None
    given = {
        "base_url": options.base_url,
        "model": options.model,
        "timeout_s": options.timeout_s,
        "stream": options.stream,
        "context_tokens": options.context_tokens,
        "tokenizer": options.tokenizer,
    }
    values = {**stored, **{k: v for k, v in given.items() if v is not None}}
    composer: Composer = factory(values, os.environ if environ is None else environ)
    return composer


def llm_composer(values: Mapping[str, Any], environ: Mapping[str, str]) -> Composer:
    """The ``llm`` composer for the settings ``values`` (endpoint, model, …; the key from ``environ``)."""
    from ..pipeline.llm.client import OpenAIChat
    from ..pipeline.llm.composer import LLMComposer

    settings = _settings(values, environ)
    return LLMComposer(OpenAIChat(settings), context_tokens=settings.context_tokens)
