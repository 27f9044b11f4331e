//! The app log used directly from Rust: one flow holding named logs of JSON records (an
//! audit trail and a chat transcript here), appended with retry and paged newest first.
//!
//! ```sh
//! cargo run -p attrflow-rust-examples --example app_log -- data/app.db
//! ```

use std::process::ExitCode;

use attrflow::flows::app_log::AppLog;
use attrflow::{Error, Runtime};
use serde_json::json;

fn run(store: &str) -> Result<(), Error> {
    let runtime = Runtime::open(store)?;
    let logs = AppLog::new(&runtime, "my-app");
    logs.start()?;

    for n in 1..=120 {
        logs.append(
            "chat",
            json!({"from": "agent", "text": format!("reply {n}")}),
        )?;
    }
    let entry = logs.append("audit", json!({"event": "export", "rows": 120}))?;
    println!("audit entry {} stored", entry.sequence);

    let newest = logs.page("chat", "current")?;
    println!(
        "chat: {} entries on the newest page, newest {}, next page {:?}",
        newest.entries.len(),
        newest.entries[0].record,
        newest.next_page_token
    );
    match logs.page("chat", "12") {
        Err(Error::InvalidPageToken { token }) => println!("token {token:?} is rejected"),
        other => {
            return Err(Error::storage(format!(
                "expected a token error, got {other:?}"
            )))
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let store = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "data/app.db".to_owned());
    match run(&store) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
