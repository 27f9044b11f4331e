//! PostgreSQL errors as attrflow errors. Lock waits that ran out (`55P03`), serialization
//! failures (`40001`) and deadlocks (`40P01`) are retryable lock conflicts: PG-wire engines
//! such as CockroachDB and YugabyteDB report their own transaction conflicts with the same
//! codes.
//!
//! A connection that failed (the server restarted or failed over, the network cut it)
//! before the call's COMMIT was sent leaves nothing committed: that call fails with a
//! retryable [`Error::LockConflict`] saying so. A connection that failed while the COMMIT
//! was on its way leaves the outcome unknown: that call fails with an [`Error::Storage`]
//! that says so ([`COMMIT_OUTCOME_UNKNOWN`]); an idempotency key makes its retry safe.

use std::cell::Cell;

use postgres::error::SqlState;

use crate::error::Error;

/// Part of the message of every call whose COMMIT may or may not have taken effect.
pub const COMMIT_OUTCOME_UNKNOWN: &str = "commit outcome unknown";

/// Whether PostgreSQL rejected the statement because another transaction got in its way.
pub(crate) fn is_conflict(error: &postgres::Error) -> bool {
    error.code().is_some_and(|code| {
        [
            SqlState::LOCK_NOT_AVAILABLE,
            SqlState::T_R_SERIALIZATION_FAILURE,
            SqlState::T_R_DEADLOCK_DETECTED,
        ]
        .contains(code)
    })
}

/// Whether the connection itself failed rather than the statement: it closed or broke, the
/// server is shutting down or starting, or it is no longer the primary (a failover made it
/// a read-only standby). Such a connection is never used again.
pub(crate) fn is_connection_lost(error: &postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    match error.code() {
        Some(code) => {
            code.code().starts_with("08")
                || [
                    SqlState::ADMIN_SHUTDOWN,
                    SqlState::CRASH_SHUTDOWN,
                    SqlState::CANNOT_CONNECT_NOW,
                    SqlState::READ_ONLY_SQL_TRANSACTION,
                ]
                .contains(code)
        }
        // No SQLSTATE: the socket failed (reset, refused, timed out).
        None => std::error::Error::source(error).is_some_and(|s| s.is::<std::io::Error>()),
    }
}

/// The attrflow error for `error`, met by the store at `location` while `doing` something
/// before the call's COMMIT was sent.
pub(crate) fn pg_error(location: &str, doing: &str, error: postgres::Error) -> Error {
    if is_conflict(&error) {
        return Error::LockConflict(format!(
            "store {location}: {doing} conflicted with a concurrent transaction ({}); retry",
            describe(&error)
        ));
    }
    if is_connection_lost(&error) {
        return Error::LockConflict(format!(
            "store {location}: the connection to the server was lost while {doing} ({}); \
             nothing of this call was committed; retry",
            describe(&error)
        ));
    }
    match error.code() {
        Some(code) if *code == SqlState::DISK_FULL => Error::storage(format!(
            "store {location}: disk full while {doing}; nothing was written"
        )),
        _ => Error::storage(format!("store {location}: {doing}: {}", describe(&error))),
    }
}

/// The attrflow error for a failed COMMIT (or the batch of writes that ends in it). A
/// refused COMMIT rolled back; a connection lost without a word from the server leaves
/// the outcome unknown, and the message says so.
pub(crate) fn commit_error(location: &str, error: postgres::Error) -> Error {
    // An error the server sent (even the notice that it is ending the session) means the
    // transaction did not commit; only silence (a closed or broken socket) leaves it open.
    if error.as_db_error().is_none() && is_connection_lost(&error) {
        return Error::storage(format!(
            "store {location}: the connection to the server was lost while committing ({}): \
             {COMMIT_OUTCOME_UNKNOWN}, the call may or may not have taken effect; repeat it \
             with the same idempotency key to apply it at most once",
            describe(&error)
        ));
    }
    pg_error(location, "committing", error)
}

/// The error of a connection that could not be opened. At open it is a storage error; for a
/// call, a server that cannot be reached now (restarting, failing over) is a retryable
/// conflict, since nothing of the call ran.
pub(crate) fn connect_error(location: &str, for_a_call: bool, error: postgres::Error) -> Error {
    if error.to_string().contains("TLS") {
        return Error::storage(format!(
            "store {location}: connecting over TLS: {}; check sslmode and sslrootcert",
            describe(&error)
        ));
    }
    if for_a_call && is_connection_lost(&error) {
        return Error::LockConflict(format!(
            "store {location}: could not reach the server ({}); nothing of this call ran; retry",
            describe(&error)
        ));
    }
    Error::storage(format!(
        "store {location}: connecting: {}",
        describe(&error)
    ))
}

/// Maps the errors of one connection, remembering whether the connection itself failed so
/// that the pool drops it.
#[derive(Clone, Copy)]
pub(crate) struct Errors<'a> {
    pub location: &'a str,
    pub broken: &'a Cell<bool>,
}

impl<'a> Errors<'a> {
    fn note(&self, error: &postgres::Error) {
        if is_connection_lost(error) {
            self.broken.set(true);
        }
    }

    /// Maps an error met while `doing` something before the COMMIT.
    pub fn doing(self, doing: &'a str) -> impl Fn(postgres::Error) -> Error + 'a {
        move |e| {
            self.note(&e);
            pg_error(self.location, doing, e)
        }
    }

    /// Maps an error of the COMMIT.
    pub fn commit(self) -> impl Fn(postgres::Error) -> Error + 'a {
        move |e| {
            self.note(&e);
            commit_error(self.location, e)
        }
    }
}

/// The server's own message and SQLSTATE when there is one, else the driver's message
/// with its causes (an I/O error, a refused certificate).
fn describe(error: &postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{} [SQLSTATE {}]", db.message(), db.code().code());
    }
    let mut message = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !message.contains(&text) {
            message = format!("{message}: {text}");
        }
        cause = inner.source();
    }
    message
}
