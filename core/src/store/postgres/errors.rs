//! PostgreSQL errors as attrflow errors. Lock waits that ran out (`55P03`), serialization
//! failures (`40001`) and deadlocks (`40P01`) are retryable lock conflicts: PG-wire engines
//! such as CockroachDB and YugabyteDB report their own transaction conflicts with the same
//! codes.

use postgres::error::SqlState;

use crate::error::Error;

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

/// The attrflow error for `error`, met by the store at `location` while `doing` something.
pub(crate) fn pg_error(location: &str, doing: &str, error: postgres::Error) -> Error {
    if is_conflict(&error) {
        return Error::LockConflict(format!(
            "store {location}: {doing} conflicted with a concurrent transaction ({}); retry",
            describe(&error)
        ));
    }
    match error.code() {
        Some(code) if *code == SqlState::DISK_FULL => Error::storage(format!(
            "store {location}: disk full while {doing}; nothing was written"
        )),
        _ if error.is_closed() => Error::storage(format!(
            "store {location}: the connection closed while {doing}; nothing of this call was \
             committed unless it returned"
        )),
        _ => Error::storage(format!("store {location}: {doing}: {}", describe(&error))),
    }
}

/// The server's own message and SQLSTATE when there is one, else the driver's message.
fn describe(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{} [SQLSTATE {}]", db.message(), db.code().code()),
        None => error.to_string(),
    }
}
