"""The archive as a verifiable log over HTTP: ``GET /checkpoint`` is a C2SP signed note whose
signature (Ed25519, checked with ``cryptography``) and root (RFC 6962, with ``hashlib``)
verify independently of attrflow; ``GET /proof/inclusion`` and ``GET /proof/consistency``
verify by RFC 9162's algorithms; bad input is a 400 naming it, a trimmed record a 410,
checkpoints without a key a 404 saying how to turn them on, never a 500. The check itself
is python/tests/tlog_check.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from archive_api import PREFIX, HttpClient, subscriber_body
from attrflow.flows.chunked_subscriber import FLOW_ID

# python/tests/tlog_check.py, put on sys.path by conftest.py (so mypy cannot see it here).
from tlog_check import (  # type: ignore[import-not-found]
    NoteKey,
    decode_hashes,
    export_bytes,
    leaf_hash,
    make_note_key,
    open_note,
    parse_checkpoint,
    tree_root,
    verify_consistency,
    verify_inclusion,
)

from attrflow_examples.app import create_app
from attrflow_examples.patterns.sequentially_chunked_attribute_map.verifiable_log import (
    CHECKPOINTS_OFF,
)

pytestmark = pytest.mark.asyncio

KEY = make_note_key("example.com/subscribers")


@pytest_asyncio.fixture
async def signed(store: str) -> AsyncIterator[HttpClient]:
    """The app on ``store`` with a checkpoint signer key."""
    app = create_app(store, checkpoint_key=KEY.signer_text)
    async with app.test_app() as test_app:
        yield test_app.test_client()


async def get(http: HttpClient, route: str, **query: object) -> tuple[int, Any]:
    response = await http.get(f"{PREFIX}/{route}", query_string=query)
    return response.status_code, await response.get_json()


async def register_batch(http: HttpClient, first: int, last: int) -> list[dict[str, Any]]:
    body = {"subscribers": [subscriber_body(n) for n in range(first, last + 1)]}
    response = await http.post(f"{PREFIX}/register-batch", json=body)
    assert response.status_code == 200, await response.get_json()
    subscribers: list[dict[str, Any]] = (await response.get_json())["subscribers"]
    return subscribers


async def checkpoint(http: HttpClient, key: NoteKey) -> tuple[int, bytes]:
    status, body = await get(http, "checkpoint")
    assert status == 200, body
    parsed = parse_checkpoint(open_note(body["checkpoint"], key))
    assert parsed.origin == f"attrflow/{FLOW_ID}/subscribers"
    return parsed.tree_size, parsed.root_hash


async def test_checkpoints_and_proofs_verify_independently(signed: HttpClient) -> None:
    subscribers = await register_batch(signed, 1, 11)
    leaves = [leaf_hash(export_bytes(s)) for s in subscribers]
    assert await checkpoint(signed, KEY) == (11, tree_root(leaves))
    status, head = await get(signed, "tree-head")
    assert status == 200
    assert head["treeSize"] == 11

    for size in (1, 6, 11):
        for sequence in range(1, size + 1):
            status, proof = await get(signed, "proof/inclusion", sequence=sequence, treeSize=size)
            assert status == 200, proof
            assert (proof["leafIndex"], proof["treeSize"]) == (sequence - 1, size)
            assert verify_inclusion(
                sequence - 1,
                size,
                leaves[sequence - 1],
                decode_hashes(proof["hashes"]),
                tree_root(leaves[:size]),
            )
    status, newest = await get(signed, "proof/inclusion", sequence=3)
    assert (status, newest["treeSize"]) == (200, 11)

    old_size, old_root = 11, tree_root(leaves)
    more = await register_batch(signed, 12, 20)
    leaves += [leaf_hash(export_bytes(s)) for s in more]
    new_size, new_root = await checkpoint(signed, KEY)
    assert (new_size, new_root) == (20, tree_root(leaves))
    status, proof = await get(signed, "proof/consistency", **{"from": old_size, "to": new_size})
    assert status == 200, proof
    assert (proof["from"], proof["to"]) == (11, 20)
    assert verify_consistency(
        old_size, new_size, decode_hashes(proof["hashes"]), old_root, new_root
    )


async def test_a_checkpoint_signed_by_another_key_does_not_verify(signed: HttpClient) -> None:
    await register_batch(signed, 1, 2)
    with pytest.raises(AssertionError, match="no signature by"):
        await checkpoint(signed, make_note_key("example.com/subscribers"))


async def test_without_a_key_checkpoints_are_a_404_saying_how_to_turn_them_on(
    http: HttpClient,
) -> None:
    status, body = await get(http, "checkpoint")
    assert (status, body) == (404, {"error": CHECKPOINTS_OFF})
    assert "--checkpoint-key-file" in CHECKPOINTS_OFF
    # Without a key the service leaves the archive's tree off (verifiable logs are opt-in):
    # a proof is a 400 saying so and how to switch it on, never a 500.
    await register_batch(http, 1, 3)
    status, body = await get(http, "proof/inclusion", sequence=2)
    assert status == 400, body
    assert "is not verifiable: switch it on first" in body["error"]


@pytest.mark.parametrize(
    ("route", "query", "message"),
    [
        ("proof/inclusion", {}, "sequence is required"),
        ("proof/inclusion", {"sequence": "x"}, "sequence must be a whole number"),
        ("proof/inclusion", {"sequence": "-1"}, "sequence must be a whole number"),
        ("proof/inclusion", {"sequence": 0}, "there is no record 0"),
        ("proof/inclusion", {"sequence": 6}, "sequence 6 is beyond tree size 5"),
        ("proof/inclusion", {"sequence": 2, "treeSize": 9}, "beyond"),
        ("proof/inclusion", {"sequence": 2, "treeSize": "1e3"}, "treeSize must be"),
        ("proof/consistency", {"from": 1}, "to is required"),
        ("proof/consistency", {"to": 1}, "from is required"),
        ("proof/consistency", {"from": 4, "to": 2}, "from must not exceed to"),
        ("proof/consistency", {"from": 2, "to": 9}, "beyond"),
        ("proof/consistency", {"from": 2, "to": 2**64}, "to must be a tree size"),
    ],
)
async def test_bad_proof_requests_are_400s_naming_the_fault(
    signed: HttpClient, route: str, query: dict[str, object], message: str
) -> None:
    await register_batch(signed, 1, 5)
    status, body = await get(signed, route, **query)
    assert status == 400, body
    assert message in body["error"]


async def test_a_proof_of_a_trimmed_subscriber_is_a_410_naming_the_oldest_retained(
    signed: HttpClient,
) -> None:
    await register_batch(signed, 1, 250)
    response = await signed.post(f"{PREFIX}/trim", json={"keepNewest": 100})
    assert response.status_code == 200
    status, body = await get(signed, "proof/inclusion", sequence=1)
    assert status == 410, body
    assert body["error"] == "record 1 was trimmed; the oldest retained sequence is 101"
    assert body["oldestSequence"] == 101
