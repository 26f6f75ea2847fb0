"""Tests that need a system package (Chromium, a CJK font, Tesseract) and are not pip-installable.

On a machine without the package such a test skips, naming the package to install, so the
README's test command passes on a fresh machine. Under CI (``CI`` set, as ``.ci/run`` runs on a
machine where it installs them) a missing package fails the test, unless the environment
variable named for it says why it could not be installed; then it skips with that reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings

import pytest

from veracity.testing.page_images import find_cjk_font

CJK_FONT = "fonts-noto-cjk"
TESSERACT = "tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-eng"
CHROMIUM = "chromium fonts-noto-cjk"


def need(available: bool, what: str, packages: str, reason_variable: str) -> None:
    """Return when ``available``; otherwise skip naming ``packages`` (fail under CI without a reason)."""
    if available:
        return
    reason = os.environ.get(reason_variable)
    if reason:
        pytest.skip(f"{what} SKIPPED: {reason}")
    message = f"{what} is not installed on this machine: apt-get install -y {packages}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (or set {reason_variable} to the reason it cannot be)")
    warnings.warn(message, stacklevel=2)
    pytest.skip(message)


def tesseract_with_chinese() -> bool:
    """Whether the ``tesseract`` program and its Chinese (simplified) pack are installed."""
    if not shutil.which("tesseract"):
        return False
    listed = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, check=False)
    return "chi_sim" in listed.stdout.split()


def need_cjk_font() -> None:
    """The page images of the OCR tests are set in Noto Sans CJK."""
    need(find_cjk_font() is not None, "the Noto Sans CJK font", CJK_FONT, "VERACITY_NO_TESSERACT")


def need_tesseract() -> None:
    """Tesseract with its Chinese and English packs."""
    need(tesseract_with_chinese(), "tesseract with its Chinese pack", TESSERACT, "VERACITY_NO_TESSERACT")


def need_chromium() -> str:
    """The path of Debian's Chromium, which the page test drives through Playwright."""
    found = shutil.which("chromium")
    need(found is not None, "chromium", CHROMIUM, "VERACITY_NO_BROWSER")
    assert found is not None
    return found
