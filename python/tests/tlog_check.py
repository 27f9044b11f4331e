"""An independent check of attrflow's verifiable logs, written from the specifications with
``hashlib`` and ``cryptography`` only (no attrflow code): RFC 6962 tree hashes, RFC 9162
§2.1.3.2 / §2.1.4.2 proof verification, and C2SP signed notes with Ed25519 note keys in
the format of Go's ``golang.org/x/mod/sumdb/note``. Shared by python/tests and the example
service's tests (examples/python/tests), so the check is written once."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALG_ED25519 = b"\x01"
SIGNATURE_PREFIX = "\u2014 "


def export_bytes(record: object) -> bytes:
    """A record's leaf bytes: its export JSON line (compact, keys sorted), no newline."""
    return json.dumps(record, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def tree_root(leaves: list[bytes]) -> bytes:
    """RFC 6962's Merkle tree hash of ``leaves`` (leaf hashes)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    split = 1
    while split * 2 < len(leaves):
        split *= 2
    return node_hash(tree_root(leaves[:split]), tree_root(leaves[split:]))


def decode_hashes(hashes: list[str]) -> list[bytes]:
    return [base64.b64decode(h, validate=True) for h in hashes]


def _shift_to_set_bit(fn: int, sn: int) -> tuple[int, int]:
    """Right-shifts both until ``fn``'s lowest bit is set or ``fn`` is 0 (RFC 9162)."""
    while not fn & 1 and fn != 0:
        fn >>= 1
        sn >>= 1
    return fn, sn


def verify_inclusion(index: int, size: int, leaf: bytes, proof: list[bytes], root: bytes) -> bool:
    """RFC 9162 §2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            fn, sn = _shift_to_set_bit(fn, sn)
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(
    first: int, second: int, proof: list[bytes], first_root: bytes, second_root: bytes
) -> bool:
    """RFC 9162 §2.1.4.2 (``first == second`` holds with an empty proof and equal roots)."""
    if first == second:
        return not proof and first_root == second_root
    if first == 0 or first > second or not proof:
        return False
    path = list(proof)
    if first & (first - 1) == 0:
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            fn, sn = _shift_to_set_bit(fn, sn)
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_root and sr == second_root and sn == 0


@dataclass(frozen=True)
class NoteKey:
    """An Ed25519 note key made here: its signer key text and its public key."""

    name: str
    signer_text: str
    public_key: Ed25519PublicKey

    @property
    def key_hash(self) -> bytes:
        return _key_hash(self.name, self.public_key.public_bytes_raw())


def _key_hash(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + ALG_ED25519 + public).digest()[:4]


def make_note_key(name: str) -> NoteKey:
    """A new key, its signer text ``PRIVATE+KEY+<name>+<hash>+<base64(0x01 || seed)>``."""
    private = Ed25519PrivateKey.generate()
    public = private.public_key()
    seed = private.private_bytes_raw()
    key_hash = _key_hash(name, public.public_bytes_raw()).hex()
    text = f"PRIVATE+KEY+{name}+{key_hash}+{base64.b64encode(ALG_ED25519 + seed).decode()}"
    return NoteKey(name, text, public)


def open_note(note: str, key: NoteKey) -> str:
    """The text of the signed note ``note`` after checking its signature by ``key``;
    raises ``AssertionError`` when it has none that verifies."""
    text, separator, signatures = note.partition("\n\n")
    assert separator, "a signed note has an empty line before its signatures"
    text += "\n"
    for line in signatures.splitlines():
        assert line.startswith(SIGNATURE_PREFIX), line
        name, _, encoded = line[len(SIGNATURE_PREFIX) :].rpartition(" ")
        raw = base64.b64decode(encoded, validate=True)
        if name != key.name or raw[:4] != key.key_hash:
            continue
        try:
            key.public_key.verify(raw[4:], text.encode())
        except InvalidSignature as error:
            raise AssertionError("the note's signature does not verify") from error
        return text
    raise AssertionError(f"the note has no signature by {key.name}")


@dataclass(frozen=True)
class Checkpoint:
    """A C2SP tlog-checkpoint body: origin, tree size, root hash."""

    origin: str
    tree_size: int
    root_hash: bytes


def parse_checkpoint(text: str) -> Checkpoint:
    lines = text.split("\n")
    assert len(lines) >= 4, text
    assert lines[-1] == "", text
    return Checkpoint(lines[0], int(lines[1]), base64.b64decode(lines[2], validate=True))
