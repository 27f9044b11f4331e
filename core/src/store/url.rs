//! Store URLs: how every front end names a store.
//!
//! - a plain path, `data/attrflow.db`: an SQLite file;
//! - `sqlite:data/attrflow.db`, `sqlite://data/attrflow.db`, `sqlite:///abs/path.db`, with
//!   optional query parameters `synchronous=full|normal`, `busy_timeout_ms=N`, and the
//!   group-commit bounds `group_max_calls=N`, `group_max_bytes=N`, `commit_delay_us=N`
//!   (see [`crate::store::group_commit`]);
//! - `postgresql://user:password@host:port/dbname?...` (or `postgres://`): a PostgreSQL
//!   database, with attrflow's parameters of [`PostgresOptions`] and the driver's own
//!   (`connect_timeout`, `sslmode`, `sslrootcert`, `application_name`, …).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "postgres")]
use super::{ConnectionUrl, PostgresOptions, PostgresStore};
use super::{SqliteOptions, SqliteStore, Store, Synchronous};
use crate::error::{Error, Result};

/// A parsed store URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// An SQLite file and its options.
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// Durability and waiting settings.
        options: SqliteOptions,
    },
    /// A PostgreSQL database (one schema in it) and attrflow's options for it.
    #[cfg(feature = "postgres")]
    Postgres {
        /// The URL the driver connects with (attrflow's own parameters taken out).
        url: ConnectionUrl,
        /// Schema, pool and timeout settings.
        options: PostgresOptions,
    },
}

impl StoreUrl {
    /// Parses a path or URL.
    ///
    /// ```
    /// use attrflow::store::{StoreUrl, Synchronous};
    /// let url = StoreUrl::parse("sqlite:data/a.db?synchronous=normal").unwrap();
    /// let StoreUrl::Sqlite { path, options } = url else { panic!("an SQLite URL") };
    /// assert_eq!(path.to_str(), Some("data/a.db"));
    /// assert_eq!(options.synchronous, Synchronous::Normal);
    /// let pg = StoreUrl::parse("postgresql://app@db.internal/archive?pool_max_size=4").unwrap();
    /// let StoreUrl::Postgres { options, .. } = pg else { panic!("a PostgreSQL URL") };
    /// assert_eq!(options.pool_max_size, 4);
    /// assert!(StoreUrl::parse("mysql://db").is_err());
    /// ```
    pub fn parse(url: &str) -> Result<Self> {
        if url.trim().is_empty() {
            return Err(Error::invalid_input("store URL must not be empty"));
        }
        if let Some(at) = url.find('\0') {
            return Err(Error::invalid_input(format!(
                "store URL {:?} holds a NUL character (at byte {at}), which no file name or URL may",
                redact(url)
            )));
        }
        let (scheme, rest) = match url.split_once(':') {
            Some((scheme, rest)) if is_scheme(scheme) => (scheme.to_ascii_lowercase(), rest),
            _ if url.contains('?') => {
                return Err(Error::invalid_input(format!(
                    "store path {url:?} holds '?': options go in an SQLite URL \
                     (sqlite:{url}), and a file name with '?' is refused"
                )))
            }
            _ => return Ok(Self::sqlite(PathBuf::from(url), SqliteOptions::default())),
        };
        match scheme.as_str() {
            "sqlite" => {
                let rest = rest.strip_prefix("//").unwrap_or(rest);
                let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
                if path.is_empty() {
                    return Err(Error::invalid_input(format!(
                        "store URL {url:?} names no database file"
                    )));
                }
                Ok(Self::sqlite(
                    PathBuf::from(path),
                    sqlite_options(url, query)?,
                ))
            }
            #[cfg(feature = "postgres")]
            "postgres" | "postgresql" => postgres_url(url),
            #[cfg(not(feature = "postgres"))]
            "postgres" | "postgresql" => Err(Error::invalid_input(format!(
                "store URL {:?}: this build of attrflow has no PostgreSQL backend (feature \"postgres\")",
                redact(url)
            ))),
            other => Err(Error::invalid_input(format!(
                "store URL {:?} has unknown scheme {other:?}; use a file path, sqlite:PATH or postgresql://HOST/DB",
                redact(url)
            ))),
        }
    }

    fn sqlite(path: PathBuf, options: SqliteOptions) -> Self {
        StoreUrl::Sqlite { path, options }
    }

    /// Overrides the durability setting of an SQLite store. A PostgreSQL store commits as
    /// its server is configured (`synchronous_commit`), so this leaves it unchanged.
    pub fn with_synchronous(mut self, synchronous: Synchronous) -> Self {
        match &mut self {
            StoreUrl::Sqlite { options, .. } => options.synchronous = synchronous,
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres { .. } => {}
        }
        self
    }

    /// Opens the store.
    pub fn open(&self) -> Result<Arc<dyn Store>> {
        match self {
            StoreUrl::Sqlite { path, options } => {
                Ok(Arc::new(SqliteStore::open_with(path, options.clone())?))
            }
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres { url, options } => {
                Ok(Arc::new(PostgresStore::open_with(url, options.clone())?))
            }
        }
    }
}

/// Parses and opens a store URL in one step.
pub fn open_store(url: &str) -> Result<Arc<dyn Store>> {
    StoreUrl::parse(url)?.open()
}

/// A scheme has two or more characters, so `C:\data.db` stays a Windows path.
fn is_scheme(text: &str) -> bool {
    text.len() > 1
        && text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The longest timeout a store URL may set (`busy_timeout_ms`, PostgreSQL's `*_timeout_ms`):
/// an hour. Past that a caller would wait as if for ever, and a deadline so far off could
/// not be told apart from none.
pub const MAX_URL_TIMEOUT: Duration = Duration::from_secs(3600);

/// The longest commit delay a store URL may ask for (`commit_delay_us`): a second.
/// PostgreSQL's own `commit_delay` stops at a tenth of that; a lone caller waits the whole
/// delay on each write.
pub const MAX_COMMIT_DELAY: Duration = Duration::from_secs(1);

/// The parameters of a query string as `(key, value, the pair as written)`, each named once:
/// a repeated one is refused rather than the last one silently winning.
pub(crate) fn query_pairs<'q>(
    url: &str,
    query: &'q str,
) -> Result<Vec<(&'q str, &'q str, &'q str)>> {
    let mut seen = std::collections::BTreeSet::new();
    let mut pairs = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if !seen.insert(key) {
            return Err(Error::invalid_input(format!(
                "store URL {url:?} gives {key} twice"
            )));
        }
        pairs.push((key, value, pair));
    }
    Ok(pairs)
}

/// Applies `key=value` to `group` if it is one of the group-commit bounds both backends
/// take (`group_max_calls`, `group_max_bytes`, `commit_delay_us`); whether it was.
pub(crate) fn group_parameter(
    url: &str,
    key: &str,
    value: &str,
    group: &mut super::GroupLimits,
) -> Result<bool> {
    match key {
        "group_max_calls" => group.max_members = whole_number(url, key, value, 1)?,
        "group_max_bytes" => group.max_bytes = whole_number(url, key, value, 1)?,
        "commit_delay_us" => {
            let max = MAX_COMMIT_DELAY.as_micros() as usize;
            let micros = whole_number(url, key, value, 0)?;
            if micros > max {
                return Err(Error::invalid_input(format!(
                    "store URL {url:?}: commit_delay_us must be at most {max} (a second), not {value:?}"
                )));
            }
            group.commit_delay = Duration::from_micros(micros as u64);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// A timeout parameter in milliseconds, at most [`MAX_URL_TIMEOUT`].
pub(crate) fn millis(url: &str, key: &str, value: &str) -> Result<Duration> {
    let max = MAX_URL_TIMEOUT.as_millis() as u64;
    value
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms <= max)
        .map(Duration::from_millis)
        .ok_or_else(|| {
            Error::invalid_input(format!(
                "store URL {url:?}: {key} must be a whole number of milliseconds up to {max} (an hour), not {value:?}"
            ))
        })
}

fn sqlite_options(url: &str, query: &str) -> Result<SqliteOptions> {
    let mut options = SqliteOptions::default();
    for (key, value, _) in query_pairs(url, query)? {
        if group_parameter(url, key, value, &mut options.group)? {
            continue;
        }
        match key {
            "synchronous" => options.synchronous = Synchronous::parse(value)?,
            "busy_timeout_ms" => options.busy_timeout = millis(url, key, value)?,
            _ => {
                return Err(Error::invalid_input(format!(
                    "store URL {url:?} has unknown parameter {key:?}; known: synchronous, \
                     busy_timeout_ms, group_max_calls, group_max_bytes, commit_delay_us"
                )))
            }
        }
    }
    Ok(options)
}

/// A whole-number URL parameter of at least `min`.
pub(crate) fn whole_number(url: &str, key: &str, value: &str, min: usize) -> Result<usize> {
    value
        .parse::<usize>()
        .ok()
        .filter(|n| *n >= min)
        .ok_or_else(|| {
            Error::invalid_input(format!(
                "store URL {url:?}: {key} must be a whole number of at least {min}, not {value:?}"
            ))
        })
}

/// Takes attrflow's parameters out of a `postgresql://` URL.
#[cfg(feature = "postgres")]
fn postgres_url(url: &str) -> Result<StoreUrl> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let redacted = redact(url);
    let (options, rest) = PostgresOptions::from_query(&redacted, query)?;
    let driver_url = if rest.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    Ok(StoreUrl::Postgres {
        url: ConnectionUrl::new(driver_url),
        options,
    })
}

/// The URL without a password, for messages.
pub(crate) fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(start), Some(at)) if at > start => {
            let authority = &url[start + 3..at];
            match authority.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..start + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(url: &str) -> (PathBuf, SqliteOptions) {
        match StoreUrl::parse(url).unwrap() {
            StoreUrl::Sqlite { path, options } => (path, options),
            other => panic!("{url} is not an SQLite URL: {other:?}"),
        }
    }

    #[test]
    fn paths_and_sqlite_urls_name_a_file() {
        assert_eq!(
            sqlite("data/attrflow.db").0,
            PathBuf::from("data/attrflow.db")
        );
        assert_eq!(sqlite("sqlite:data/a.db").0, PathBuf::from("data/a.db"));
        assert_eq!(sqlite("sqlite://data/a.db").0, PathBuf::from("data/a.db"));
        assert_eq!(sqlite("sqlite:///var/a.db").0, PathBuf::from("/var/a.db"));
        assert_eq!(sqlite("C:\\data.db").0, PathBuf::from("C:\\data.db"));
        let (_, options) = sqlite("sqlite:a.db?synchronous=NORMAL&busy_timeout_ms=250");
        assert_eq!(options.synchronous, Synchronous::Normal);
        assert_eq!(options.busy_timeout, Duration::from_millis(250));
        assert_eq!(sqlite("a.db").1.synchronous, Synchronous::Full);
    }

    #[test]
    fn group_commit_bounds_come_from_the_url() {
        let (_, options) =
            sqlite("sqlite:a.db?group_max_calls=1&group_max_bytes=4096&commit_delay_us=250");
        assert_eq!(options.group.max_members, 1);
        assert_eq!(options.group.max_bytes, 4096);
        assert_eq!(options.group.commit_delay, Duration::from_micros(250));
        assert_eq!(sqlite("a.db").1.group, crate::store::GroupLimits::default());
        let refused = StoreUrl::parse("sqlite:a.db?group_max_calls=0").unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("group_max_calls must be a whole number of at least 1, not \"0\""),
            "{refused}"
        );
    }

    #[test]
    fn bounds_repeats_nul_and_misplaced_options_are_refused() {
        let message = |url: &str| StoreUrl::parse(url).unwrap_err().to_string();
        assert!(message("sqlite:a.db?commit_delay_us=1000001")
            .contains("commit_delay_us must be at most 1000000 (a second)"));
        assert!(message("sqlite:a.db?busy_timeout_ms=18446744073709551615")
            .contains("busy_timeout_ms must be a whole number of milliseconds up to 3600000"));
        assert!(message("sqlite:a.db?synchronous=normal&synchronous=full")
            .contains("gives synchronous twice"));
        let nul = message("a\0b.db");
        assert!(
            nul.contains("NUL character (at byte 1)") && !nul.contains('\0'),
            "{nul:?}"
        );
        assert!(message("a.db?synchronous=normal")
            .contains("options go in an SQLite URL (sqlite:a.db?synchronous=normal)"));
        let (_, options) = sqlite("sqlite:a.db?commit_delay_us=1000000&busy_timeout_ms=3600000");
        assert_eq!(options.group.commit_delay, MAX_COMMIT_DELAY);
        assert_eq!(options.busy_timeout, MAX_URL_TIMEOUT);
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        let message = |url: &str| StoreUrl::parse(url).unwrap_err().to_string();
        assert!(message("").contains("must not be empty"));
        assert!(message("sqlite:").contains("names no database file"));
        assert!(message("sqlite:a.db?synchronous=off").contains(r#"not "off""#));
        assert!(message("sqlite:a.db?busy_timeout_ms=x").contains("busy_timeout_ms"));
        assert!(message("sqlite:a.db?cache=big").contains(r#"unknown parameter "cache""#));
        assert!(message("mysql://h/db").contains(r#"unknown scheme "mysql""#));
        let pg = message("postgresql://user:secret@host/db?sslmode=allow");
        assert!(
            pg.contains("user:***@host") && !pg.contains("secret"),
            "{pg}"
        );
        #[cfg(feature = "postgres")]
        assert!(message("postgresql://h/db?schema=A").contains(r#"schema "A""#));
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn postgres_urls_keep_the_driver_parameters_and_hide_the_password() {
        let url =
            "postgres://app:secret@db:5433/archive?schema=tenant&connect_timeout=3&pool_max_size=2";
        let StoreUrl::Postgres { url, options } = StoreUrl::parse(url).unwrap() else {
            panic!("a PostgreSQL URL");
        };
        assert_eq!(options.schema, "tenant");
        assert_eq!(options.pool_max_size, 2);
        assert_eq!(
            url,
            ConnectionUrl::new("postgres://app:secret@db:5433/archive?connect_timeout=3")
        );
        let shown = format!("{url:?}");
        assert!(
            shown.contains("app:***@db") && !shown.contains("secret"),
            "{shown}"
        );
    }
}
