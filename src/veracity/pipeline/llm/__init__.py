"""The written answer: a language model writes what the evidence gate covered, and every claim it
writes is verified against the text it cites.

- :mod:`.client`: the :class:`~.client.ChatModel` protocol and its OpenAI-compatible
  chat-completions client (timeouts, retries with backoff, streaming);
  :mod:`.fake`: a scripted model for tests;
- :mod:`.context`: the evidence as numbered, escaped data blocks within a token budget, and the
  prompt around them;
- :mod:`.claims`: splitting the model's text into claims and verifying each one;
- :mod:`.composer`: :class:`~.composer.LLMComposer`, which puts them together after the policy
  decision, with the extractive answer as the floor.
"""
