"""API keys: shown once, stored as salted digests, the principal from the key alone, revocable."""

from __future__ import annotations

import pytest

from veracity.kb.keys import authenticate, create_key, list_keys, revoke_key
from veracity.kb.local import open_local
from veracity.model.errors import AuthenticationError, IdentityError, NotFoundError, ValidationError


@pytest.fixture
def kb(served_kb):
    opened = open_local(served_kb[0], create=False)
    yield opened
    opened.close()


def test_a_key_is_stored_only_as_a_salted_digest(kb) -> None:
    made = create_key(kb, tenant="starship", roles=["support", "public"], name="desk")
    key_id, secret = made.secret.removeprefix("vk_").split("_", 1)
    row = kb.engine.catalog.store.connection.execute(
        "SELECT * FROM api_keys WHERE key_id = ?", (key_id,)
    ).fetchone()
    assert secret not in " ".join(map(str, row)) and made.secret not in " ".join(map(str, row))
    other = create_key(kb, tenant="starship", roles=["support", "public"], name="desk-2")
    salts = kb.engine.catalog.store.connection.execute("SELECT salt, digest FROM api_keys").fetchall()
    assert len({salt for salt, _ in salts}) == len(salts)  # one salt per key
    found = authenticate(kb, made.secret)
    assert found.tenant == "starship" and found.roles == ("public", "support") and not found.operator
    assert found.principal.roles == frozenset({"public", "support"}) and found.principal.user_id == key_id
    assert authenticate(kb, other.secret).name == "desk-2"


@pytest.mark.parametrize(
    "presented", [None, "", "Bearer x", "vk_000000000000_" + "a" * 43, "vk_zz_short", "random words"]
)
def test_missing_malformed_and_unknown_keys_get_the_same_error(kb, presented) -> None:
    with pytest.raises(AuthenticationError, match="missing, unknown or revoked"):
        authenticate(kb, presented)


def test_a_guessed_secret_for_a_real_key_id_is_refused(kb) -> None:
    made = create_key(kb, tenant="starship", roles=["public"])
    forged = made.secret[:-1] + ("A" if made.secret[-1] != "A" else "B")
    with pytest.raises(AuthenticationError):
        authenticate(kb, forged)


def test_revoked_keys_are_refused_and_listed_as_revoked(kb) -> None:
    made = create_key(kb, tenant="starship", roles=["public"], name="temp")
    revoked = revoke_key(kb, "temp")
    assert revoked.revoked_at is not None
    with pytest.raises(AuthenticationError):
        authenticate(kb, made.secret)
    listed = {k.name: k for k in list_keys(kb, "starship")}
    assert listed["temp"].revoked_at == revoked.revoked_at and listed["public"].revoked_at is None
    assert revoke_key(kb, made.secret).revoked_at == revoked.revoked_at  # a pasted key works too
    with pytest.raises(NotFoundError, match="no API key"):
        revoke_key(kb, "nobody")


def test_keys_name_only_tenants_and_roles_the_knowledge_base_defines(kb) -> None:
    with pytest.raises(IdentityError, match="unknown tenant 'globex'"):
        create_key(kb, tenant="globex", roles=["public"])
    with pytest.raises(IdentityError, match="defines no role 'admin'"):
        create_key(kb, tenant="starship", roles=["admin"])
    with pytest.raises(ValidationError, match="at least one role"):
        create_key(kb, tenant="starship", roles=[])
    assert {k.tenant for k in list_keys(kb, "acme")} == {"acme"}
