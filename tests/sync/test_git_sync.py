"""``veracity sync`` of a git repository: adds, changes, renames and deletes follow the commits.

A local bare repository is written by the test, commit by commit; after each sync the active
documents are exactly the repository's files at that commit, a file that did not change is not
read or embedded again, and a clone that fails withdraws nothing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from veracity.catalog.syncs import read_sync_sources
from veracity.cli.main import main
from veracity.index.embedders import FakeEmbedder
from veracity.kb.directory import open_or_create_kb
from veracity.model.contracts import Status
from veracity.sync.config import parse_sources
from veracity.sync.run import sync_sources

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")

IDENTITY = ["-c", "user.email=docs@example.com", "-c", "user.name=Docs"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *IDENTITY, *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


class Repository:
    """A bare repository and a working copy that commits into it."""

    def __init__(self, root: Path) -> None:
        self.bare = root / "docs.git"
        self.work = root / "work"
        git(root, "init", "-q", "--bare", "-b", "main", str(self.bare))
        git(root, "clone", "-q", str(self.bare), str(self.work))
        git(self.work, "checkout", "-q", "-b", "main")

    def commit(self, files: dict[str, str | None], message: str) -> str:
        for path, text in files.items():
            target = self.work / path
            if text is None:
                git(self.work, "rm", "-q", path)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "-m", message)
        git(self.work, "push", "-q", "origin", "main")
        return git(self.work, "rev-parse", "HEAD")

    def rename(self, old: str, new: str) -> str:
        git(self.work, "mv", old, new)
        return self.commit({}, f"rename {old}")


def page(title: str, body: str) -> str:
    return f"# {title}\n\n{body}\n"


def active(kb) -> dict[str, str]:
    """source id → body of every active document."""
    return {d.source_id: d.body for d in kb.catalog.documents() if d.status is Status.ACTIVE}


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    return Repository(tmp_path)


def specs(repo: Repository, tmp_path: Path, extra: str = "") -> tuple:
    text = f"sources:\n  - name: docs\n    git: {repo.bare}\n    path: docs\n{extra}"
    return parse_sources(text, base=tmp_path)


def test_sync_follows_adds_changes_renames_and_deletes(repo: Repository, tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    kb = open_or_create_kb(tmp_path / "kb", embedder)
    work = tmp_path / "sync"
    first = repo.commit(
        {
            "docs/backups.md": page("Backups", "Daily snapshots are kept for 30 days."),
            "docs/login.md": page("Login", "Single sign-on uses SAML 2.0."),
            "docs/guide/intro.md": page("Intro", "Start here."),
            "README.md": page("Repository", "Not documentation: outside docs/."),
        },
        "first",
    )
    (outcome,) = sync_sources(kb, specs(repo, tmp_path), work=work)
    assert outcome.error is None
    assert (outcome.files, outcome.read, outcome.unchanged) == (3, 3, 0)
    assert sorted(outcome.added) == ["backups", "guide/intro", "login"]
    assert set(active(kb)) == {"backups", "guide/intro", "login"}
    assert outcome.state == {"commit": first}

    again = sync_sources(kb, specs(repo, tmp_path), work=work)[0]
    assert (again.read, again.unchanged, again.changes, again.chunks_embedded) == (0, 3, 0, 0)

    second = repo.commit(
        {"docs/backups.md": page("Backups", "Daily snapshots are kept for 45 days."),
         "docs/faq.md": page("FAQ", "Questions people ask.")},
        "second",
    )  # fmt: skip
    changed = sync_sources(kb, specs(repo, tmp_path), work=work)[0]
    assert (changed.read, changed.unchanged) == (2, 2)  # backups and faq read; intro and login not
    assert changed.revised == ("backups",) and changed.added == ("faq",)
    assert changed.chunks_embedded == 2
    assert "45 days" in active(kb)["backups"]
    revision = next(
        d for d in kb.catalog.documents() if d.source_id == "backups" and d.status is Status.ACTIVE
    )
    assert dict(revision.extra_metadata)["source_commit"] == json.dumps(second)
    assert dict(revision.extra_metadata)["source_path"] == json.dumps("backups.md")
    unchanged = next(d for d in kb.catalog.documents() if d.source_id == "login")
    assert dict(unchanged.extra_metadata)["source_commit"] == json.dumps(
        first
    )  # its revision came from there

    repo.rename("docs/login.md", "docs/sign-in.md")
    repo.commit({"docs/guide/intro.md": None}, "delete intro")
    moved = sync_sources(kb, specs(repo, tmp_path), work=work)[0]
    assert moved.added == ("sign-in",) and sorted(moved.withdrawn) == ["guide/intro", "login"]
    assert set(active(kb)) == {"backups", "faq", "sign-in"}
    assert not (work / "docs" / "guide" / "intro.md").exists()  # the sync folder follows the tree


def test_a_failed_fetch_withdraws_nothing_and_is_recorded(repo: Repository, tmp_path: Path) -> None:
    kb = open_or_create_kb(tmp_path / "kb", FakeEmbedder())
    repo.commit({"docs/a.md": page("A", "Alpha."), "docs/b.md": page("B", "Beta.")}, "first")
    work = tmp_path / "sync"
    sync_sources(kb, specs(repo, tmp_path), work=work)
    shutil.rmtree(repo.bare)  # the remote is gone
    (failed,) = sync_sources(kb, specs(repo, tmp_path), work=work)
    assert failed.error is not None and "git fetch failed" in failed.error
    assert set(active(kb)) == {"a", "b"}
    (row,) = read_sync_sources(kb.catalog.store.connection)
    assert row.last_error == failed.error and row.last_success is not None and row.state["commit"]
    unknown_ref = specs(repo, tmp_path, "    ref: no-such-branch\n")
    shutil.rmtree(work)
    (missing,) = sync_sources(kb, unknown_ref, work=work)
    assert missing.error is not None and set(active(kb)) == {"a", "b"}


def test_governance_sidecars_globs_and_delete(repo: Repository, tmp_path: Path) -> None:
    kb = open_or_create_kb(tmp_path / "kb", FakeEmbedder())
    repo.commit(
        {
            "docs/public.md": page("Public", "For everyone."),
            "docs/own.md": "---\nvisibility: public\n---\n" + page("Own", "Its front matter wins."),
            "docs/drafts/wip.md": page("WIP", "Not yet."),
        },
        "first",
    )
    work = tmp_path / "sync"
    internal = (
        "    exclude: ['drafts/**']\n    on_remove: delete\n    governance:\n      visibility: internal\n"
    )
    sync_sources(kb, specs(repo, tmp_path, internal + "      allowed_roles: [staff]\n"), work=work)
    documents = {d.source_id: d for d in kb.catalog.documents()}
    assert set(documents) == {"public", "own"}
    assert documents["public"].visibility.value == "internal" and documents["public"].allowed_roles == (
        "staff",
    )
    assert documents["own"].visibility.value == "public"  # the document's own front matter first

    # a new governance re-reads every file; a sidecar that changes re-reads its file only
    relaxed = sync_sources(
        kb, specs(repo, tmp_path, internal + "      allowed_roles: [staff, support]\n"), work=work
    )
    assert relaxed[0].read == 2
    repo.commit({"docs/public.meta.yaml": "trust: community\n"}, "sidecar")
    sidecar = sync_sources(
        kb, specs(repo, tmp_path, internal + "      allowed_roles: [staff, support]\n"), work=work
    )
    assert sidecar[0].read == 1 and sidecar[0].revised == ("public",)

    repo.commit({"docs/own.md": None}, "delete own")
    deleted = sync_sources(
        kb, specs(repo, tmp_path, internal + "      allowed_roles: [staff, support]\n"), work=work
    )
    assert deleted[0].deleted == ("own",)
    assert "own" not in {d.source_id for d in kb.catalog.documents()}


def test_cli_sync_status_and_docs_show(repo: Repository, tmp_path: Path) -> None:
    commit = repo.commit(
        {"docs/backups.md": page("Backups", "Daily snapshots are kept for 30 days.")}, "first"
    )
    sources = tmp_path / "veracity.yaml"
    sources.write_text(
        f"sources:\n  - name: docs\n    git: {repo.bare}\n    path: docs\n    schedule: hourly\n"
    )
    kb_dir = tmp_path / "kb"
    runner = CliRunner()
    args = ["sync", "--kb", str(kb_dir), "--sources", str(sources), "--embedder", "fake", "--no-progress"]
    first = runner.invoke(main, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    assert f"docs (git @ {commit[:12]}): 1 files · read 1 · unchanged 0 · added 1" in first.output
    second = runner.invoke(main, [*args[:-3], "--json"], catch_exceptions=False)
    assert json.loads(second.output)["sources"][0]["changes"] == 0
    status = runner.invoke(main, ["status", "--kb", str(kb_dir)], catch_exceptions=False)
    assert f"source docs (git @ {commit[:12]}): last synced " in status.output
    assert "1 active; schedule hourly" in status.output
    shown = runner.invoke(main, ["docs", "show", "backups", "--kb", str(kb_dir)], catch_exceptions=False)
    assert commit in shown.output and "path: backups.md" in shown.output
    missing = runner.invoke(main, ["sync", "--kb", str(kb_dir), "--sources", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 1 and "no such sources file" in missing.output
    unknown = runner.invoke(main, [*args, "--source", "other"])
    assert unknown.exit_code == 1 and "no source named other" in unknown.output
