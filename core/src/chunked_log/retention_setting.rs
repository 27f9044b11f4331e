//! A log's [`Retention`] setting: a leaf the log's state ([`super::state`]) keeps and the
//! trims of [`super::retention`] apply.

use serde::{Deserialize, Serialize};

/// A log's retention, kept in its state and applied by every append.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retention {
    /// Keep at least this many of the newest records (1 or more): an append drops the
    /// oldest archived chunks as long as that many remain.
    pub keep_newest: u64,
}
