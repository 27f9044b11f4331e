//! The hash-partitioned AttributeMap: keys spread over a fixed number of bucket instances
//! by a stable hash, so that a write rewrites one bounded bucket instead of one value that
//! holds every key.
//!
//! The hash (32-bit FNV-1a) and the bucket count are part of the stored layout: changing
//! either moves keys to other buckets, so it needs a full rehash or a new flow version.

/// The FNV-1a 32-bit offset basis.
pub const FNV1A_32_OFFSET_BASIS: u32 = 2_166_136_261;

/// The FNV-1a 32-bit prime.
pub const FNV1A_32_PRIME: u32 = 16_777_619;

/// The 32-bit FNV-1a hash of `bytes` (multiplication wraps modulo 2^32).
///
/// ```
/// assert_eq!(attrflow::hash_partition::fnv1a_32(b"bob@example.com"), 3_055_529_145);
/// ```
pub fn fnv1a_32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(FNV1A_32_OFFSET_BASIS, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(FNV1A_32_PRIME)
    })
}

/// A partition layout: `count` buckets named `<prefix>-<n>`, `n` zero-padded to the
/// width of `count - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashPartitions {
    prefix: &'static str,
    count: u32,
}

impl HashPartitions {
    /// `count` buckets named `<prefix>-000` … .
    ///
    /// # Panics
    /// When `count` is 0: a layout constant, not user input.
    pub const fn new(prefix: &'static str, count: u32) -> Self {
        assert!(count > 0, "partition count must be positive");
        HashPartitions { prefix, count }
    }

    /// How many buckets there are.
    pub const fn count(&self) -> u32 {
        self.count
    }

    /// The bucket index of a key whose hash is `hash`.
    pub const fn index_of_hash(&self, hash: u32) -> u32 {
        hash % self.count
    }

    /// The instance key of bucket `index`.
    pub fn instance_key(&self, index: u32) -> String {
        let width = (self.count - 1).max(1).ilog10() as usize + 1;
        format!("{}-{index:0width$}", self.prefix)
    }

    /// The instance key of the bucket holding `key` (hashed as its bytes).
    ///
    /// ```
    /// use attrflow::hash_partition::HashPartitions;
    /// let partitions = HashPartitions::new("partition", 1000);
    /// assert_eq!(partitions.instance_for(b"bob@example.com"), "partition-145");
    /// ```
    pub fn instance_for(&self, key: &[u8]) -> String {
        self.instance_key(self.index_of_hash(fnv1a_32(key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        assert_eq!(fnv1a_32(b""), FNV1A_32_OFFSET_BASIS);
        assert_eq!(fnv1a_32(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a_32(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn instance_keys_are_zero_padded_to_the_count() {
        let thousand = HashPartitions::new("partition", 1000);
        assert_eq!(thousand.instance_key(7), "partition-007");
        assert_eq!(thousand.instance_key(999), "partition-999");
        assert_eq!(HashPartitions::new("b", 10).instance_key(3), "b-3");
        assert_eq!(HashPartitions::new("b", 1).instance_key(0), "b-0");
        assert_eq!(HashPartitions::new("b", 1001).instance_key(3), "b-0003");
    }
}
