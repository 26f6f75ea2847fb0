"""``veracity settings``: every threshold, budget and limit the engine runs with, and the
environment variables it reads, each with its value, where it is defined and why.

Read from the package's own source (module-level constants and the docstring written under
each), so the list cannot drift from the code: a new constant appears here by being written.
Format versions and exit codes are not settings and are left out. These are the engine's and
the same for every knowledge base; a documented few are a knowledge base's own
(:mod:`veracity.kb.overrides`), listed last and changed with ``--kb KB --set NAME=VALUE``.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

import click

from .common import KB_ENV, KnowledgeBaseLocation, library_errors

__all__ = ["Setting", "read_settings", "settings_command"]

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
SKIPPED_PACKAGES = ("bench", "testing", "cli")
"""Benchmarks and test support have their own knobs (their ``--help``); the CLI's constants are
exit codes and display widths."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One constant: the module defining it, its name, its value and the docstring under it."""

    module: str
    name: str
    value: int | float | str
    why: str
    kind: str
    """``number`` (a threshold, budget or limit) or ``environment`` (a variable's name)."""


def _kind(name: str, value: object) -> str | None:
    if name.startswith("_") or not name.isupper():
        return None
    if isinstance(value, str) and name.endswith("_ENV") and value.startswith("VERACITY_"):
        return "environment"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if "FORMAT" in name or name.endswith("_VERSION") or name.startswith("EXIT_"):
        return None
    return "number"


_ARITHMETIC: Final = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.LShift: operator.lshift,
}  # fmt: skip


def _value(node: ast.expr) -> object:
    """A literal, or arithmetic on numbers (``50 * 1024 * 1024``); ``ValueError`` for anything else."""
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _value(node.left), _value(node.right)
        if isinstance(left, int | float) and isinstance(right, int | float):
            return _ARITHMETIC[type(node.op)](left, right)
        raise ValueError("not arithmetic on numbers")
    return ast.literal_eval(node)


def _constants(tree: ast.Module) -> Iterator[tuple[str, object, str]]:
    body = tree.body
    for index, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value = node.target.id, node.value
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
        else:
            continue
        try:
            literal = _value(value)
        except (ValueError, TypeError, SyntaxError):
            continue
        following = body[index + 1] if index + 1 < len(body) else None
        documented = isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
        text = following.value.value if documented else ""  # type: ignore[union-attr]
        yield name, literal, " ".join(text.split()) if isinstance(text, str) else ""


def read_settings(root: Path = PACKAGE_ROOT) -> list[Setting]:
    """Every setting of the package under ``root``, sorted by module and name."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in SKIPPED_PACKAGES:
            continue
        module = ".".join([root.name, *relative.with_suffix("").parts]).removesuffix(".__init__")
        for name, value, why in _constants(ast.parse(path.read_text(encoding="utf-8"))):
            kind = _kind(name, value)
            if kind is not None:
                found.append(Setting(module, name, value, why, kind))  # type: ignore[arg-type]
    return sorted(found, key=lambda s: (s.kind != "number", s.module, s.name))


@click.command("settings")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per setting, one per line.")
@click.option("--grep", "pattern", default=None, help="Only those whose module, name or reason has it.")
@click.option(
    "--kb",
    "kb_dir",
    envvar=KB_ENV,
    type=KnowledgeBaseLocation(exists=True),
    default=None,
    help="Also show (and with --set/--unset change) this knowledge base's own (or $VERACITY_KB).",
)
@click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="NAME=VALUE",
    help="Store this knowledge base's value of a setting it may change (with --kb; repeatable).",
)
@click.option(
    "--unset", "removals", multiple=True, metavar="NAME", help="Forget one (with --kb; repeatable)."
)
def settings_command(
    as_json: bool,
    pattern: str | None,
    kb_dir: object,
    assignments: tuple[str, ...],
    removals: tuple[str, ...],
) -> None:
    """Every threshold, budget and limit the engine runs with, and the environment variables it
    reads: value, where it is defined, and why (read from the source, so never out of date).

    The last section lists the settings a knowledge base may change for itself (retrieval.*),
    with --kb its values; --set NAME=VALUE and --unset NAME change them (checked against their
    ranges; read when the knowledge base is next opened).
    """
    if (assignments or removals) and kb_dir is None:
        raise click.UsageError("--set and --unset change a knowledge base: give --kb (or $VERACITY_KB)")
    settings = read_settings()
    own = _knowledge_base_settings(kb_dir, assignments, removals)
    if pattern:
        needle = pattern.lower()
        settings = [s for s in settings if needle in f"{s.module} {s.name} {s.why}".lower()]
        own = [row for row in own if needle in f"{row['name']} {row['why']}".lower()]
    if as_json:
        for setting in settings:
            click.echo(json.dumps(asdict(setting), ensure_ascii=False, sort_keys=True))
        for row in own:
            click.echo(json.dumps(row, ensure_ascii=False, sort_keys=True))
        return
    module = None
    for setting in settings:
        if setting.module != module:
            module = setting.module
            click.echo(f"\n{module}")
        click.echo(f"  {setting.name} = {setting.value!r}")
        if setting.why:
            click.echo(f"      {setting.why}")
    numbers = sum(s.kind == "number" for s in settings)
    click.echo(f"\n{numbers} settings, {len(settings) - numbers} environment variables")
    if own:
        where = "this knowledge base" if kb_dir is not None else "a knowledge base (--kb KB --set NAME=VALUE)"
        click.echo(f"\nper knowledge base: what {where} may change")
        for row in own:
            source = f" (default {row['default']!r})" if row["source"] == "knowledge base" else ""
            click.echo(f"  {row['name']} = {row['value']!r}{source}  [{row['low']:g}..{row['high']:g}]")
            click.echo(f"      {row['why']}")


def _knowledge_base_settings(
    kb_dir: object, assignments: tuple[str, ...], removals: tuple[str, ...]
) -> list[dict[str, object]]:
    """The settings a knowledge base may change: default, and with ``kb_dir`` its value, after
    storing ``assignments`` and forgetting ``removals``."""
    from ..kb.overrides import OVERRIDABLE

    stored: dict[str, int | float] = {}
    if kb_dir is not None:
        from ..kb.local import open_local

        with library_errors(), open_local(kb_dir, create=False) as kb:  # type: ignore[arg-type]
            for assignment in assignments:
                name, equals, value = assignment.partition("=")
                if not equals:
                    raise click.BadParameter(f"{assignment!r} is not NAME=VALUE", param_hint="--set")
                kb.set_override(name.strip(), value)
            for name in removals:
                kb.set_override(name.strip(), None)
            stored = kb.overrides()
    return [
        {
            "kind": "knowledge_base", "module": "veracity.kb.overrides", "name": o.name,
            "value": stored.get(o.name, o.default), "default": o.default,
            "source": "knowledge base" if o.name in stored else "default",
            "low": o.low, "high": o.high, "why": o.why,
        }
        for o in OVERRIDABLE.values()
    ]  # fmt: skip
