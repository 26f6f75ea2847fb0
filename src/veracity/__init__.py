"""veracity: governed, evidence-first retrieval with warranted answers."""

__version__ = "0.1.0"
