"""Evaluation cases: one JSON object per line.

Fields: ``id``, ``group``, ``question`` (null for chunking cases), ``actor``
(``tenant``, ``role``), ``target_version``, ``as_of``, ``required_fact_ids``,
``relevant_document_ids`` (source ids), ``expected_status`` (``answer`` /
``partial`` / ``abstain`` / null), ``mode`` (``conformance`` must match,
``failure_probe`` exposes a known weakness), ``check`` (what is run, see
``runner.CHECKS``), ``params`` and a free-text ``expectation``. A user's file
may leave out everything but ``id`` and ``question``: it is then an ``ask``
case with the demo defaults.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from ..fixtures import TenantConfig
from ..model.contracts import AnswerStatus, Principal, parse_enum
from ..model.errors import ConfigError, ValidationError
from ..model.governance import EligibilityScope
from ..parse.documents import parse_moment

MODES = ("conformance", "failure_probe")


@dataclass(frozen=True, slots=True)
class Case:
    """One evaluation case."""

    case_id: str
    group: str
    question: str | None
    tenant: str
    role: str
    target_version: str
    as_of: datetime
    required_fact_ids: tuple[str, ...]
    relevant_document_ids: tuple[str, ...]
    expected_status: AnswerStatus | None
    mode: str
    check: str
    params: dict[str, Any] = field(default_factory=dict)
    expectation: str = ""

    @property
    def principal(self) -> Principal:
        """The asker of this case."""
        return Principal.of(self.tenant, self.role)

    def scope(self, known_roles: frozenset[str]) -> EligibilityScope:
        """Who asks this case, about which version, when (``known_roles``: its tenant's roles)."""
        return EligibilityScope(self.principal, self.target_version, self.as_of, known_roles)


CASE_KEYS: Final = frozenset(
    {
        "id", "group", "question", "actor", "target_version", "as_of", "required_fact_ids",
        "relevant_document_ids", "expected_status", "mode", "check", "params", "expectation", "feedback",
    }
)  # fmt: skip
"""The keys a case line may have (another key is a typo, refused rather than ignored); ``feedback``
is what ``veracity feedback export`` notes of the rated turn (read by people, not by the run)."""


def parse_case(raw: dict[str, Any], defaults: TenantConfig, *, where: str) -> Case:
    """Validate one decoded line; errors name the line and the field."""
    if not isinstance(raw, dict):
        raise ValidationError("a case must be a JSON object", document=where)
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise ValidationError("missing case id", document=where, field="id")
    check = str(raw.get("check") or "ask")
    question = raw.get("question")
    if question is not None and not isinstance(question, str):
        raise ValidationError("question must be a string", document=case_id, field="question")
    if question is None and not check.startswith("chunk"):
        raise ValidationError(
            "question is required for this check", document=case_id, field="question"
        )
    unknown = sorted(set(raw) - CASE_KEYS)
    if unknown:
        raise ValidationError(
            f"unknown keys {', '.join(map(repr, unknown))}; a case has {', '.join(sorted(CASE_KEYS))}",
            document=case_id,
            field=unknown[0],
        )
    for listed in ("required_fact_ids", "relevant_document_ids"):
        value = raw.get(listed)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            raise ValidationError("must be a list of ids (strings)", document=case_id, field=listed)
    for mapped in ("params", "actor"):
        if not isinstance(raw.get(mapped) or {}, dict):
            raise ValidationError("must be an object", document=case_id, field=mapped)
    actor = raw.get("actor") or {}
    mode = str(raw.get("mode") or "conformance")
    if mode not in MODES:
        raise ValidationError(
            f"unknown mode {mode!r}; valid values: {', '.join(MODES)}",
            document=case_id,
            field="mode",
        )
    expected = raw.get("expected_status")
    try:
        expected_status = (
            parse_enum(AnswerStatus, expected, what="expected_status") if expected else None
        )
    except ConfigError as exc:
        raise ValidationError(str(exc), document=case_id, field="expected_status") from None
    return Case(
        case_id=case_id,
        group=str(raw.get("group") or "user"),
        question=question,
        tenant=str(actor.get("tenant") or defaults.tenant),
        role=str(actor.get("role") or defaults.role),
        target_version=str(raw.get("target_version") or defaults.target_version),
        as_of=parse_moment(raw["as_of"], document=case_id, field="as_of")
        if raw.get("as_of")
        else defaults.as_of,
        required_fact_ids=tuple(raw.get("required_fact_ids") or ()),
        relevant_document_ids=tuple(raw.get("relevant_document_ids") or ()),
        expected_status=expected_status,
        mode=mode,
        check=check,
        params=dict(raw.get("params") or {}),
        expectation=str(raw.get("expectation") or ""),
    )


def parse_cases(text: str, defaults: TenantConfig, *, source: str = "cases") -> list[Case]:
    """Parse JSONL text into cases; ids must be unique. Errors name the line."""
    cases: list[Case] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"not valid JSON: {exc.msg}", document=where) from None
        case = parse_case(raw, defaults, where=where)
        if case.case_id in seen:
            raise ValidationError("duplicate case id", document=case.case_id, field="id")
        seen.add(case.case_id)
        cases.append(case)
    if not cases:
        raise ValidationError("no cases found", document=source)
    return cases
