"""Verifiable logs from Python (issue 53): the clients' tree heads, signed checkpoints and
proofs, checked by an independent RFC 6962 / C2SP computation (tlog_check.py, hashlib and
``cryptography``), and their bad input as typed errors."""

from __future__ import annotations

import base64
import hashlib

import pytest
from tlog_check import (
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

from attrflow import Client, InvalidInputError, RecordTrimmedError
from attrflow.flows.app_log import AppLog
from attrflow.flows.chunked_subscriber import NewSubscriber, SubscriberArchive
from attrflow.verifiable import (
    ConsistencyProof,
    InclusionProof,
    TreeHead,
    generate_key,
    note_verifier_key,
)

FLOW_ID = "verifiable-archive"


def archive_leaves(archive: SubscriberArchive) -> list[bytes]:
    read = archive.read_from(1, 1000)
    return [
        leaf_hash(
            export_bytes(
                {
                    "sequence": s.sequence,
                    "subscriberId": s.subscriber_id,
                    "deliveryAddress": s.delivery_address,
                }
            )
        )
        for s in read.subscribers
    ]


def log_leaves(logs: AppLog, log: str) -> list[bytes]:
    read = logs.read_from(log, 1, 1000)
    return [
        leaf_hash(export_bytes({"sequence": e.sequence, "record": e.record})) for e in read.entries
    ]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_an_archive_checkpoint_and_proofs_verify_independently(client: Client) -> None:
    archive = SubscriberArchive(client, FLOW_ID)
    archive.start()
    empty = archive.make_verifiable()
    assert empty == TreeHead(0, b64(hashlib.sha256(b"").digest()))
    archive.register_batch([NewSubscriber(f"s-{n}", f"s-{n}@example.com") for n in range(1, 14)])
    assert archive.make_verifiable().tree_size == 13  # idempotent
    leaves = archive_leaves(archive)

    head = archive.tree_head()
    assert head == TreeHead(13, b64(tree_root(leaves)))

    key = make_note_key("example.com/archive")
    note = archive.checkpoint(key.signer_text)
    checkpoint = parse_checkpoint(open_note(note, key))
    assert checkpoint.origin == f"attrflow/{FLOW_ID}/subscribers"
    assert (checkpoint.tree_size, checkpoint.root_hash) == (13, tree_root(leaves))
    named = parse_checkpoint(open_note(archive.checkpoint(key.signer_text.encode(), "o/x"), key))
    assert named.origin == "o/x"

    for size in (1, 2, 5, 8, 13):
        for sequence in range(1, size + 1):
            proof = archive.inclusion_proof(sequence, size)
            assert (proof.leaf_index, proof.tree_size) == (sequence - 1, size)
            assert verify_inclusion(
                sequence - 1,
                size,
                leaves[sequence - 1],
                decode_hashes(proof.hashes),
                tree_root(leaves[:size]),
            ), (sequence, size)
    newest = archive.inclusion_proof(4)
    assert newest.tree_size == 13
    assert newest.to_dict() == {"leafIndex": 3, "treeSize": 13, "hashes": newest.hashes}

    for first in range(1, 14):
        for second in range(first, 14):
            consistency = archive.consistency_proof(first, second)
            assert isinstance(consistency, ConsistencyProof)
            assert (consistency.from_, consistency.to) == (first, second)
            assert verify_consistency(
                first,
                second,
                decode_hashes(consistency.hashes),
                tree_root(leaves[:first]),
                tree_root(leaves[:second]),
            ), (first, second)


def test_an_app_log_proves_one_named_log(client: Client) -> None:
    logs = AppLog(client, "audited-app")
    logs.start()
    logs.make_verifiable("audit")
    logs.append_batch("audit", [{"event": "login", "n": n} for n in range(7)])
    logs.append("chat", {"text": "not in the audit tree"})
    leaves = log_leaves(logs, "audit")
    assert logs.tree_head("audit") == TreeHead(7, b64(tree_root(leaves)))

    key = make_note_key("example.com/audit")
    checkpoint = parse_checkpoint(open_note(logs.checkpoint("audit", key.signer_text), key))
    assert checkpoint.origin == "attrflow/audited-app/audit"
    assert checkpoint.root_hash == tree_root(leaves)

    proof = logs.inclusion_proof("audit", 6)
    assert isinstance(proof, InclusionProof)
    assert verify_inclusion(5, 7, leaves[5], decode_hashes(proof.hashes), tree_root(leaves))
    consistency = logs.consistency_proof("audit", 3, 7)
    assert verify_consistency(
        3, 7, decode_hashes(consistency.hashes), tree_root(leaves[:3]), tree_root(leaves)
    )
    assert consistency.to_dict()["from"] == 3


def test_note_keys_from_attrflow_are_in_the_note_format() -> None:
    signer, verifier = generate_key("example.com/k")
    assert signer.startswith("PRIVATE+KEY+example.com/k+")
    assert note_verifier_key(signer) == verifier
    assert note_verifier_key(signer.encode() + b"\n") == verifier
    independent = make_note_key("example.com/other")
    name, key_hash, _ = note_verifier_key(independent.signer_text).split("+", 2)
    assert (name, key_hash) == ("example.com/other", independent.key_hash.hex())


def test_bad_proof_requests_and_keys_are_typed_errors_naming_the_fault(client: Client) -> None:
    archive = SubscriberArchive(client, FLOW_ID)
    archive.start()
    with pytest.raises(InvalidInputError, match="is not verifiable: switch it on first"):
        archive.inclusion_proof(1)
    archive.make_verifiable()
    for n in range(5):
        archive.register(f"s-{n}", f"s-{n}@example.com")
    cases = [
        (lambda: archive.inclusion_proof(6), "beyond tree size 5"),
        (lambda: archive.inclusion_proof(0), "no record 0"),
        (lambda: archive.inclusion_proof(2, 9), "beyond"),
        (lambda: archive.consistency_proof(4, 2), "from must not exceed to"),
        (lambda: archive.consistency_proof(1, 9), "beyond"),
        (lambda: archive.checkpoint("not a key"), "malformed key"),
        (lambda: archive.checkpoint(b"\xff\xfe"), "malformed key"),
        (lambda: archive.inclusion_proof(-1), "sequence"),
        (lambda: archive.consistency_proof(-1, 2), "from must be a tree size"),
        (lambda: note_verifier_key("PRIVATE+KEY+x+00000000+AQ=="), "malformed key"),
    ]
    for call, message in cases:
        with pytest.raises(InvalidInputError) as raised:
            call()
        assert message in str(raised.value), (message, str(raised.value))
    assert archive.tree_head().tree_size == 5


def test_a_proof_of_a_trimmed_record_names_the_oldest_retained_sequence(client: Client) -> None:
    archive = SubscriberArchive(client, FLOW_ID)
    archive.start()
    archive.make_verifiable()
    archive.register_batch([NewSubscriber(f"s-{n}", f"s-{n}@example.com") for n in range(250)])
    archive.trim(keep_newest=100)
    with pytest.raises(RecordTrimmedError) as raised:
        archive.inclusion_proof(1)
    assert str(raised.value) == "record 1 was trimmed; the oldest retained sequence is 101"
    assert raised.value.sequence == 1
    assert raised.value.oldest_sequence == 101


def test_a_trimmed_log_is_not_switched_on_and_names_its_oldest_retained_sequence(
    client: Client,
) -> None:
    archive = SubscriberArchive(client, FLOW_ID)
    archive.start()
    archive.register_batch([NewSubscriber(f"s-{n}", f"s-{n}@example.com") for n in range(250)])
    archive.trim(keep_newest=100)
    with pytest.raises(RecordTrimmedError) as raised:
        archive.make_verifiable()
    assert (raised.value.sequence, raised.value.oldest_sequence) == (1, 101)
