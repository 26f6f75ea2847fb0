"""The guard: a classifier, fine-tuned here, of whether a text gives orders to the model reading it
(see :mod:`veracity.guard.model`)."""

from .model import GuardModel, GuardVerdict, load_guard, score_texts

__all__ = ["GuardModel", "GuardVerdict", "load_guard", "score_texts"]
