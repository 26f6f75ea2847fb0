"""OCR engines on pages rendered from known text: character error rate and pages per second on one core.

Pages are A4 images rendered with Noto Sans CJK SC (:mod:`veracity.testing.page_images`):
English product-documentation prose and the Chinese paragraphs of the Starship
demo, with their numbers, versions, amounts and percentages, at ``--dpi``
(300 by default) and 11 pt. Each engine reads each page through veracity's
own path (:func:`veracity.parse.ocr.ocr_page`, then lines in reading order,
:mod:`veracity.parse.layout`); the character error rate is the Levenshtein
distance to the known text over the reference length, after NFKC (full-width
and half-width forms compare equal) with whitespace removed. Speed: the
process is pinned to one CPU, RapidOCR runs one ONNX thread and Tesseract
``OMP_THREAD_LIMIT=1``; the time is ``read`` alone (rendering excluded), and
the first page's model load is reported apart. Results go to ``--out`` as JSON.

    python benchmarks/bench_ocr.py                     # 4 pages per language, both engines
    python benchmarks/bench_ocr.py --scale smoke       # 1 page of 4 lines per language
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from veracity.parse.layout import group_lines, reading_order
from veracity.parse.ocr import OcrSettings, ocr_engine, ocr_page
from veracity.testing.page_images import character_error_rate, chinese_lines, english_lines, render_page

LINES_PER_PAGE = 36
SCALES = {"full": (4, LINES_PER_PAGE), "smoke": (1, 4)}
LANGUAGES = {"zh": ("chi_sim", chinese_lines), "en": ("eng", english_lines)}


def _pages(language: str, count: int, lines_per_page: int, dpi: int) -> list[list[str]]:
    lines = LANGUAGES[language][1](dpi=dpi)
    pages = []
    for index in range(count):
        start = (index * lines_per_page) % max(1, len(lines) - lines_per_page)
        pages.append(lines[start : start + lines_per_page])
    return pages


def _text(page: Any) -> str:
    lines = group_lines(page.words, page.number)
    return "\n".join(line.text for line in reading_order(lines) if hasattr(line, "words"))


def measure(engine_name: str, language: str, pages: list[list[str]], dpi: int) -> dict[str, Any]:
    """One engine on one language's pages: CER per page and overall, seconds per page."""
    languages = "chi_sim+eng" if language == "zh" else "eng"
    settings = OcrSettings(engine=engine_name, dpi=dpi, languages=languages, threads=1)  # type: ignore[arg-type]
    start = time.perf_counter()
    engine = ocr_engine(settings)
    load = time.perf_counter() - start
    rates, seconds, characters, confidences = [], [], 0, []
    errors = 0.0
    for number, lines in enumerate(pages, 1):
        image = render_page(lines, dpi=dpi)
        start = time.perf_counter()
        page = ocr_page(image, number, engine)
        seconds.append(time.perf_counter() - start)
        reference = "\n".join(lines)
        rate = character_error_rate(reference, _text(page))
        size = len("".join(reference.split()))
        rates.append(rate)
        errors += rate * size
        characters += size
        confidences.extend(w.confidence for w in page.words if w.confidence is not None)
    first_read = seconds[0]
    steady = seconds[1:] or seconds
    return {
        "engine": engine_name,
        "language": language,
        "pages": len(pages),
        "characters": characters,
        "cer": errors / characters if characters else 0.0,
        "cer_per_page": rates,
        "mean_confidence": statistics.fmean(confidences) if confidences else None,
        "model_load_s": load,
        "first_page_s": first_read,
        "seconds_per_page": statistics.fmean(steady),
        "pages_per_second": 1 / statistics.fmean(steady),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", choices=sorted(SCALES), default="full")
    parser.add_argument("--engines", default="rapidocr,tesseract")
    parser.add_argument("--languages", default="zh,en")
    parser.add_argument("--dpi", type=int, default=300)
    parser.add_argument("--cpu", type=int, default=None, help="pin to this CPU (default: the first allowed)")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = parser.parse_args()
    allowed = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {args.cpu if args.cpu is not None else allowed[0]})  # one core, children too
    os.environ["OMP_THREAD_LIMIT"] = "1"
    count, lines_per_page = SCALES[args.scale]
    rows = []
    print("| engine | language | pages | characters | CER | mean confidence | pages/s (1 core) "
          "| first page s | model load s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for language in [n.strip() for n in args.languages.split(",") if n.strip()]:
        pages = _pages(language, count, lines_per_page, args.dpi)
        for name in [n.strip() for n in args.engines.split(",") if n.strip()]:
            row = measure(name, language, pages, args.dpi)
            rows.append(row)
            confidence = f"{row['mean_confidence']:.3f}" if row["mean_confidence"] is not None else "–"
            print(
                f"| {name} | {language} | {row['pages']} | {row['characters']} | {row['cer']:.2%} | "
                f"{confidence} | {row['pages_per_second']:.2f} | {row['first_page_s']:.1f} | "
                f"{row['model_load_s']:.2f} |"
            )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"dpi": args.dpi, "rows": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
