//! Page tokens: the one grammar every chunked log, binding and service checks tokens by.
//!
//! A token is `""` or `current` (the open chunk; `""` reads as `current`), or the first
//! sequence of an archived chunk as exactly 20 ASCII digits, from 1. That is its *form*,
//! all a caller can check before it loads the token's chunk ([`PageToken::parse`],
//! [`normalize_page_token`]). Whether an archive token names a chunk *boundary* depends on
//! the log's layout history, which the page RPC checks ([`PageToken::parse_in`]).
//!
//! The module mints only tokens it accepts: [`archive_token`] refuses sequence 0, and
//! every token it formats has the form [`PageToken::parse`] accepts.
//!
//! ```
//! use attrflow::chunked_log::{archive_token, normalize_page_token, PageToken};
//! assert_eq!(archive_token(101).unwrap(), "00000000000000000101");
//! assert!(archive_token(0).is_err());
//! assert_eq!(normalize_page_token("").unwrap(), "current");
//! assert_eq!(PageToken::parse("00000000000000000101").unwrap(), PageToken::Archive(101));
//! assert!(PageToken::parse("7").is_err());
//! ```

use std::fmt;

use super::layout::LayoutHistory;
use crate::error::{Error, Result};

/// The instance key (and token) of the open chunk.
pub const CURRENT_CHUNK: &str = "current";

/// Number of digits in an archive token.
pub const ARCHIVE_TOKEN_DIGITS: usize = 20;

/// A page token of valid form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageToken {
    /// The open chunk (`""` or `current`).
    Current,
    /// The archived chunk whose first record has this sequence (at least 1).
    Archive(u64),
}

impl PageToken {
    /// Checks a token's form only: `""` and `current` name the open chunk; anything else
    /// must be exactly 20 ASCII digits, not all zero. A bad token is
    /// [`Error::InvalidPageToken`] naming it.
    pub fn parse(token: &str) -> Result<PageToken> {
        if token.is_empty() || token == CURRENT_CHUNK {
            return Ok(PageToken::Current);
        }
        let invalid = || Error::InvalidPageToken {
            token: token.to_owned(),
        };
        if token.len() != ARCHIVE_TOKEN_DIGITS || !token.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        match token.parse::<u64>() {
            Ok(first) if first > 0 => Ok(PageToken::Archive(first)),
            _ => Err(invalid()),
        }
    }

    /// Checks a token's form and that an archive token names a chunk boundary of
    /// `history` (the layout its sequence falls in).
    pub fn parse_in(history: &LayoutHistory, token: &str) -> Result<PageToken> {
        match PageToken::parse(token)? {
            PageToken::Archive(first) if !history.is_boundary(first) => {
                Err(Error::InvalidPageToken {
                    token: token.to_owned(),
                })
            }
            parsed => Ok(parsed),
        }
    }

    /// The chunk-map instance key holding this page (unscoped: `current` or the 20-digit
    /// token), which is also the token's canonical text.
    pub fn instance_key(self) -> String {
        self.to_string()
    }
}

impl fmt::Display for PageToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PageToken::Current => f.write_str(CURRENT_CHUNK),
            PageToken::Archive(first) => {
                write!(f, "{first:0width$}", width = ARCHIVE_TOKEN_DIGITS)
            }
        }
    }
}

/// The token to read with after checking `token`'s form: `current` for `""`, the token
/// itself otherwise (what Dex's validator returns, for the caller to load).
pub fn normalize_page_token(token: &str) -> Result<String> {
    PageToken::parse(token).map(|parsed| parsed.to_string())
}

/// The token (and instance key) of the archived chunk starting at `first_sequence`: the
/// sequence zero-padded to 20 digits. Sequence 0 starts no chunk and is
/// [`Error::InvalidInput`].
pub fn archive_token(first_sequence: u64) -> Result<String> {
    if first_sequence == 0 {
        return Err(first_sequence_out_of_range(0));
    }
    Ok(PageToken::Archive(first_sequence).to_string())
}

/// The error for a first sequence outside 1 to `u64::MAX`, showing it as the caller gave
/// it (a binding shows integers no `u64` holds).
pub fn first_sequence_out_of_range(shown: impl fmt::Display) -> Error {
    out_of_range("first sequence", shown)
}

/// The error for a sequence or count (`what` names it: `dropBefore`, `keepNewest`,
/// `sequence`) outside 1 to `u64::MAX`, showing it as the caller gave it (a binding shows
/// integers no `u64` holds).
pub fn out_of_range(what: &str, shown: impl fmt::Display) -> Error {
    Error::invalid_input(format!(
        "{what} must be from 1 to {}, not {shown}",
        u64::MAX
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_forms() {
        assert_eq!(PageToken::parse("").unwrap(), PageToken::Current);
        assert_eq!(PageToken::parse("current").unwrap(), PageToken::Current);
        assert_eq!(
            PageToken::parse("00000000000000000002").unwrap(),
            PageToken::Archive(2)
        );
        assert_eq!(
            PageToken::parse("18446744073709551615").unwrap(),
            PageToken::Archive(u64::MAX)
        );
    }

    #[test]
    fn invalid_forms_name_the_token() {
        for bad in [
            "1",
            "archive",
            "00000000000000000000",
            "000000000000000000101",
            "0000000000000000010",
            "99999999999999999901",
            "0000000000000000010١",
            "+0000000000000000101",
            " 0000000000000000101",
            "Current",
        ] {
            assert_eq!(
                PageToken::parse(bad).unwrap_err(),
                Error::InvalidPageToken { token: bad.into() },
                "{bad:?}"
            );
        }
        assert_eq!(
            PageToken::parse("1").unwrap_err().to_string(),
            r#"invalid page token "1""#
        );
    }

    #[test]
    fn boundaries_follow_the_layout_history() {
        let history = LayoutHistory::single(100);
        assert!(PageToken::parse_in(&history, "00000000000000000101").is_ok());
        assert!(PageToken::parse_in(&history, "00000000000000000002").is_err());
        let small = LayoutHistory::single(3);
        assert!(PageToken::parse_in(&small, "00000000000000000004").is_ok());
        assert!(PageToken::parse_in(&small, "00000000000000000003").is_err());
    }

    #[test]
    fn every_minted_token_parses_back() {
        for first in [1, 2, 101, u64::MAX] {
            let token = archive_token(first).unwrap();
            assert_eq!(token.len(), ARCHIVE_TOKEN_DIGITS);
            assert_eq!(PageToken::parse(&token).unwrap(), PageToken::Archive(first));
        }
        assert_eq!(
            archive_token(0).unwrap_err().to_string(),
            format!("first sequence must be from 1 to {}, not 0", u64::MAX)
        );
        assert_eq!(normalize_page_token("").unwrap(), "current");
        assert_eq!(normalize_page_token("current").unwrap(), "current");
        assert!(normalize_page_token("00000000000000000000").is_err());
    }
}
