"""The ``veracity`` command: a thin click layer over the library.

:mod:`.main` holds the group and the ask/docs/chunk/eval/bench commands;
:mod:`.kb` ingest and init-demo; :mod:`.lifecycle` withdraw/retire/delete/status;
:mod:`.index` reindex/publish/rollback; :mod:`.common` what they share.
"""
