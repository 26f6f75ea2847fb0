"""SQL runs only in ``catalog/`` and ``index/``: every other module goes through them.

Read with ``ast``, so a comment or a string that mentions ``execute(`` does not
count: a call ``<anything>.execute(…)`` or ``<anything>.executemany(…)``, or a
call of the row helpers of :mod:`veracity.catalog.sql` (``all_rows``,
``one_row``, ``scalar``, ``values_present``: they run SQL), outside those two
packages fails the test, naming the file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import veracity

PACKAGE_ROOT = Path(veracity.__file__).parent
SQL_PACKAGES = ("catalog", "index")
RUNNERS = frozenset({"execute", "executemany"})
ROW_HELPERS = frozenset({"all_rows", "one_row", "rows_among", "scalar", "values_present"})


def _helpers_imported(tree: ast.Module) -> set[str]:
    """The local names bound to :mod:`veracity.catalog.sql`'s row helpers in this module."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("catalog.sql"):
            names.update(alias.asname or alias.name for alias in node.names if alias.name in ROW_HELPERS)
    return names


def sql_calls(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` of every call in ``source`` that runs SQL itself."""
    tree = ast.parse(source)
    helpers = _helpers_imported(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in RUNNERS:
            found.append((node.lineno, f".{node.func.attr}("))
        elif isinstance(node.func, ast.Name) and node.func.id in helpers:
            found.append((node.lineno, f"{node.func.id}("))
    return sorted(found)


def test_the_check_finds_calls_and_ignores_text() -> None:
    source = (
        "from veracity.catalog.sql import scalar as count\n"
        "# connection.execute('SELECT 1') in a comment\n"
        "NOTE = 'connection.execute(sql)'\n"
        "connection.execute('SELECT 1')\n"
        "cursor.executemany(sql, rows)\n"
        "count(connection, 'SELECT count(*) FROM chunks')\n"
        "scalar(1)\n"  # a function of that name from elsewhere is no row helper
    )
    assert sql_calls(source) == [(4, ".execute("), (5, ".executemany("), (6, "count(")]


def test_no_sql_outside_catalog_and_index() -> None:
    offenders = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        relative = path.relative_to(PACKAGE_ROOT)
        if relative.parts[0] in SQL_PACKAGES:
            continue
        for line, what in sql_calls(path.read_text(encoding="utf-8")):
            offenders.append(f"{relative}:{line}: {what}")
    assert not offenders, "SQL outside catalog/ and index/ (move it behind them):\n" + "\n".join(offenders)
