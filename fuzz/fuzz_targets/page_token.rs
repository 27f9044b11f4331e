//! Page tokens: any text is accepted exactly when the rule allows it (`""`, `current`, or 20
//! ASCII digits naming a chunk boundary that fits in a u64), and refused with
//! `InvalidPageToken` naming the token otherwise.
#![no_main]

use attrflow::flows::chunked_subscriber::{validate_subscriber_page_token, SUBSCRIBER_CHUNK_SIZE};
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
        Ok(n) => {
            n != 0 && n <= u128::from(u64::MAX) && (n - 1) % u128::from(SUBSCRIBER_CHUNK_SIZE) == 0
        }
        Err(_) => false,
    }
}

fuzz_target!(|token: &str| {
    match validate_subscriber_page_token(token) {
        Ok(to_use) => {
            assert!(allowed(token), "{token:?} was accepted");
            let expected = if token.is_empty() { "current" } else { token };
            assert_eq!(to_use, expected);
        }
        Err(Error::InvalidPageToken { token: named }) => {
            assert!(!allowed(token), "{token:?} was refused");
            assert_eq!(named, token);
        }
        Err(other) => panic!("{token:?} gave {other:?}"),
    }
});
