"""A serving process runs one BLAS thread unless its environment says otherwise."""

from __future__ import annotations


def test_a_service_runs_one_blas_thread_unless_told_otherwise(monkeypatch) -> None:
    from veracity.service.blas import BLAS_THREAD_VARIABLES, limit_blas_threads

    for name in BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    limit_blas_threads()
    import os

    assert [os.environ[name] for name in BLAS_THREAD_VARIABLES] == ["1", "3", "1"]
