"""Verifiable logs (issue 53): what the clients' proof methods return, and note keys.

A chunked log's records form an RFC 6962 Merkle tree (record ``n`` is leaf ``n-1``); the
clients (:class:`~attrflow.flows.app_log.AppLog`,
:class:`~attrflow.flows.chunked_subscriber.SubscriberArchive`) answer its
:class:`TreeHead`, signed checkpoints (C2SP ``tlog-checkpoint`` in a ``signed-note``), an
:class:`InclusionProof` of a record and a :class:`ConsistencyProof` between two tree sizes.
Hashes are base64 text, as ``attrflow prove`` prints them. The rules are the Rust core's
(``attrflow::verifiable``; docs/verifiable-logs.md). A signer key is the application's
(``PRIVATE+KEY+<name>+<hash>+<base64>``, as Go's ``note.GenerateKey`` writes it): passed to
each ``checkpoint`` call, never stored.

Bad requests raise ``InvalidInputError`` naming what was wrong: a sequence or tree size
beyond the tree, ``from_ > to``, a malformed key. A proof of a record a trim dropped, or
switching on a log whose oldest records were trimmed, raises ``RecordTrimmedError`` with
``sequence`` and ``oldest_sequence`` (the oldest retained one).

>>> signer_key, verifier_key = generate_key("example.com/log")
>>> signer_key.startswith("PRIVATE+KEY+example.com/log+")
True
>>> note_verifier_key(signer_key) == verifier_key
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from attrflow import _native

__all__ = [
    "ConsistencyProof",
    "InclusionProof",
    "TreeHead",
    "generate_key",
    "note_verifier_key",
]


@dataclass(frozen=True)
class TreeHead:
    """A tree size (records covered, from sequence 1) and its RFC 6962 root hash (base64;
    ``SHA-256("")`` for the empty tree)."""

    tree_size: int
    root_hash: str

    def to_dict(self) -> dict[str, object]:
        """The head as JSON: ``{"treeSize": M, "rootHash": "<base64>"}``."""
        return {"treeSize": self.tree_size, "rootHash": self.root_hash}


@dataclass(frozen=True)
class InclusionProof:
    """The RFC 6962 audit path of leaf ``leaf_index`` (record ``leaf_index + 1``) in the tree
    of ``tree_size`` records: base64 hashes, deepest first."""

    leaf_index: int
    tree_size: int
    hashes: list[str]

    def to_dict(self) -> dict[str, object]:
        """The proof as ``attrflow prove --sequence`` prints it."""
        return {"leafIndex": self.leaf_index, "treeSize": self.tree_size, "hashes": self.hashes}


@dataclass(frozen=True)
class ConsistencyProof:
    """The RFC 6962 consistency proof between tree sizes ``from_`` and ``to``: base64
    hashes (none when ``from_`` is 0 or equals ``to``)."""

    from_: int
    to: int
    hashes: list[str]

    def to_dict(self) -> dict[str, object]:
        """The proof as ``attrflow prove --from --to`` prints it."""
        return {"from": self.from_, "to": self.to, "hashes": self.hashes}


def tree_head_from_json(text: str) -> TreeHead:
    """A :class:`TreeHead` from the native module's JSON."""
    data = json.loads(text)
    return TreeHead(data["treeSize"], data["rootHash"])


def inclusion_proof_from_json(text: str) -> InclusionProof:
    """An :class:`InclusionProof` from the JSON ``attrflow prove`` prints."""
    data = json.loads(text)
    return InclusionProof(data["leafIndex"], data["treeSize"], list(data["hashes"]))


def consistency_proof_from_json(text: str) -> ConsistencyProof:
    """A :class:`ConsistencyProof` from the JSON ``attrflow prove`` prints."""
    data = json.loads(text)
    return ConsistencyProof(data["from"], data["to"], list(data["hashes"]))


def generate_key(name: str) -> tuple[str, str]:
    """A new Ed25519 note key pair named ``name``: ``(signer key, verifier key)`` texts, as
    Go's ``note.GenerateKey`` writes them. attrflow keeps neither; store the signer key
    where only the signing application reads it."""
    return _native.generate_note_key(name)


def note_verifier_key(signer_key: str | bytes) -> str:
    """The verifier key text (``<name>+<hash>+<base64>``) of ``signer_key``; raises
    ``InvalidInputError`` for a malformed key. Publish it so others can check checkpoints."""
    return _native.note_verifier_key(signer_key)
