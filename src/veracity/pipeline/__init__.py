"""The online answer pipeline, stage by stage.

:mod:`.retrieve` (eligibility → recall → :mod:`.fusion` → :mod:`.rerank` →
return gate) → :mod:`.evidence` (dedup, :mod:`.injection` quarantine, facts,
conflicts) → :mod:`.answer` (policy, extractive composer, citation checks) →
:mod:`.trace`. :mod:`.engine` holds ``Engine`` and ``Answer``;
:mod:`.render` turns answers, documents and chunks into plain data and text.
"""
