//! A small seeded random number generator (SplitMix64), so randomized tests print their
//! seed and can be replayed with it.

use std::time::{SystemTime, UNIX_EPOCH};

/// The environment variable that replays a randomized test with a given seed.
pub const SEED_ENV: &str = "ATTRFLOW_TEST_SEED";

/// A SplitMix64 generator.
pub struct SeededRng {
    state: u64,
}

impl SeededRng {
    /// A generator seeded from [`SEED_ENV`] when set, else from the clock. The seed is
    /// printed, so a failing test's captured output names it.
    pub fn from_env_or_clock(test: &str) -> Self {
        let seed = std::env::var(SEED_ENV)
            .ok()
            .and_then(|text| text.parse().ok())
            .unwrap_or_else(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64)
            });
        println!("{test}: seed {seed} (replay with {SEED_ENV}={seed})");
        SeededRng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `range` (inclusive).
    pub fn in_range(&mut self, range: std::ops::RangeInclusive<u64>) -> u64 {
        let span = range.end() - range.start() + 1;
        range.start() + self.next_u64() % span
    }
}
