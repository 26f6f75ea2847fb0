"""The injection detector: retrieved text that tries to give orders to the engine or the model.

Its own package, with its data (``injection.json``, the cue words): the answer step (retrieval,
rerank, evidence, decision, the LLM claim check) and the knowledge base import it only through
the names below (``tests/test_layers.py`` checks it). Inside:

- :mod:`.detector`: the scorer, its verdicts, their storage keys and the trained guard's switch;
- :mod:`.signals`: the features of a sentence read with its context;
- :mod:`.cues` and :mod:`.cue_words`: the cue-word families per language;
- :mod:`.address`: who a sentence speaks to (the model, the user).
"""

from __future__ import annotations

from .address import MODEL_TURN
from .detector import (
    MODEL_FILE,
    DetectorModel,
    Verdict,
    VerdictStore,
    deciding_version,
    default_model,
    detect,
    detector_version,
    document_taint,
    guard_in_use,
    hold_back,
    instruction_signals,
    judged_signals,
    must_quarantine,
    prefetch_verdicts,
    stored_verdicts,
    use_guard,
    verdict_key,
    verdict_keys,
)

__all__ = [
    "MODEL_FILE",
    "MODEL_TURN",
    "DetectorModel",
    "Verdict",
    "VerdictStore",
    "deciding_version",
    "default_model",
    "detect",
    "detector_version",
    "document_taint",
    "guard_in_use",
    "hold_back",
    "instruction_signals",
    "judged_signals",
    "must_quarantine",
    "prefetch_verdicts",
    "stored_verdicts",
    "use_guard",
    "verdict_key",
    "verdict_keys",
]
