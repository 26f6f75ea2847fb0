"""A PostgreSQL refusal that escapes the library reaches the user as one line, never a traceback."""

from __future__ import annotations

import psycopg
import pytest

from veracity.cli.common import CommandFailed, library_errors


def test_a_reader_role_given_as_the_knowledge_base_is_told_where_it_belongs() -> None:
    with pytest.raises(CommandFailed) as caught, library_errors():
        raise psycopg.errors.InsufficientPrivilege("permission denied for table kb_manifest")
    said = str(caught.value)
    assert "permission denied for table kb_manifest" in said and "--read-url" in said
    assert "\n" not in said


def test_another_database_refusal_is_one_line_too() -> None:
    with pytest.raises(CommandFailed) as caught, library_errors():
        raise psycopg.errors.UndefinedTable('relation "kb_manifest" does not exist\nLINE 1: SELECT ...')
    assert str(caught.value) == 'the database refused: relation "kb_manifest" does not exist'
