"""Adapters for where people already build: thin layers over the public API.

- :mod:`.langchain`: a LangChain retriever and a runnable for the governed answer
  (``pip install 'veracity[langchain]'``);
- :mod:`.llama_index`: a LlamaIndex retriever and query engine (``'veracity[llama-index]'``);
- :mod:`.mcp`: a Model Context Protocol server over stdio (``'veracity[mcp]'``).

Each one fixes the principal when it is built (or takes it from an API key) and
calls :meth:`veracity.kb.local.LocalKnowledgeBase.search` / ``ask`` or the
service gateway; none repeats any governance logic, so a document a principal
may not see never appears through any of them.
"""
