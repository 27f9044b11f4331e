//! Commit notices between processes sharing a PostgreSQL store (`notify=on`).
//!
//! Every writing transaction of the store ends in `NOTIFY` on one channel per schema before
//! its `COMMIT`: with group commit, once per group, not once per RPC. PostgreSQL delivers a
//! notification only when its transaction commits, so a listener that sees one knows a
//! commit happened. A [`PostgresChangeWatch`] holds a connection of its own that `LISTEN`s
//! on the channel and reports a change when a notification arrived since its last check: a
//! waiting tail ([`crate::chunked_log::tail`]) reads again only then.
//!
//! The price is on the writing side: PostgreSQL takes a database-wide lock from a
//! notifying commit until the end of its WAL flush, so notifying commits are serialized
//! (see BENCHMARKS.md for what it costs).

use std::sync::Arc;
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::Client;

use super::errors::pg_error;
use super::pool::Pool;
use crate::error::Result;
use crate::store::ChangeWatch;

/// The channel the writers of the store in `schema` notify: `attrflow_` and the schema name
/// (checked to be lower-case letters, digits and `_`), quoted. PostgreSQL truncates a
/// channel name to 63 bytes: two long schema names sharing their first 54 bytes share a
/// channel, which only costs their tails a needless read now and then.
pub(crate) fn channel(schema: &str) -> String {
    format!("\"attrflow_{}\"", schema.replace('"', "\"\""))
}

/// The `NOTIFY` a writing transaction of the store in `schema` sends before its `COMMIT`.
pub(crate) fn notify_sql(schema: &str) -> String {
    format!("NOTIFY {}", channel(schema))
}

/// What ends a writing transaction: `NOTIFY` on the channel then `COMMIT`, or `COMMIT`
/// alone when the store does not notify.
pub(crate) fn commit_sql(schema: &str, notify: bool) -> String {
    if notify {
        format!("{}; COMMIT", notify_sql(schema))
    } else {
        "COMMIT".to_owned()
    }
}

/// How long one check waits on the socket for a notification.
const CHECK_WAIT: Duration = Duration::from_millis(1);

/// A connection of its own listening on the store's channel.
pub(crate) struct PostgresChangeWatch {
    /// `None` after the connection was lost; opened again at the next check.
    client: Option<Client>,
    /// The `LISTEN` statement.
    listen: String,
    /// Where new connections come from (set up as the store's are).
    pool: Arc<Pool>,
    location: String,
}

impl PostgresChangeWatch {
    /// Opens a connection and starts listening.
    pub(crate) fn open(pool: Arc<Pool>, schema: &str, location: &str) -> Result<Self> {
        let mut watch = PostgresChangeWatch {
            client: None,
            listen: format!("LISTEN {}", channel(schema)),
            pool,
            location: location.to_owned(),
        };
        watch.client = Some(watch.listening()?);
        Ok(watch)
    }

    fn listening(&self) -> Result<Client> {
        let mut client = self.pool.connect_bare()?;
        client
            .batch_execute(&self.listen)
            .map_err(|e| pg_error(&self.location, "listening for commits", e))?;
        Ok(client)
    }
}

impl ChangeWatch for PostgresChangeWatch {
    fn changed(&mut self) -> Result<bool> {
        let Some(client) = self.client.as_mut() else {
            // The connection was lost: listen again, and report a change, since commits
            // made meanwhile were not heard.
            self.client = Some(self.listening()?);
            return Ok(true);
        };
        // Takes what arrived without waiting; the tail pauses between checks.
        let mut heard = false;
        let mut lost = false;
        {
            // The driver's runtime learns that the socket has data only while it waits on
            // it: a check that never waits (`Notifications::iter`) would not hear a
            // notification that arrived since the last one.
            let mut notifications = client.notifications();
            let first = notifications.timeout_iter(CHECK_WAIT).next();
            match first {
                Ok(Some(_)) => {
                    heard = true;
                    // Drops the ones already received: one change is reported for all.
                    while !notifications.is_empty() {
                        if notifications.iter().next().is_err() {
                            lost = true;
                            break;
                        }
                    }
                }
                Ok(None) => {}
                Err(_) => lost = true,
            }
        }
        if lost || client.is_closed() {
            self.client = None;
            return Ok(true);
        }
        Ok(heard)
    }
}
