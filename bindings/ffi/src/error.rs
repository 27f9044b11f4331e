//! `attrflow::Error` as one exported error enum: a sealed `AttrflowException` hierarchy in
//! Kotlin, an `AttrflowError` enum in Swift.
//!
//! The enum is flat: each variant carries the core's message unchanged (it names the flow
//! ID, token or instance that was wrong), so `exception.message` in Kotlin and the case's
//! `message` in Swift read exactly as the Python exception does.

/// An error of any attrflow call; the variant says what kind of failure, the message what
/// exactly was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
#[uniffi(flat_error)]
pub enum AttrflowError {
    /// Another call holds a lock this call needs; nothing was written. Retry.
    #[error("{0}")]
    LockConflict(String),
    /// No flow with this ID was started in the store.
    #[error("{0}")]
    FlowNotFound(String),
    /// A flow with this ID is already running.
    #[error("{0}")]
    FlowAlreadyStarted(String),
    /// The caller's input broke a rule (a bad name, a missing field, malformed JSON).
    #[error("{0}")]
    InvalidInput(String),
    /// A page token is neither `""`, `current`, nor a 20-digit chunk boundary.
    #[error("{0}")]
    InvalidPageToken(String),
    /// A well-formed page token names a chunk that is not stored.
    #[error("{0}")]
    PageNotFound(String),
    /// A record the call looked up by key (a customer profile, say) is not stored.
    #[error("{0}")]
    RecordNotFound(String),
    /// A handler read a map instance its call did not load.
    #[error("{0}")]
    AttributeMapNotLoaded(String),
    /// A handler failed (or panicked); nothing it wrote was stored. The message starts
    /// with the handler's error type when it has one.
    #[error("{0}")]
    HandlerFailure(String),
    /// The store could not be opened, read or written.
    #[error("{0}")]
    Storage(String),
}

impl From<attrflow::Error> for AttrflowError {
    fn from(error: attrflow::Error) -> Self {
        let message = error.to_string();
        match error {
            attrflow::Error::LockConflict(_) => AttrflowError::LockConflict(message),
            attrflow::Error::FlowNotFound { .. } => AttrflowError::FlowNotFound(message),
            attrflow::Error::FlowAlreadyStarted { .. } => {
                AttrflowError::FlowAlreadyStarted(message)
            }
            attrflow::Error::InvalidInput(_) => AttrflowError::InvalidInput(message),
            attrflow::Error::InvalidPageToken { .. } => AttrflowError::InvalidPageToken(message),
            attrflow::Error::PageNotFound(_) => AttrflowError::PageNotFound(message),
            attrflow::Error::RecordNotFound(_) => AttrflowError::RecordNotFound(message),
            attrflow::Error::AttributeMapNotLoaded { .. } => {
                AttrflowError::AttributeMapNotLoaded(message)
            }
            attrflow::Error::HandlerFailure { error_type, .. } if !error_type.is_empty() => {
                AttrflowError::HandlerFailure(format!("{error_type}: {message}"))
            }
            attrflow::Error::HandlerFailure { .. } => AttrflowError::HandlerFailure(message),
            // Disk full is a storage error here too; its message says so.
            attrflow::Error::Storage(_) | attrflow::Error::StorageFull(_) => {
                AttrflowError::Storage(message)
            }
        }
    }
}

/// The result of every exported call.
pub type Result<T, E = AttrflowError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_keep_the_core_message() {
        let token = AttrflowError::from(attrflow::Error::InvalidPageToken { token: "7".into() });
        assert_eq!(
            token,
            AttrflowError::InvalidPageToken(r#"invalid page token "7""#.into())
        );
        let started = AttrflowError::from(attrflow::Error::FlowAlreadyStarted {
            flow_id: "f".into(),
            run_id: "r".into(),
        });
        assert_eq!(
            started.to_string(),
            r#"flow "f" is already started (run ID r)"#
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
            AttrflowError::HandlerFailure("panic: RPC X panicked: boom".into())
        );
        let untyped = AttrflowError::from(attrflow::Error::handler("boom"));
        assert_eq!(untyped, AttrflowError::HandlerFailure("boom".into()));
    }
}
