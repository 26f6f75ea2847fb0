"""What one source file may cost: bounds checked while it is read, each with its own message.

A bad file (a 49 MB single line, a zip bomb, HTML nested 100,000 deep, a
metadata block of YAML aliases) must cost bounded time and memory and be
rejected by name, while the good files of the same batch go in. Every bound
has a default and can be raised (``veracity ingest --max-text-chars ...``);
a rejection names the file, what it measured and the limit
(:class:`~veracity.parse.errors.LimitExceededError`).

======================  ===========  =================================================
limit                   default      checked
======================  ===========  =================================================
``max_bytes``           50 MiB       file size, before reading
``max_text_chars``      4,000,000    characters after decoding (text formats, markup
                                     included) or after extraction (PDF, DOCX)
``max_chunks``          10,000       chunks of one document, before storing them
``max_unzipped_bytes``  100 MiB      DOCX: bytes its archive expands to (streamed, so
                                     a lying header does not help)
``max_zip_ratio``       100          DOCX: expanded / compressed size of one member
``max_html_depth``      512          HTML: elements nested deeper are read as flat text
                                     (not a rejection; keeps parsing linear)
``max_ocr_pages``       300          scanned PDF pages and image frames read by OCR
                                     (seconds each)
======================  ===========  =================================================

Metadata YAML (front matter, sidecars, ``--metadata``, ``tenant.yaml``) may not
use anchors or aliases at all (:mod:`veracity.parse.yaml_text`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Final

from ..model.errors import ConfigError
from .errors import LimitExceededError

__all__ = ["DEFAULT_LIMITS", "InputLimits", "over_limit"]

MiB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class InputLimits:
    """Bounds on one source file; see the module docstring for what each one bounds."""

    max_bytes: int = 50 * MiB
    max_text_chars: int = 4_000_000
    max_chunks: int = 10_000
    max_unzipped_bytes: int = 100 * MiB
    max_zip_ratio: float = 100.0
    max_html_depth: int = 512
    max_ocr_pages: int = 300

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"{item.name} must be a positive number, got {value!r}")


DEFAULT_LIMITS: Final = InputLimits()


def over_limit(path: str, what: str, value: float, limit: str, allowed: float) -> LimitExceededError:
    """The rejection of ``path``: what was measured, the limit's name and value, and how to raise it.

    ``what`` holds ``{value}`` where the measured value goes (``"the text is {value} characters"``).
    """
    option = "--" + limit.replace("_", "-")
    measured = what.format(value=f"{value:,.0f}")
    return LimitExceededError(
        f"{measured}, over the limit of {allowed:,.0f} ({limit}); split the file, or raise the limit"
        f" ({option} on the command line, InputLimits({limit}=...) in Python)",
        path=path,
        limit=limit,
    )
