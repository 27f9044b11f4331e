//! Page tokens: any text is accepted exactly when its form is valid (`""`, `current`, or 20
//! ASCII digits of a first sequence from 1 that fits in a u64), and refused with
//! `InvalidPageToken` naming the token otherwise; an accepted token is returned, `""` as
//! `current`. (Chunk boundaries depend on a log's layout history; the page RPC checks them.)
#![no_main]

use attrflow::flows::chunked_subscriber::validate_subscriber_page_token;
use attrflow::Error;
use libfuzzer_sys::fuzz_target;

fn allowed(token: &str) -> bool {
    if token.is_empty() || token == "current" {
        return true;
    }
    if token.len() != 20 || !token.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    match token.parse::<u128>() {
        Ok(n) => n != 0 && n <= u128::from(u64::MAX),
        Err(_) => false,
    }
}

fuzz_target!(|token: &str| {
    match validate_subscriber_page_token(token) {
        Ok(normalized) => {
            assert!(allowed(token), "{token:?} was accepted");
            let expected = if token.is_empty() { "current" } else { token };
            assert_eq!(normalized, expected);
        }
        Err(Error::InvalidPageToken { token: named }) => {
            assert!(!allowed(token), "{token:?} was refused");
            assert_eq!(named, token);
        }
        Err(other) => panic!("{token:?} gave {other:?}"),
    }
});
