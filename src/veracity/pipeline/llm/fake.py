"""A scripted :class:`~veracity.pipeline.llm.client.ChatModel` for tests: no network, no model.

``ScriptedChat(reply)`` answers every request with ``reply(messages)`` (or the fixed text
``reply``); ``ScriptedChat(failure=LLMUnavailableError(...))`` fails every request the way an
endpoint would. It records the messages it was sent, so a test can read the prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...model.errors import LLMUnavailableError
from .client import Completion, Message
from .stream import heard

Reply = Callable[[Sequence[Message]], str]
STREAM_PIECE = 7
"""Characters per streamed piece of the fake chat model (tests see claims cut mid-word)."""


class ScriptedChat:
    """See the module docstring."""

    model_id = "scripted"

    def __init__(self, reply: Reply | str = "", *, failure: LLMUnavailableError | None = None) -> None:
        """Answer with ``reply`` (text, or a function of the messages), or raise ``failure``."""
        self._reply = reply
        self._failure = failure
        self.requests: list[list[Message]] = []

    def complete(self, messages: Sequence[Message]) -> Completion:
        """The scripted reply, or the scripted failure."""
        self.requests.append(list(messages))
        if self._failure is not None:
            raise self._failure
        text = self._reply(messages) if callable(self._reply) else self._reply
        for end in range(
            0, len(text), STREAM_PIECE
        ):  # as a streamed reply arrives, a few characters at a time
            heard(text[:end])
        heard(text)
        return Completion(text=text, finish_reason="stop")

    def count_tokens(self, text: str) -> int | None:
        """Unknown: the composer estimates."""
        return None
