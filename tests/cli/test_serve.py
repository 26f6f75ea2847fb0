"""``veracity keys`` and ``veracity serve`` through click's runner (the server itself: tests/service)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from veracity.cli.main import main


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_keys_create_list_revoke(served_kb) -> None:
    folder, _ = served_kb
    made = run("keys", "create", "--kb", str(folder), "--tenant", "starship", "--roles", "public,support",
               "--name", "desk")  # fmt: skip
    key = made.stdout.strip()
    assert made.exit_code == 0 and key.startswith("vk_") and "shown once" in made.stderr
    listed = json.loads(run("keys", "list", "--kb", str(folder), "--tenant", "starship", "--json").stdout)
    desk = next(k for k in listed if k["name"] == "desk")
    assert desk["roles"] == ["public", "support"] and "key" not in desk and key not in json.dumps(listed)
    revoked = run("keys", "revoke", "desk", "--kb", str(folder))
    assert revoked.exit_code == 0 and "revoked" in revoked.stdout
    assert "revoked" in run("keys", "list", "--kb", str(folder)).stdout


def test_keys_create_refuses_unknown_roles_and_tenants(served_kb) -> None:
    folder, _ = served_kb
    result = CliRunner().invoke(main, ["keys", "create", "--kb", str(folder), "--tenant", "starship",
                                       "--roles", "admin"])  # fmt: skip
    assert result.exit_code == 1 and "defines no role 'admin'" in result.output
    result = CliRunner().invoke(main, ["keys", "create", "--kb", str(folder), "--tenant", "globex",
                                       "--roles", "public"])  # fmt: skip
    assert result.exit_code == 1 and "unknown tenant 'globex'" in result.output


def test_serve_help_names_the_api() -> None:
    result = run("serve", "--help")
    assert result.exit_code == 0 and "/openapi.json" in result.output and "--workers" in result.output


def test_serve_refuses_a_port_out_of_range_before_opening_anything(tmp_path) -> None:
    for port in ("-1", "70000"):
        result = run("serve", "--kb", str(tmp_path / "none"), "--port", port)
        assert result.exit_code == 2 and "is not in the range 0<=x<=65535" in result.output


def _damage(folder) -> None:
    catalog = folder / "catalog.sqlite"
    data = bytearray(catalog.read_bytes())
    data[4096 * 2 : 4096 * 5] = bytes(range(256)) * 48  # three pages of garbage
    catalog.write_bytes(bytes(data))


def test_serve_checks_the_knowledge_base_before_saying_it_serves(served_kb, monkeypatch) -> None:
    import uvicorn

    folder, _ = served_kb
    started: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: started.append(app))
    healthy = CliRunner().invoke(main, ["serve", "--kb", str(folder), "--port", "0"])
    assert healthy.exit_code == 0 and "serving" in healthy.stderr and len(started) == 1
    _damage(folder)
    for workers in ("1", "2"):
        args = ["serve", "--kb", str(folder), "--port", "0", "--workers", workers]
        damaged = CliRunner().invoke(main, args)
        assert damaged.exit_code == 5, damaged.output
        assert "serving" not in damaged.output and "damaged" in damaged.stderr
        assert str(folder) in damaged.stderr and "Traceback" not in damaged.output
    assert len(started) == 1
