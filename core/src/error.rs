//! The one error type of attrflow.
//!
//! Every front end (Python, Kotlin, Swift, HTTP) maps these variants one-to-one onto its own
//! error types, so the variant says *what kind* of failure happened and the message says
//! exactly what was wrong.

/// Everything that can go wrong in attrflow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// One or more of the physical names an RPC locks is held by another call. Nothing was
    /// read or written; the caller should retry, ideally with backoff.
    #[error("{0}")]
    LockConflict(String),

    /// No flow with this ID has been started in the store.
    #[error("flow {flow_id:?} not found")]
    FlowNotFound {
        /// The flow ID that was looked up.
        flow_id: String,
    },

    /// The flow was stopped ([`crate::Runtime::stop_flow`]): it serves no RPC and is not
    /// stopped twice, until a start begins a new run under its ID.
    #[error("flow {flow_id:?} was stopped ({status}): it serves no RPCs")]
    FlowNotActive {
        /// The flow's ID.
        flow_id: String,
        /// How it was stopped.
        status: crate::flow_status::FlowStatus,
    },

    /// A flow with this ID already has a run, and the start's
    /// [`crate::IdReusePolicy`] does not begin another: it is running, or it was stopped
    /// (`status`) and the policy does not start the ID again after a run that ended so.
    #[error("{}", already_started(flow_id, run_id, *status))]
    FlowAlreadyStarted {
        /// The flow ID that was started twice.
        flow_id: String,
        /// The run ID of the flow's run.
        run_id: String,
        /// Where that run stands: running, or how it was stopped.
        status: crate::flow_status::FlowStatus,
    },

    /// Input given by the caller broke a rule: a bad name, a missing field, malformed JSON.
    #[error("{0}")]
    InvalidInput(String),

    /// A call pinned to one run of a flow (an RPC's run ID, a tail resumed in the run it
    /// read) found the flow in another run: it was started again since, or the run ID was
    /// never its. Nothing ran; what the caller holds (a position, a read) belongs to
    /// `run_id`, and the flow's records now are `current_run_id`'s.
    #[error("flow {flow_id:?} has no run {run_id:?}; its run is {current_run_id:?}")]
    RunNotCurrent {
        /// The flow's ID.
        flow_id: String,
        /// The run the caller asked for.
        run_id: String,
        /// The flow's run now.
        current_run_id: String,
    },

    /// A page token is neither `""`, `current`, nor a 20-digit chunk boundary.
    #[error("invalid page token {token:?}")]
    InvalidPageToken {
        /// The token as the caller gave it.
        token: String,
    },

    /// A well-formed page token names a chunk that is not stored.
    #[error("{0}")]
    PageNotFound(String),

    /// A well-formed page token, or the start of a read forward, names records a trim of
    /// the log dropped. `oldest_token` is the page token of the oldest chunk the log still
    /// holds (`current` when it holds no archived chunk), so a walk can restart there.
    #[error(
        "page {token:?} was trimmed; the oldest retained page is {oldest_token:?}, from sequence {oldest_sequence}"
    )]
    PageTrimmed {
        /// The token of the trimmed chunk (for a read forward, of the chunk that held its
        /// start).
        token: String,
        /// The token of the oldest retained page.
        oldest_token: String,
        /// The sequence of the oldest retained record (the next one the log gets, when it
        /// holds none).
        oldest_sequence: u64,
    },

    /// A verifiable log's proof names a record a trim of the log dropped (or a log whose
    /// oldest records were trimmed is switched on, its tree needing every record from
    /// sequence 1). Unlike [`Error::PageTrimmed`] there is no page token: the caller named
    /// a sequence, and `oldest_sequence` is where a proof can be asked again.
    #[error("record {sequence} was trimmed; the oldest retained sequence is {oldest_sequence}")]
    RecordTrimmed {
        /// The sequence asked for.
        sequence: u64,
        /// The sequence of the oldest retained record.
        oldest_sequence: u64,
    },

    /// A lookup by key found no stored record (`customer profile "<email>" not found`).
    #[error("{0}")]
    RecordNotFound(String),

    /// A handler read a map instance that the RPC neither loaded by definition nor by
    /// per-call options.
    #[error("AttributeMap instance was not loaded for RPC: {physical_name}")]
    AttributeMapNotLoaded {
        /// The physical name (`<map>/<instance>`) that was read.
        physical_name: String,
    },

    /// A handler failed (returned an error of its own, or panicked). Nothing it wrote was
    /// stored.
    #[error("{message}")]
    HandlerFailure {
        /// The type of the original error, when the handler's language has one (for
        /// example `ValueError`); empty when unknown.
        error_type: String,
        /// The handler's own message.
        message: String,
    },

    /// The store could not be opened, read or written, or holds data attrflow cannot decode.
    #[error("storage error: {0}")]
    Storage(String),

    /// The store's disk (or its size cap) is full. Nothing of the failed call was written,
    /// and the store works again once space is freed.
    #[error("storage error: {0}")]
    StorageFull(String),
}

/// The message of [`Error::FlowAlreadyStarted`].
fn already_started(flow_id: &str, run_id: &str, status: crate::flow_status::FlowStatus) -> String {
    match status {
        crate::flow_status::FlowStatus::Running => {
            format!("flow {flow_id:?} is already started (run ID {run_id})")
        }
        stopped => format!(
            "flow {flow_id:?} is already started (run ID {run_id}, stopped: {stopped}), and \
             the start's ID reuse policy does not begin another run after a {stopped} one"
        ),
    }
}

impl Error {
    /// Builds an [`Error::InvalidInput`] from anything printable.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Error::InvalidInput(message.into())
    }

    /// Builds an [`Error::Storage`] from anything printable.
    pub fn storage(message: impl Into<String>) -> Self {
        Error::Storage(message.into())
    }

    /// Builds an [`Error::HandlerFailure`] with no error type.
    pub fn handler(message: impl Into<String>) -> Self {
        Error::HandlerFailure {
            error_type: String::new(),
            message: message.into(),
        }
    }

    /// A short, stable name for the variant, used by bindings and the HTTP layer.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::LockConflict(_) => ErrorKind::LockConflict,
            Error::FlowNotFound { .. } => ErrorKind::FlowNotFound,
            Error::FlowNotActive { .. } => ErrorKind::FlowNotActive,
            Error::FlowAlreadyStarted { .. } => ErrorKind::FlowAlreadyStarted,
            Error::InvalidInput(_) => ErrorKind::InvalidInput,
            Error::RunNotCurrent { .. } => ErrorKind::RunNotCurrent,
            Error::InvalidPageToken { .. } => ErrorKind::InvalidPageToken,
            Error::PageNotFound(_) => ErrorKind::PageNotFound,
            Error::PageTrimmed { .. } => ErrorKind::PageTrimmed,
            Error::RecordTrimmed { .. } => ErrorKind::RecordTrimmed,
            Error::RecordNotFound(_) => ErrorKind::RecordNotFound,
            Error::AttributeMapNotLoaded { .. } => ErrorKind::AttributeMapNotLoaded,
            Error::HandlerFailure { .. } => ErrorKind::HandlerFailure,
            Error::Storage(_) => ErrorKind::Storage,
            Error::StorageFull(_) => ErrorKind::StorageFull,
        }
    }

    /// Whether retrying the same call later can succeed without changing it.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::LockConflict(_))
    }
}

/// The kind of an [`Error`], without its details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// See [`Error::LockConflict`].
    LockConflict,
    /// See [`Error::FlowNotFound`].
    FlowNotFound,
    /// See [`Error::FlowNotActive`].
    FlowNotActive,
    /// See [`Error::FlowAlreadyStarted`].
    FlowAlreadyStarted,
    /// See [`Error::InvalidInput`].
    InvalidInput,
    /// See [`Error::RunNotCurrent`].
    RunNotCurrent,
    /// See [`Error::InvalidPageToken`].
    InvalidPageToken,
    /// See [`Error::PageNotFound`].
    PageNotFound,
    /// See [`Error::PageTrimmed`].
    PageTrimmed,
    /// See [`Error::RecordTrimmed`].
    RecordTrimmed,
    /// See [`Error::RecordNotFound`].
    RecordNotFound,
    /// See [`Error::AttributeMapNotLoaded`].
    AttributeMapNotLoaded,
    /// See [`Error::HandlerFailure`].
    HandlerFailure,
    /// See [`Error::Storage`].
    Storage,
    /// See [`Error::StorageFull`].
    StorageFull,
}

impl ErrorKind {
    /// Every kind, in declaration order: the table each binding maps onto its own error
    /// types (and tests that none is left out).
    pub const ALL: [ErrorKind; 15] = [
        ErrorKind::LockConflict,
        ErrorKind::FlowNotFound,
        ErrorKind::FlowNotActive,
        ErrorKind::FlowAlreadyStarted,
        ErrorKind::InvalidInput,
        ErrorKind::RunNotCurrent,
        ErrorKind::InvalidPageToken,
        ErrorKind::PageNotFound,
        ErrorKind::PageTrimmed,
        ErrorKind::RecordTrimmed,
        ErrorKind::RecordNotFound,
        ErrorKind::AttributeMapNotLoaded,
        ErrorKind::HandlerFailure,
        ErrorKind::Storage,
        ErrorKind::StorageFull,
    ];

    /// The kind's stable name (`lock_conflict`, `flow_not_found`, …), the key bindings
    /// look their error types up by.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::LockConflict => "lock_conflict",
            ErrorKind::FlowNotFound => "flow_not_found",
            ErrorKind::FlowNotActive => "flow_not_active",
            ErrorKind::FlowAlreadyStarted => "flow_already_started",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::RunNotCurrent => "run_not_current",
            ErrorKind::InvalidPageToken => "invalid_page_token",
            ErrorKind::PageNotFound => "page_not_found",
            ErrorKind::PageTrimmed => "page_trimmed",
            ErrorKind::RecordTrimmed => "record_trimmed",
            ErrorKind::RecordNotFound => "record_not_found",
            ErrorKind::AttributeMapNotLoaded => "attribute_map_not_loaded",
            ErrorKind::HandlerFailure => "handler_failure",
            ErrorKind::Storage => "storage",
            ErrorKind::StorageFull => "storage_full",
        }
    }
}

/// The result type of every fallible attrflow call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_was_wrong() {
        let token = Error::InvalidPageToken { token: "1".into() };
        assert_eq!(token.to_string(), r#"invalid page token "1""#);
        let missing = Error::FlowNotFound {
            flow_id: "f".into(),
        };
        assert_eq!(missing.to_string(), r#"flow "f" not found"#);
        let not_loaded = Error::AttributeMapNotLoaded {
            physical_name: "m/i".into(),
        };
        assert_eq!(
            not_loaded.to_string(),
            "AttributeMap instance was not loaded for RPC: m/i"
        );
        let trimmed = Error::RecordTrimmed {
            sequence: 3,
            oldest_sequence: 9,
        };
        assert_eq!(
            trimmed.to_string(),
            "record 3 was trimmed; the oldest retained sequence is 9"
        );
        assert_eq!(trimmed.kind().name(), "record_trimmed");
    }

    #[test]
    fn every_kind_has_its_own_name() {
        let names: std::collections::HashSet<_> =
            ErrorKind::ALL.iter().map(|kind| kind.name()).collect();
        assert_eq!(names.len(), ErrorKind::ALL.len());
        assert_eq!(
            Error::LockConflict("held".into()).kind().name(),
            "lock_conflict"
        );
    }

    #[test]
    fn only_lock_conflicts_are_retryable() {
        assert!(Error::LockConflict("held".into()).is_retryable());
        assert!(!Error::invalid_input("bad").is_retryable());
        assert!(!Error::storage("disk").is_retryable());
    }
}
