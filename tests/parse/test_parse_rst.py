"""reStructuredText (Sphinx): headings, admonitions, code, roles and links become plain Markdown."""

from __future__ import annotations

from pathlib import Path

from tests.parse.conftest import check_parsed
from veracity.parse.parsers import parse_file
from veracity.parse.rst import parse_rst, rst_to_markdown

SPHINX = """\
:orphan:

=========
Tidewater
=========

Tidewater copies snapshots. See :ref:`the install guide <install>` and ``tidewater doctor``.

.. _install:

Installing
==========

.. note::

   The agent needs Python 3.10 or newer.

Install it with pip::

    pip install tidewater-agent

.. code-block:: bash
   :caption: check it

   tidewater doctor --verbose

.. toctree::
   :maxdepth: 2

   guide/retention

Retention
---------

.. warning:: Deleting a policy keeps its snapshots.

Daily snapshots are kept for 14 days. Read `the blog <https://example.com/blog>`_.

.. image:: logo.png
   :alt: logo

.. a comment that
   spans two lines
"""


def test_sphinx_markup_becomes_markdown() -> None:
    markdown, metadata = rst_to_markdown(SPHINX)
    assert metadata == {"orphan": True}
    assert markdown.split("\n\n") == [
        "# Tidewater",
        "Tidewater copies snapshots. See the install guide and `tidewater doctor`.",
        "## Installing",
        "The agent needs Python 3.10 or newer.",
        "Install it with pip:",
        "```\npip install tidewater-agent\n```",
        "```bash\ntidewater doctor --verbose\n```",
        "### Retention",
        "Deleting a policy keeps its snapshots.",
        "Daily snapshots are kept for 14 days. Read [the blog](https://example.com/blog).\n",
    ]


def test_parse_rst_gives_headings_paths_and_code(tmp_path: Path) -> None:
    parsed = parse_rst(SPHINX)
    assert parsed.title == "Tidewater" and parsed.fmt == "rst"
    check_parsed(parsed)
    code = [node for node in parsed.nodes if node.kind.value == "code"]
    assert len(code) == 2 and code[1].heading_path == ("Tidewater", "Installing")
    assert not any(word in parsed.body for word in ("toctree", "logo.png", "comment", ":ref:", ".. "))
    path = tmp_path / "index.rst"
    path.write_text(SPHINX, "utf-8")
    assert parse_file(path).body == parsed.body
