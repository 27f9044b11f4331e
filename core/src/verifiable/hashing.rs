//! RFC 6962 §2.1 hashes: leaf `SHA-256(0x00 || bytes)`, node `SHA-256(0x01 || left ||
//! right)`, and the canonical bytes of a record (its `attrflow export` line).

use sha2::{Digest, Sha256};

/// A SHA-256 hash of the tree.
pub type Hash = [u8; 32];

/// The canonical bytes of a record: the record's JSON exactly as `attrflow export` writes
/// its line, without the newline (serde_json's compact form, object keys sorted).
pub fn leaf_bytes(record: &serde_json::Value) -> Vec<u8> {
    record.to_string().into_bytes()
}

/// The leaf hash of a record's canonical bytes: `SHA-256(0x00 || bytes)`.
pub fn leaf_hash(bytes: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update([0u8]);
    hasher.update(bytes);
    hasher.finalize().into()
}

/// The hash of an interior node: `SHA-256(0x01 || left || right)`.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update([1u8]);
    hasher.update(left);
    hasher.update(right);
    hasher.finalize().into()
}

/// The root of the empty tree: `SHA-256("")`.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}
