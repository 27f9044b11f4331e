//! Where a flow's run stands ([`FlowStatus`]): a leaf both the run lifecycle
//! ([`crate::lifecycle`]) and the errors that name a run's status ([`crate::error`]) use.

use serde::{Deserialize, Serialize};

/// Where a flow's run stands, as Dex's `FlowStatus` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowStatus {
    /// Started and not stopped: it serves RPCs.
    Running,
    /// Stopped with [`crate::lifecycle::StopType::Cancel`].
    Canceled,
    /// Stopped with [`crate::lifecycle::StopType::Terminate`].
    Terminated,
    /// Stopped with [`crate::lifecycle::StopType::Fail`].
    Failed,
}

impl FlowStatus {
    /// The status's name (`running`, `canceled`, `terminated`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            FlowStatus::Running => "running",
            FlowStatus::Canceled => "canceled",
            FlowStatus::Terminated => "terminated",
            FlowStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for FlowStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
