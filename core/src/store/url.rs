//! Store URLs: how every front end names a store.
//!
//! - a plain path, `data/attrflow.db`: an SQLite file;
//! - `sqlite:data/attrflow.db`, `sqlite://data/attrflow.db`, `sqlite:///abs/path.db`, with
//!   optional query parameters `synchronous=full|normal` and `busy_timeout_ms=N`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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
}

impl StoreUrl {
    /// Parses a path or URL.
    ///
    /// ```
    /// use attrflow::store::{StoreUrl, Synchronous};
    /// let url = StoreUrl::parse("sqlite:data/a.db?synchronous=normal").unwrap();
    /// let StoreUrl::Sqlite { path, options } = url;
    /// assert_eq!(path.to_str(), Some("data/a.db"));
    /// assert_eq!(options.synchronous, Synchronous::Normal);
    /// assert!(StoreUrl::parse("mysql://db").is_err());
    /// ```
    pub fn parse(url: &str) -> Result<Self> {
        if url.trim().is_empty() {
            return Err(Error::invalid_input("store URL must not be empty"));
        }
        let (scheme, rest) = match url.split_once(':') {
            Some((scheme, rest)) if is_scheme(scheme) => (scheme.to_ascii_lowercase(), rest),
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
            "postgres" | "postgresql" => Err(Error::invalid_input(format!(
                "store URL {:?}: this build of attrflow has no PostgreSQL backend yet",
                redact(url)
            ))),
            other => Err(Error::invalid_input(format!(
                "store URL {:?} has unknown scheme {other:?}; use a file path or sqlite:PATH",
                redact(url)
            ))),
        }
    }

    fn sqlite(path: PathBuf, options: SqliteOptions) -> Self {
        StoreUrl::Sqlite { path, options }
    }

    /// Overrides the durability setting.
    pub fn with_synchronous(mut self, synchronous: Synchronous) -> Self {
        let StoreUrl::Sqlite { options, .. } = &mut self;
        options.synchronous = synchronous;
        self
    }

    /// Opens the store.
    pub fn open(&self) -> Result<Arc<dyn Store>> {
        match self {
            StoreUrl::Sqlite { path, options } => {
                Ok(Arc::new(SqliteStore::open_with(path, options.clone())?))
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

fn sqlite_options(url: &str, query: &str) -> Result<SqliteOptions> {
    let mut options = SqliteOptions::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "synchronous" => options.synchronous = Synchronous::parse(value)?,
            "busy_timeout_ms" => {
                let ms: u64 = value.parse().map_err(|_| {
                    Error::invalid_input(format!(
                        "store URL {url:?}: busy_timeout_ms must be a whole number of milliseconds, not {value:?}"
                    ))
                })?;
                options.busy_timeout = Duration::from_millis(ms);
            }
            _ => {
                return Err(Error::invalid_input(format!(
                    "store URL {url:?} has unknown parameter {key:?}; known: synchronous, busy_timeout_ms"
                )))
            }
        }
    }
    Ok(options)
}

/// The URL without a password, for messages.
fn redact(url: &str) -> String {
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
        let StoreUrl::Sqlite { path, options } = StoreUrl::parse(url).unwrap();
        (path, options)
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
    fn bad_urls_say_what_is_wrong() {
        let message = |url: &str| StoreUrl::parse(url).unwrap_err().to_string();
        assert!(message("").contains("must not be empty"));
        assert!(message("sqlite:").contains("names no database file"));
        assert!(message("sqlite:a.db?synchronous=off").contains(r#"not "off""#));
        assert!(message("sqlite:a.db?busy_timeout_ms=x").contains("busy_timeout_ms"));
        assert!(message("sqlite:a.db?cache=big").contains(r#"unknown parameter "cache""#));
        assert!(message("mysql://h/db").contains(r#"unknown scheme "mysql""#));
        let pg = message("postgresql://user:secret@host/db");
        assert!(
            pg.contains("user:***@host") && !pg.contains("secret"),
            "{pg}"
        );
    }
}
