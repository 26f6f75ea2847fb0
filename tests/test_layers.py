"""The package tree reads as the data flow: layers import only downward, no cycles.

The import graph is read with ``ast`` (every ``import`` and ``from … import``,
including those inside functions and ``TYPE_CHECKING`` blocks), so a violation
is caught whether or not the import runs at import time.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import veracity

PACKAGE_ROOT = Path(veracity.__file__).parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("model", "_version"),
    ("text",),
    ("parse",),
    ("fixtures",),
    ("catalog",),
    ("index", "reader", "guard"),
    ("pipeline",),
    ("ingest",),
    ("kb",),
    ("sync",),
    ("evaluate",),
    ("bench",),
    ("testing",),
    ("cli", "service", "integrations"),
)
"""Bottom to top. A module may import its own layer or a lower one. The root
``veracity/__init__.py`` (the public API) sits above every layer and nothing
inside the package may import it."""


def module_name(path: Path, root: Path) -> str:
    """Dotted name of ``path`` inside the package rooted at ``root``."""
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the package's own modules it imports (a package counts as its ``__init__``)."""
    modules = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                for alias in node.names:
                    child = f"{source}.{alias.name}"
                    targets.add(child if child in modules else source)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def layer_of(module: str, layers: Sequence[Sequence[str]]) -> int | None:
    """The layer index of ``module``; ``None`` for the root package itself."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    for index, names in enumerate(layers):
        if parts[1] in names:
            return index
    raise AssertionError(f"{module} belongs to no layer; add its package to LAYERS")


def upward_imports(graph: Mapping[str, Iterable[str]], layers: Sequence[Sequence[str]]) -> list[str]:
    """Every import from a lower layer into a higher one (or into the root package)."""
    found = []
    for source, targets in sorted(graph.items()):
        source_layer = layer_of(source, layers)
        if source_layer is None:
            continue
        for target in sorted(targets):
            target_layer = layer_of(target, layers)
            if target_layer is None or target_layer > source_layer:
                found.append(f"{source} → {target}")
    return found


def import_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def prefixed_siblings(root: Path) -> list[str]:
    """Sibling modules that group by name prefix (``cli_kb`` beside ``cli``) instead of a package."""
    found = []
    for folder in sorted([root, *(p for p in root.rglob("*") if p.is_dir())]):
        names = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
        names |= {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
        for name in sorted(names):
            head = name.split("_")[0]
            if "_" in name and (head in names or any(o != name and o.startswith(head + "_") for o in names)):
                found.append(f"{folder.relative_to(root.parent)}/{name}")
    return found


def test_layers_only_import_downward() -> None:
    assert upward_imports(import_graph(PACKAGE_ROOT), LAYERS) == []


def test_no_import_cycles() -> None:
    assert import_cycles(import_graph(PACKAGE_ROOT)) == []


def test_no_sibling_modules_share_a_prefix() -> None:
    assert prefixed_siblings(PACKAGE_ROOT) == []


def test_every_package_says_what_it_is_for() -> None:
    undocumented = [
        str(init.relative_to(PACKAGE_ROOT.parent))
        for init in sorted(PACKAGE_ROOT.rglob("__init__.py"))
        if not ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    ]
    assert undocumented == []


def _write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_checks_catch_an_upward_import_a_cycle_and_a_prefix(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "pkg",
        {
            "__init__.py": '"""Root."""\n',
            "model/__init__.py": '"""Model."""\n',
            "model/records.py": "from ..pipeline.engine import run\n",
            "model/other.py": "from . import records\n",
            "pipeline/__init__.py": '"""Pipeline."""\n',
            "pipeline/engine.py": "from ..model.records import X\nfrom .. import something\n",
            "pipeline/loop_a.py": "from .loop_b import b\n",
            "pipeline/loop_b.py": "def b():\n    from .loop_a import a\n",
        },
    )
    layers = (("model",), ("pipeline",))
    graph = import_graph(root)
    assert upward_imports(graph, layers) == [
        "pkg.model.records → pkg.pipeline.engine",
        "pkg.pipeline.engine → pkg",
    ]
    assert import_cycles(graph) == [
        ["pkg.model.records", "pkg.pipeline.engine"],
        ["pkg.pipeline.loop_a", "pkg.pipeline.loop_b"],
    ]
    assert prefixed_siblings(root) == ["pkg/pipeline/loop_a", "pkg/pipeline/loop_b"]


def test_the_real_package_is_read(tmp_path: Path) -> None:
    graph = import_graph(PACKAGE_ROOT)
    assert "veracity.pipeline.engine" in graph
    assert "veracity.pipeline.retrieve" in graph["veracity.pipeline.engine"]


DETECTOR = "veracity.pipeline.injection"
"""The injection detector's package: the rest of the engine reaches it through its ``__init__``."""


def detector_internals_imported(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Imports of the detector's own modules from outside its package (the bench may fit it)."""
    return [
        f"{source} → {target}"
        for source, targets in sorted(graph.items())
        if not source.startswith(DETECTOR) and not source.startswith("veracity.bench.")
        for target in sorted(targets)
        if target.startswith(DETECTOR + ".")
    ]


def test_the_answer_step_reaches_the_detector_through_one_interface() -> None:
    graph = import_graph(PACKAGE_ROOT)
    assert any(DETECTOR in targets for targets in graph.values())  # the check sees the package's users
    assert detector_internals_imported(graph) == []
