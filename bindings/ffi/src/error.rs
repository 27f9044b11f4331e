//! `attrflow::Error` as one exported error enum: a sealed `AttrflowException` hierarchy in
//! Kotlin, an `AttrflowError` enum in Swift.
//!
//! Each variant carries the core's message unchanged as `reason` (it names the flow ID,
//! token or instance that was wrong, and reads exactly as the Python exception does) and
//! the core error's own fields as properties: `flowId`, `status`, `runId`, `currentRunId`,
//! `token`, `oldestToken`,
//! `oldestSequence`, `sequence`, `physicalName`, `errorType`. A test below fails when a kind of the
//! core's [`ErrorKind::ALL`] has no variant of its own here.

/// An error of any attrflow call; the variant says what kind of failure, `reason` what
/// exactly was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
pub enum AttrflowError {
    /// Another call holds a lock this call needs; nothing was written. Retry.
    #[error("{reason}")]
    LockConflict {
        /// The core's message.
        reason: String,
    },
    /// No flow with this ID was started in the store.
    #[error("{reason}")]
    FlowNotFound {
        /// The core's message.
        reason: String,
        /// The flow ID asked for.
        flow_id: String,
    },
    /// The flow was stopped: it serves no RPCs until a start begins a new run under its ID.
    #[error("{reason}")]
    FlowNotActive {
        /// The core's message.
        reason: String,
        /// The flow ID asked for.
        flow_id: String,
        /// How it was stopped: `canceled`, `terminated` or `failed`.
        status: String,
    },
    /// A flow with this ID already has a run and the start's ID reuse policy does not
    /// begin another.
    #[error("{reason}")]
    FlowAlreadyStarted {
        /// The core's message.
        reason: String,
        /// The flow ID asked for.
        flow_id: String,
        /// The run ID of the existing run.
        run_id: String,
        /// Where that run stands: `running`, or how it was stopped (`canceled`,
        /// `terminated`, `failed`).
        status: String,
    },
    /// The caller's input broke a rule (a bad name, a missing field, malformed JSON).
    #[error("{reason}")]
    InvalidInput {
        /// The core's message, naming what was wrong.
        reason: String,
    },
    /// A call pinned to one run of a flow (a tail resumed in the run it read, say) found
    /// the flow in another run: it was started again since. Nothing ran.
    #[error("{reason}")]
    RunNotCurrent {
        /// The core's message.
        reason: String,
        /// The flow ID asked for.
        flow_id: String,
        /// The run asked for.
        run_id: String,
        /// The flow's run now.
        current_run_id: String,
    },
    /// A page token is neither `""`, `current`, nor a 20-digit chunk boundary.
    #[error("{reason}")]
    InvalidPageToken {
        /// The core's message.
        reason: String,
        /// The token refused.
        token: String,
    },
    /// A well-formed page token names a chunk that is not stored.
    #[error("{reason}")]
    PageNotFound {
        /// The core's message.
        reason: String,
    },
    /// A page token, or the start of a read forward, names records a trim of the log
    /// dropped; restart from `oldestToken` (or `oldestSequence`).
    #[error("{reason}")]
    PageTrimmed {
        /// The core's message.
        reason: String,
        /// The trimmed page's token.
        token: String,
        /// The token of the oldest retained page (`current` when no archive remains).
        oldest_token: String,
        /// The oldest retained sequence.
        oldest_sequence: u64,
    },
    /// A verifiable log's proof names a record a trim of the log dropped, or a trimmed
    /// log is switched on; proofs can be asked again from `oldestSequence`.
    #[error("{reason}")]
    RecordTrimmed {
        /// The core's message.
        reason: String,
        /// The sequence asked for.
        sequence: u64,
        /// The oldest retained sequence.
        oldest_sequence: u64,
    },
    /// A record the call looked up by key (a customer profile, say) is not stored.
    #[error("{reason}")]
    RecordNotFound {
        /// The core's message.
        reason: String,
    },
    /// A handler read a map instance its call did not load.
    #[error("{reason}")]
    AttributeMapNotLoaded {
        /// The core's message.
        reason: String,
        /// The instance read, `<map>/<instance>`.
        physical_name: String,
    },
    /// A handler failed (or panicked); nothing it wrote was stored.
    #[error("{reason}")]
    HandlerFailure {
        /// The handler's own message.
        reason: String,
        /// The type of the handler's error (`panic`, say); empty when unknown.
        error_type: String,
    },
    /// The store could not be opened, read or written.
    #[error("{reason}")]
    Storage {
        /// The core's message.
        reason: String,
    },
    /// The store's disk (or its size cap) is full: nothing of the call was written, and
    /// the store works again once space is freed.
    #[error("{reason}")]
    StorageFull {
        /// The core's message.
        reason: String,
    },
}

impl From<attrflow::Error> for AttrflowError {
    fn from(error: attrflow::Error) -> Self {
        use attrflow::Error as E;
        let reason = error.to_string();
        match error {
            E::LockConflict(_) => AttrflowError::LockConflict { reason },
            E::FlowNotFound { flow_id } => AttrflowError::FlowNotFound { reason, flow_id },
            E::FlowNotActive { flow_id, status } => AttrflowError::FlowNotActive {
                reason,
                flow_id,
                status: status.as_str().to_owned(),
            },
            E::FlowAlreadyStarted {
                flow_id,
                run_id,
                status,
            } => AttrflowError::FlowAlreadyStarted {
                reason,
                flow_id,
                run_id,
                status: status.as_str().to_owned(),
            },
            E::InvalidInput(_) => AttrflowError::InvalidInput { reason },
            E::RunNotCurrent {
                flow_id,
                run_id,
                current_run_id,
            } => AttrflowError::RunNotCurrent {
                reason,
                flow_id,
                run_id,
                current_run_id,
            },
            E::InvalidPageToken { token } => AttrflowError::InvalidPageToken { reason, token },
            E::PageNotFound(_) => AttrflowError::PageNotFound { reason },
            E::PageTrimmed {
                token,
                oldest_token,
                oldest_sequence,
            } => AttrflowError::PageTrimmed {
                reason,
                token,
                oldest_token,
                oldest_sequence,
            },
            E::RecordTrimmed {
                sequence,
                oldest_sequence,
            } => AttrflowError::RecordTrimmed {
                reason,
                sequence,
                oldest_sequence,
            },
            E::RecordNotFound(_) => AttrflowError::RecordNotFound { reason },
            E::AttributeMapNotLoaded { physical_name } => AttrflowError::AttributeMapNotLoaded {
                reason,
                physical_name,
            },
            E::HandlerFailure { error_type, .. } => {
                AttrflowError::HandlerFailure { reason, error_type }
            }
            E::Storage(_) => AttrflowError::Storage { reason },
            E::StorageFull(_) => AttrflowError::StorageFull { reason },
        }
    }
}

impl AttrflowError {
    /// The core's kind this variant stands for (one variant a kind).
    pub fn kind(&self) -> ErrorKind {
        match self {
            AttrflowError::LockConflict { .. } => ErrorKind::LockConflict,
            AttrflowError::FlowNotFound { .. } => ErrorKind::FlowNotFound,
            AttrflowError::FlowNotActive { .. } => ErrorKind::FlowNotActive,
            AttrflowError::FlowAlreadyStarted { .. } => ErrorKind::FlowAlreadyStarted,
            AttrflowError::InvalidInput { .. } => ErrorKind::InvalidInput,
            AttrflowError::RunNotCurrent { .. } => ErrorKind::RunNotCurrent,
            AttrflowError::InvalidPageToken { .. } => ErrorKind::InvalidPageToken,
            AttrflowError::PageNotFound { .. } => ErrorKind::PageNotFound,
            AttrflowError::PageTrimmed { .. } => ErrorKind::PageTrimmed,
            AttrflowError::RecordTrimmed { .. } => ErrorKind::RecordTrimmed,
            AttrflowError::RecordNotFound { .. } => ErrorKind::RecordNotFound,
            AttrflowError::AttributeMapNotLoaded { .. } => ErrorKind::AttributeMapNotLoaded,
            AttrflowError::HandlerFailure { .. } => ErrorKind::HandlerFailure,
            AttrflowError::Storage { .. } => ErrorKind::Storage,
            AttrflowError::StorageFull { .. } => ErrorKind::StorageFull,
        }
    }
}

use attrflow::ErrorKind;

/// The result of every exported call.
pub type Result<T, E = AttrflowError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_keep_the_core_message_and_fields() {
        let token = AttrflowError::from(attrflow::Error::InvalidPageToken { token: "7".into() });
        assert_eq!(
            token,
            AttrflowError::InvalidPageToken {
                reason: r#"invalid page token "7""#.into(),
                token: "7".into()
            }
        );
        let started = AttrflowError::from(attrflow::Error::FlowAlreadyStarted {
            flow_id: "f".into(),
            run_id: "r".into(),
            status: attrflow::FlowStatus::Running,
        });
        assert_eq!(
            started.to_string(),
            r#"flow "f" is already started (run ID r)"#
        );
        assert!(matches!(
            started,
            AttrflowError::FlowAlreadyStarted { flow_id, run_id, .. } if flow_id == "f" && run_id == "r"
        ));
    }

    #[test]
    fn a_trimmed_page_names_the_oldest_retained_one() {
        let trimmed = AttrflowError::from(attrflow::Error::PageTrimmed {
            token: "00000000000000000001".into(),
            oldest_token: "current".into(),
            oldest_sequence: 501,
        });
        assert!(matches!(
            trimmed,
            AttrflowError::PageTrimmed { oldest_token, oldest_sequence: 501, .. }
                if oldest_token == "current"
        ));
    }

    #[test]
    fn a_trimmed_record_names_the_oldest_retained_sequence() {
        let trimmed = AttrflowError::from(attrflow::Error::RecordTrimmed {
            sequence: 3,
            oldest_sequence: 201,
        });
        assert_eq!(
            trimmed,
            AttrflowError::RecordTrimmed {
                reason: "record 3 was trimmed; the oldest retained sequence is 201".into(),
                sequence: 3,
                oldest_sequence: 201,
            }
        );
    }

    #[test]
    fn handler_failures_keep_their_error_type() {
        let failure = AttrflowError::from(attrflow::Error::HandlerFailure {
            error_type: "panic".into(),
            message: "RPC X panicked: boom".into(),
        });
        assert_eq!(
            failure,
            AttrflowError::HandlerFailure {
                reason: "RPC X panicked: boom".into(),
                error_type: "panic".into()
            }
        );
    }

    /// A core error of `kind`, with every field set. The match has no catch-all, so a kind
    /// added to the core fails to compile here until it is mapped.
    fn sample(kind: ErrorKind) -> attrflow::Error {
        use attrflow::Error as E;
        let text = || "x".to_owned();
        match kind {
            ErrorKind::LockConflict => E::LockConflict(text()),
            ErrorKind::FlowNotFound => E::FlowNotFound { flow_id: text() },
            ErrorKind::FlowNotActive => E::FlowNotActive {
                flow_id: text(),
                status: attrflow::FlowStatus::Canceled,
            },
            ErrorKind::FlowAlreadyStarted => E::FlowAlreadyStarted {
                flow_id: text(),
                run_id: text(),
                status: attrflow::FlowStatus::Running,
            },
            ErrorKind::InvalidInput => E::InvalidInput(text()),
            ErrorKind::RunNotCurrent => E::RunNotCurrent {
                flow_id: text(),
                run_id: text(),
                current_run_id: text(),
            },
            ErrorKind::InvalidPageToken => E::InvalidPageToken { token: text() },
            ErrorKind::PageNotFound => E::PageNotFound(text()),
            ErrorKind::PageTrimmed => E::PageTrimmed {
                token: text(),
                oldest_token: text(),
                oldest_sequence: 1,
            },
            ErrorKind::RecordTrimmed => E::RecordTrimmed {
                sequence: 1,
                oldest_sequence: 2,
            },
            ErrorKind::RecordNotFound => E::RecordNotFound(text()),
            ErrorKind::AttributeMapNotLoaded => E::AttributeMapNotLoaded {
                physical_name: text(),
            },
            ErrorKind::HandlerFailure => E::HandlerFailure {
                error_type: text(),
                message: text(),
            },
            ErrorKind::Storage => E::Storage(text()),
            ErrorKind::StorageFull => E::StorageFull(text()),
        }
    }

    #[test]
    fn every_core_error_kind_has_a_variant_of_its_own() {
        for kind in ErrorKind::ALL {
            let core = sample(kind);
            assert_eq!(core.kind(), kind, "sample of {}", kind.name());
            let exported = AttrflowError::from(core.clone());
            assert_eq!(
                exported.kind(),
                kind,
                "{} is folded into another variant",
                kind.name()
            );
            assert_eq!(
                exported.to_string(),
                core.to_string(),
                "{} keeps the core's message",
                kind.name()
            );
        }
    }

    #[test]
    fn a_full_disk_is_not_a_plain_storage_error() {
        let full = AttrflowError::from(attrflow::Error::StorageFull("disk full".into()));
        assert_eq!(
            full,
            AttrflowError::StorageFull {
                reason: "storage error: disk full".into()
            }
        );
    }
}
