//! Settings of a PostgreSQL store, read from the query of its `postgresql://` URL.
//!
//! attrflow's own parameters are taken out of the query; everything else (`host`, `port`,
//! `user`, `password`, `dbname`, `connect_timeout`, `keepalives_idle`, `application_name`,
//! `options`, `target_session_attrs`, …) is handed to the driver unchanged. `sslmode` and
//! `sslrootcert` are read by attrflow too, which sets up TLS itself (see [`SslMode`]); the
//! driver only learns whether to ask for TLS.

use std::path::PathBuf;
use std::time::Duration;

pub use super::tls::SslMode;
use crate::error::{Error, Result};
use crate::store::group_commit::GroupLimits;
use crate::store::url::{group_parameter, millis, query_pairs, whole_number};

/// The parameters attrflow itself reads from a `postgresql://` URL.
pub const KNOWN_PARAMETERS: [&str; 13] = [
    "schema",
    "pool_max_size",
    "pool_timeout_ms",
    "lock_timeout_ms",
    "idle_in_transaction_timeout_ms",
    "sslmode",
    "sslrootcert",
    "group_commit",
    "group_lanes",
    "group_max_calls",
    "group_max_bytes",
    "commit_delay_us",
    "notify",
];

/// Group-commit lanes a store opens unless its URL says (`group_lanes`). Two let one
/// lane's group run its calls while the other's COMMIT is on its way; since a group costs
/// about two round trips however many calls it holds, more lanes only split the calls into
/// smaller groups, each with a COMMIT of its own: 16 threads appending to 16 archives on a
/// local server made 8,450–8,500 appends a second with two lanes against 7,160–7,410 with
/// four (bench/notes/7-postgresql.md), and no fewer with 4 or 64 threads.
pub const DEFAULT_GROUP_LANES: usize = 2;

/// The longest schema name PostgreSQL keeps without truncating it.
const MAX_SCHEMA_BYTES: usize = 63;

/// How an attrflow store uses its PostgreSQL database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// The schema holding attrflow's tables (`schema=NAME`, default `public`); created when
    /// missing. Lower-case letters, digits and `_`, starting with a letter or `_`.
    pub schema: String,
    /// Connections the store opens at most (`pool_max_size=N`, default 8). A call that
    /// finds every connection busy waits for one for up to `pool_timeout`.
    pub pool_max_size: usize,
    /// How long a call waits for a free connection (`pool_timeout_ms=N`, default 5 s)
    /// before failing with a retryable [`Error::LockConflict`].
    pub pool_timeout: Duration,
    /// The server's `lock_timeout` (`lock_timeout_ms=N`, default 5 s): the longest any
    /// statement waits on a row another transaction holds. The RPC locks themselves never
    /// wait; this bounds the rarer waits on value rows and on flow creation.
    pub lock_timeout: Duration,
    /// The server's `idle_in_transaction_session_timeout`
    /// (`idle_in_transaction_timeout_ms=N`, default 60 s): a client that stops talking in
    /// the middle of an RPC (hung, or cut off without the connection closing) has its
    /// transaction aborted and its locks released after this long. It also bounds how
    /// long one handler may run.
    pub idle_in_transaction_timeout: Duration,
    /// How connections are protected (`sslmode=disable|prefer|require|verify-ca|verify-full`,
    /// default `prefer`, as in libpq).
    pub ssl_mode: SslMode,
    /// The PEM file of the CAs trusted to sign the server's certificate
    /// (`sslrootcert=FILE`); needed by `verify-ca` and `verify-full`.
    pub ssl_root_cert: Option<PathBuf>,
    /// Whether concurrent writing RPCs of this process share one transaction and one
    /// COMMIT (`group_commit=on|off`, default on; see [`crate::store::group_commit`]). Off,
    /// every RPC is a transaction of its own.
    pub group_commit: bool,
    /// Groups of one process open at once, each on a connection of its own
    /// (`group_lanes=N`; `None`: [`DEFAULT_GROUP_LANES`]; never more than `pool_max_size`):
    /// the RPCs of one flow always share a lane, those of different flows spread over the
    /// lanes.
    pub group_lanes: Option<usize>,
    /// Bounds of a commit group (`group_max_calls=N`, `group_max_bytes=N`,
    /// `commit_delay_us=N`, as on SQLite).
    pub group: GroupLimits,
    /// Whether every writing transaction sends `NOTIFY` on the store's channel before its
    /// `COMMIT` (once per group with group commit), so that a waiting tail of another
    /// process wakes at once (`notify=on|off`, default off; see
    /// [`crate::store::Store::watch_changes`]). Off, such a tail notices a commit by
    /// reading again after pauses of up to 50 ms.
    pub notify: bool,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            schema: "public".to_owned(),
            pool_max_size: 8,
            pool_timeout: Duration::from_secs(5),
            lock_timeout: Duration::from_secs(5),
            idle_in_transaction_timeout: Duration::from_secs(60),
            ssl_mode: SslMode::default(),
            ssl_root_cert: None,
            group_commit: true,
            group_lanes: None,
            group: GroupLimits::default(),
            notify: false,
        }
    }
}

impl PostgresOptions {
    /// Splits a URL query into attrflow's options and the pairs left for the driver.
    pub(crate) fn from_query(url: &str, query: &str) -> Result<(Self, Vec<String>)> {
        let mut options = PostgresOptions::default();
        let mut rest = Vec::new();
        for (key, value, pair) in query_pairs(url, query)? {
            let pair = pair.to_owned();
            if group_parameter(url, key, value, &mut options.group)? {
                continue;
            }
            match key {
                "schema" => options.schema = validate_schema(url, value)?,
                "pool_max_size" => options.pool_max_size = at_least_one(url, key, value)?,
                "pool_timeout_ms" => options.pool_timeout = millis(url, key, value)?,
                "lock_timeout_ms" => options.lock_timeout = millis(url, key, value)?,
                "idle_in_transaction_timeout_ms" => {
                    options.idle_in_transaction_timeout = millis(url, key, value)?
                }
                "sslmode" => {
                    options.ssl_mode = SslMode::parse(url, value)?;
                    rest.push(pair);
                }
                "sslrootcert" => {
                    if value.is_empty() {
                        return Err(Error::invalid_input(format!(
                            "store URL {url:?}: sslrootcert names no file"
                        )));
                    }
                    options.ssl_root_cert = Some(PathBuf::from(percent_decoded(value)));
                    rest.push(pair);
                }
                "group_commit" => options.group_commit = on_or_off(url, key, value)?,
                "notify" => options.notify = on_or_off(url, key, value)?,
                "group_lanes" => options.group_lanes = Some(at_least_one(url, key, value)?),
                _ => rest.push(pair),
            }
        }
        Ok((options, rest))
    }

    /// The group-commit lanes a store opens: see [`PostgresOptions::group_lanes`]. Lanes
    /// hold a connection each while a group is open, and reads need connections too.
    pub(crate) fn lanes(&self) -> usize {
        let pool = self.pool_max_size.max(1);
        self.group_lanes
            .unwrap_or(DEFAULT_GROUP_LANES)
            .clamp(1, pool)
    }

    /// The statements that set up every new connection.
    ///
    /// The session plans its prepared statements once, generically (`plan_cache_mode`,
    /// PostgreSQL 12 and later): each reads or writes a few rows by their primary key, which
    /// a plan made for particular values does no better, and the server's default (`auto`)
    /// decides per connection from the first five calls' values whether to plan every
    /// later call again. A process whose connections first served 16 threads on one
    /// flow kept planning each call then, and appended on 16 flows 25 % slower than a
    /// process that started on 16 flows (bench/notes/7-postgresql.md).
    pub(crate) fn session_setup(&self) -> String {
        format!(
            "SET search_path TO \"{schema}\";
             SET standard_conforming_strings = on;
             SET plan_cache_mode = force_generic_plan;
             SET lock_timeout = {lock};
             SET idle_in_transaction_session_timeout = {idle};
             SET tcp_keepalives_idle = 30;
             SET tcp_keepalives_interval = 10;
             SET tcp_keepalives_count = 3;",
            schema = self.schema,
            lock = self.lock_timeout.as_millis(),
            idle = self.idle_in_transaction_timeout.as_millis(),
        )
    }
}

/// A URL query value with its `%XX` escapes decoded (a path may hold any character).
fn percent_decoded(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn validate_schema(url: &str, value: &str) -> Result<String> {
    let valid = !value.is_empty()
        && value.len() <= MAX_SCHEMA_BYTES
        && value.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid {
        Ok(value.to_owned())
    } else {
        Err(Error::invalid_input(format!(
            "store URL {url:?}: schema {value:?} must be 1 to {MAX_SCHEMA_BYTES} lower-case \
             letters, digits or '_', starting with a letter or '_'"
        )))
    }
}

fn on_or_off(url: &str, key: &str, value: &str) -> Result<bool> {
    match value {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(Error::invalid_input(format!(
            "store URL {url:?}: {key} must be \"on\" or \"off\", not {value:?}"
        ))),
    }
}

fn at_least_one(url: &str, key: &str, value: &str) -> Result<usize> {
    whole_number(url, key, value, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attrflow_parameters_are_taken_and_the_rest_is_left_for_the_driver() {
        let (options, rest) = PostgresOptions::from_query(
            "u",
            "schema=tenant_1&pool_max_size=3&pool_timeout_ms=250&lock_timeout_ms=100\
             &idle_in_transaction_timeout_ms=9000&connect_timeout=4&sslmode=verify-full\
             &sslrootcert=/etc/ca%20file.pem",
        )
        .unwrap();
        assert_eq!(options.schema, "tenant_1");
        assert_eq!(options.pool_max_size, 3);
        assert_eq!(options.pool_timeout, Duration::from_millis(250));
        assert_eq!(options.lock_timeout, Duration::from_millis(100));
        assert_eq!(options.idle_in_transaction_timeout, Duration::from_secs(9));
        assert_eq!(options.ssl_mode, SslMode::VerifyFull);
        assert_eq!(
            options.ssl_root_cert,
            Some(PathBuf::from("/etc/ca file.pem"))
        );
        assert_eq!(
            rest,
            [
                "connect_timeout=4",
                "sslmode=verify-full",
                "sslrootcert=/etc/ca%20file.pem"
            ]
        );
        assert_eq!(
            PostgresOptions::from_query("u", "").unwrap().0,
            PostgresOptions::default()
        );
        let (grouped, rest) = PostgresOptions::from_query(
            "u",
            "group_commit=off&group_lanes=2&group_max_calls=4&group_max_bytes=4096&commit_delay_us=250",
        )
        .unwrap();
        assert!(rest.is_empty());
        assert!(!grouped.group_commit);
        assert_eq!(grouped.lanes(), 2);
        let lanes = |query: &str| PostgresOptions::from_query("u", query).unwrap().0.lanes();
        assert_eq!(lanes(""), DEFAULT_GROUP_LANES);
        assert_eq!(lanes("pool_max_size=16"), DEFAULT_GROUP_LANES);
        assert_eq!(lanes("pool_max_size=1"), 1);
        assert_eq!(
            lanes("pool_max_size=2&group_lanes=5"),
            2,
            "no more than connections"
        );
        assert_eq!(
            grouped.group,
            GroupLimits {
                max_members: 4,
                max_bytes: 4096,
                commit_delay: Duration::from_micros(250),
            }
        );
    }

    #[test]
    fn bad_parameters_say_what_is_wrong() {
        let message = |query: &str| {
            PostgresOptions::from_query("u", query)
                .unwrap_err()
                .to_string()
        };
        assert!(message("schema=Bad-Name").contains(r#"schema "Bad-Name""#));
        assert!(message("schema=").contains("schema"));
        assert!(message("pool_max_size=0").contains("at least 1"));
        assert!(message("pool_max_size=many").contains("pool_max_size must be a whole number"));
        assert!(message("lock_timeout_ms=-1").contains("lock_timeout_ms"));
        assert!(message("sslmode=allow").contains(r#"sslmode="allow" is not one of"#));
        assert!(message("sslrootcert=").contains("sslrootcert names no file"));
        assert!(message("group_commit=yes").contains(r#"group_commit must be "on" or "off""#));
        assert!(message("notify=yes").contains(r#"notify must be "on" or "off""#));
        assert!(message("group_max_calls=0")
            .contains("group_max_calls must be a whole number of at least 1"));
        assert!(message("commit_delay_us=x").contains("commit_delay_us must be a whole number"));
    }
}
