"""A served knowledge base for tests and benchmarks: the Starship demo, a second tenant, and keys.

:func:`build_served_kb` writes the demo (tenant ``starship``) into a
directory (or a ``postgresql://`` database), adds tenant ``acme`` with two small documents (one public, one
for ``staff`` only) so isolation between tenants can be checked, and creates
one key per kind of caller. The keys are returned; the directory keeps only
their digests.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..index.dense import Embedder
from ..kb.backends import location_of
from ..kb.directory import init_demo_kb
from ..kb.keys import create_key
from ..kb.local import LocalKnowledgeBase

__all__ = ["ACME_DOCUMENTS", "ServedKeys", "build_served_kb"]

ACME_DOCUMENTS: Final = {
    "returns.md": """---
id: acme-returns
title: Acme 退货政策
tenant: acme
valid_from: 2026-01-01T00:00:00Z
visibility: public
---

# Acme 退货政策

购买后 30 天内可以无理由退货，运费由 Acme 承担。
""",
    "payroll.md": """---
id: acme-payroll
title: Acme payroll calendar
tenant: acme
valid_from: 2026-01-01T00:00:00Z
visibility: internal
allowed_roles: [staff]
---

# Payroll calendar

Acme pays salaries on the 25th of every month; the codeword for payroll questions is ZEBRA-42.
""",
}


@dataclass(frozen=True, slots=True)
class ServedKeys:
    """The keys of a served test knowledge base (whole keys, as a client sends them)."""

    public: str
    maintainer: str
    operator: str
    acme_public: str
    acme_staff: str
    acme_operator: str


def build_served_kb(
    folder: str | os.PathLike[str], embedder: Embedder | None = None, *, sources: Path | None = None
) -> ServedKeys:
    """Write the demo plus tenant ``acme`` into ``folder`` (new) and create the keys; the folder is closed.

    ``folder`` may be a ``postgresql://`` URL; acme's files are then written to ``sources``
    (by default a folder beside the knowledge base's directory; for a URL, a temporary one removed
    once they are ingested).
    """
    location = location_of(folder)
    kb = LocalKnowledgeBase(init_demo_kb(location, embedder), location)
    scratch = None  # for a URL without ``sources``: acme's files live only while they are ingested
    try:
        if sources is None:
            if isinstance(location, Path):
                sources = location.parent / f"{location.name}-acme-sources"
            else:
                scratch = tempfile.TemporaryDirectory(prefix="veracity-acme-")
                sources = Path(scratch.name)
        sources.mkdir(parents=True, exist_ok=True)
        for name, text in ACME_DOCUMENTS.items():
            (sources / name).write_text(text, encoding="utf-8")
        report = kb.ingest(sources, tenant="acme", roles=("public", "staff"))
        assert len(report.added) == len(ACME_DOCUMENTS), report.rejected

        def key(tenant: str, roles: tuple[str, ...], operator: bool, name: str) -> str:
            return create_key(kb, tenant=tenant, roles=roles, operator=operator, name=name).secret

        return ServedKeys(
            public=key("starship", ("public",), False, "public"),
            maintainer=key("starship", ("maintainer",), False, "maintainer"),
            operator=key("starship", ("maintainer",), True, "operator"),
            acme_public=key("acme", ("public",), False, "acme-public"),
            acme_staff=key("acme", ("staff",), False, "acme-staff"),
            acme_operator=key("acme", ("staff",), True, "acme-operator"),
        )
    finally:
        kb.close()
        if scratch is not None:
            scratch.cleanup()
