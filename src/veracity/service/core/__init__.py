"""The serving core: what a service does for each request, apart from HTTP.

:mod:`.gateway` admits a key and answers for it (cache, sessions, degradation, the live
re-check); :mod:`.rate_limits` (per key), :mod:`.cache` and :mod:`.shared` (the answer cache and
its second level), :mod:`.degrade` (answers without a failing part), :mod:`.sessions` and
:mod:`.flight` (engines per request, one computation per key), :mod:`.visible`, :mod:`.served`,
:mod:`.operate`, :mod:`.admin`, :mod:`.page_images` (what a key may see and do),
:mod:`.conversations`, :mod:`.feedback` and :mod:`.streaming`. It needs no web framework: the
routes (:mod:`veracity.service.api` and its siblings) are thin shells over it, and the MCP server
uses it too. API keys stay with the knowledge base (:mod:`veracity.kb.keys`).
"""
