"""OCR: text with boxes and confidences from page images (the optional ``ocr`` extra).

Two engines, both offline, both installed from package registries:

- ``rapidocr`` (the default): ``rapidocr-onnxruntime``, whose wheel ships
  PP-OCRv4 detection and recognition models for Chinese and English. It
  returns one box per text line, with a confidence per line.
- ``tesseract``: Debian's ``tesseract-ocr`` with ``tesseract-ocr-chi-sim`` and
  ``tesseract-ocr-eng``, driven through ``pytesseract``. It returns words with
  a confidence each.

The default was chosen by measurement on pages rendered from known text
(``benchmarks/bench_ocr.py``, the README's OCR table): it is the more
accurate on Chinese, where Tesseract loses characters and swaps punctuation.
:func:`ocr_page` turns one image into a :class:`~veracity.parse.layout.PageText`
of positioned words, the input the layout and structure steps share with
the PDF text layer.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from ..model.errors import ConfigError
from ..model.registry import OCR_ENGINES
from .errors import MissingExtraError
from .layout import PageText, Word

__all__ = [
    "DEFAULT_SETTINGS",
    "OcrEngine",
    "OcrSettings",
    "RapidOcrEngine",
    "TesseractEngine",
    "ocr_engine",
    "ocr_page",
]


@dataclass(frozen=True, slots=True)
class OcrSettings:
    """How scanned pages and images are read.

    ``engine`` names the OCR engine (``rapidocr``, ``tesseract`` or one a plugin registers:
    :data:`veracity.model.registry.OCR_ENGINES`); ``dpi`` is the resolution image-only PDF
    pages are rendered at; ``languages`` are Tesseract's language packs
    (RapidOCR's models read Chinese and English together); ``threads`` caps the
    engine's threads (``None``: the engine's default, every core).
    """

    engine: str = "rapidocr"
    dpi: int = 300
    languages: str = "chi_sim+eng"
    threads: int | None = None

    def __post_init__(self) -> None:
        if self.engine not in OCR_ENGINES:
            raise ConfigError(
                f"unknown OCR engine {self.engine!r}; valid values: {', '.join(sorted(OCR_ENGINES))}"
            )
        if not 72 <= self.dpi <= 1200:
            raise ConfigError(f"OCR dpi must be between 72 and 1200, got {self.dpi!r}")
        if self.threads is not None and self.threads < 1:
            raise ConfigError(f"OCR threads must be at least 1, got {self.threads!r}")


DEFAULT_SETTINGS = OcrSettings()


class OcrEngine(Protocol):
    """Reads an image into positioned words (pixel coordinates, origin top left)."""

    name: str

    def read(self, image: Any) -> list[Word]:
        """Words found in ``image`` (a Pillow image), each with its box, size and confidence (0–1)."""
        ...


def _missing(source: str, module: str) -> MissingExtraError:
    return MissingExtraError(path=source, fmt="scanned pages and images (OCR)", extra="ocr", module=module)


class RapidOcrEngine:
    """``rapidocr-onnxruntime``: one word per detected text line, with the line's confidence."""

    name = "rapidocr"

    def __init__(self, threads: int | None = None, *, source: str = "<ocr>") -> None:
        """Load the shipped models (once per process and thread count; see :func:`ocr_engine`)."""
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError:
            raise _missing(source, "rapidocr-onnxruntime") from None
        # the text-angle classifier is off: on upright pages rendered from known text it turned
        # whole Chinese lines upside down and lost them (benchmarks/bench_ocr.py; the README's table)
        options: dict[str, Any] = {"use_cls": False}
        if threads is not None:
            options |= {"intra_op_num_threads": threads, "inter_op_num_threads": 1}
        self._engine = RapidOCR(**options)

    def read(self, image: Any) -> list[Word]:
        """Detected lines as words; the box height stands in for the font size."""
        import numpy as np

        result, _ = self._engine(np.asarray(image.convert("RGB")))
        words: list[Word] = []
        for polygon, text, score in result or ():
            xs = [float(point[0]) for point in polygon]
            ys = [float(point[1]) for point in polygon]
            top, bottom = min(ys), max(ys)
            if text.strip():
                size = _size(bottom - top)
                words.append(Word(text.strip(), min(xs), top, max(xs), bottom, size, False, float(score)))
        return words


class TesseractEngine:
    """Tesseract through ``pytesseract``: words with a confidence each."""

    name = "tesseract"

    def __init__(self, languages: str = "chi_sim+eng", threads: int | None = None, *, source: str = "<ocr>"):
        """Check that the ``tesseract`` program and the language packs are installed."""
        try:
            import pytesseract
        except ImportError:
            raise _missing(source, "pytesseract") from None
        try:
            installed = set(pytesseract.get_languages(config=""))
        except (pytesseract.TesseractNotFoundError, OSError):
            raise ConfigError(
                "the tesseract program is not installed; install it with: "
                "apt-get install tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-eng"
            ) from None
        missing = [lang for lang in languages.split("+") if lang not in installed]
        if missing:
            packs = " ".join("tesseract-ocr-" + lang.replace("_", "-") for lang in missing)
            raise ConfigError(f"Tesseract has no language pack for {', '.join(missing)}; install {packs}")
        self._tesseract = pytesseract
        self._languages = languages
        self._threads = threads

    def read(self, image: Any) -> list[Word]:
        """Words with their boxes; a line's height stands in for each word's font size."""
        environment = {"OMP_THREAD_LIMIT": str(self._threads)} if self._threads else {}
        with _environment(environment):
            data = self._tesseract.image_to_data(
                image, lang=self._languages, output_type=self._tesseract.Output.DICT
            )
        heights: dict[tuple[int, int, int], float] = {}
        keys = list(zip(data["block_num"], data["par_num"], data["line_num"], strict=True))
        for key, height, text in zip(keys, data["height"], data["text"], strict=True):
            if str(text).strip():
                heights[key] = max(heights.get(key, 0.0), float(height))
        found: list[tuple[tuple[int, int, int], Word]] = []
        for index, text in enumerate(data["text"]):
            text = str(text).strip()
            confidence = float(data["conf"][index])
            if not text or confidence < 0:
                continue
            left, top = float(data["left"][index]), float(data["top"][index])
            width, height = float(data["width"][index]), float(data["height"][index])
            line_height = heights.get(keys[index], height)
            size = _size(line_height)
            word = Word(text, left, top, left + width, top + height, size, False, confidence / 100)
            found.append((keys[index], word))
        return _clip(found)


def _clip(found: list[tuple[tuple[int, int, int], Word]]) -> list[Word]:
    """Words whose box runs over the next word of the same Tesseract line end where it starts.

    Tesseract sometimes boxes a Chinese word across most of its line; left as
    is, that word would read as a line of its own, out of order.
    """
    words: list[Word] = []
    for index, (key, word) in enumerate(found):
        following = found[index + 1] if index + 1 < len(found) else None
        if following is not None and following[0] == key and word.x0 < following[1].x0 < word.x1:
            word = Word(word.text, word.x0, word.top, following[1].x0, word.bottom, word.size, word.bold,
                        word.confidence)  # fmt: skip
        words.append(word)
    return words


_ENV_LOCK = threading.Lock()


class _environment:
    """Set environment variables for a child process started inside the block."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values
        self.saved: dict[str, str | None] = {}

    def __enter__(self) -> None:
        if self.values:
            _ENV_LOCK.acquire()
            self.saved = {key: os.environ.get(key) for key in self.values}
            os.environ.update(self.values)

    def __exit__(self, *_: object) -> None:
        if self.values:
            for key, value in self.saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            _ENV_LOCK.release()


def _size(box_height: float) -> float:
    """A font size from a text box height (boxes hold ascenders and descenders), to 1 px."""
    return float(max(1, round(box_height * 0.8)))


_ENGINES: dict[tuple[str, str, int | None], OcrEngine] = {}
_ENGINES_LOCK = threading.Lock()


def ocr_engine(settings: OcrSettings = DEFAULT_SETTINGS, *, source: str = "<ocr>") -> OcrEngine:
    """The engine ``settings`` name, loaded once per process (models take a while to load).

    Raises ``MissingExtraError`` naming ``pip install 'veracity[ocr]'`` when the
    engine's package is missing, ``ConfigError`` when Tesseract or a language
    pack is.
    """
    key = (settings.engine, settings.languages, settings.threads)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = OCR_ENGINES[settings.engine](settings, source=source)
            _ENGINES[key] = engine
        return engine


def rapidocr_engine(settings: OcrSettings, *, source: str = "<ocr>") -> OcrEngine:
    """The ``rapidocr`` engine for ``settings`` (its thread cap)."""
    return RapidOcrEngine(settings.threads, source=source)


def tesseract_engine(settings: OcrSettings, *, source: str = "<ocr>") -> OcrEngine:
    """The ``tesseract`` engine for ``settings`` (its language packs and thread cap)."""
    return TesseractEngine(settings.languages, settings.threads, source=source)


def ocr_page(image: Any, number: int, engine: OcrEngine, *, scale: float = 1.0) -> PageText:
    """One page image read by ``engine``: its words, marked as OCR'd, in pixels divided by ``scale``.

    A PDF page rendered at ``dpi`` passes ``scale=dpi / 72``, so its words are
    in points like the text layer's and font sizes compare across the file.
    """
    words = tuple(engine.read(image))
    if scale != 1.0:
        words = tuple(
            Word(w.text, w.x0 / scale, w.top / scale, w.x1 / scale, w.bottom / scale,
                 round(w.size / scale * 2) / 2, w.bold, w.confidence)
            for w in words
        )  # fmt: skip
    return PageText(number, image.width / scale, image.height / scale, words, source="ocr")
