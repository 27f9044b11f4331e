//! The `attrflow` binary end to end, on real store files (and a real PostgreSQL server when
//! ATTRFLOW_TEST_POSTGRES_URL names one): listing, paging, verify on a sound and on a
//! deliberately corrupted store, export and import between stores.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use attrflow::chunked_log::Trim;
use attrflow::flows::app_log::AppLog;
use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID};
use attrflow::Runtime;
use serde_json::{json, Value};

fn attrflow(store: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_attrflow"))
        .arg("--store")
        .arg(store)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the attrflow binary starts");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or_default())
        .expect("stdin written");
    drop(input);
    child.wait_with_output().expect("attrflow finishes")
}

fn ok(output: &Output) -> Vec<String> {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stderr.is_empty(), "nothing extra when piped");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn failure(output: &Output) -> String {
    failure_with(output, 1)
}

fn failure_with(output: &Output, code: i32) -> String {
    assert_eq!(output.status.code(), Some(code));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    stderr
}

fn sequences(lines: &[String]) -> Vec<u64> {
    lines
        .iter()
        .map(|line| {
            serde_json::from_str::<Value>(line).expect("JSON line")["sequence"]
                .as_u64()
                .expect("sequence")
        })
        .collect()
}

/// Registers subscribers 1 to `count` (`subscriber-001`, …) in the started `archive`.
fn register_subscribers(archive: &SubscriberArchive<'_>, count: u64) {
    for n in 1..=count {
        let id = format!("subscriber-{n:03}");
        archive
            .register(&id, &format!("{id}@example.com"))
            .expect("registered");
    }
}

/// A store with a 250-subscriber archive and an app log of 3 records.
fn populated(path: &Path) -> String {
    let store = path.to_str().expect("UTF-8 path").to_owned();
    let runtime = Runtime::open(&store).expect("store opens");
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);
    archive.start().expect("archive starts");
    register_subscribers(&archive, 250);
    let app = AppLog::new(&runtime, "my-app");
    app.start().expect("app log starts");
    for n in 1..=3 {
        app.append("audit", json!({"event": n})).expect("appended");
    }
    store
}

#[test]
fn lists_shows_and_pages() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = populated(&dir.path().join("a.db"));

    let flows = ok(&attrflow(&store, &["flows"], None));
    assert_eq!(flows.len(), 2);
    assert!(flows[0].starts_with(&format!("{FLOW_ID}\tChunkedSubscriberFlow\t")));
    assert!(flows[1].starts_with("my-app\tChunkedLogFlow\t"));

    let shown = ok(&attrflow(&store, &["show", "my-app"], None));
    assert!(
        shown.iter().any(|l| l.starts_with("log_states/audit\t")),
        "{shown:?}"
    );

    let page = ok(&attrflow(&store, &["page", FLOW_ID, "--json"], None));
    assert_eq!(sequences(&page), (1..=250).rev().collect::<Vec<_>>());
    for from in [1, 99, 100, 101, 120, 200, 201, 249, 250, 999] {
        let arg = from.to_string();
        let page = ok(&attrflow(
            &store,
            &["page", FLOW_ID, "--json", "--from", &arg],
            None,
        ));
        assert_eq!(
            sequences(&page),
            (1..=from.min(250)).rev().collect::<Vec<_>>(),
            "{from}"
        );
    }
    let table = ok(&attrflow(
        &store,
        &["page", "my-app", "--log", "audit"],
        None,
    ));
    assert_eq!(
        table,
        [
            "3\trecord={\"event\":3}",
            "2\trecord={\"event\":2}",
            "1\trecord={\"event\":1}"
        ]
    );

    let missing = failure(&attrflow(&store, &["show", "nope"], None));
    assert!(missing.contains("\"nope\""), "{missing}");
    let no_log = failure(&attrflow(&store, &["page", "my-app"], None));
    assert!(no_log.contains("--log"), "{no_log}");
    let usage = failure_with(&attrflow(&store, &["page"], None), 2);
    assert!(usage.contains("<FLOW>"), "{usage}");
    let absent = dir.path().join("absent.db");
    let error = failure(&attrflow(
        absent.to_str().expect("UTF-8"),
        &["verify"],
        None,
    ));
    assert!(error.contains("does not exist"), "{error}");
    assert!(!absent.exists(), "reading creates no store");
    let bad_store = failure(&attrflow("mysql://nowhere", &["flows"], None));
    assert!(bad_store.starts_with("attrflow: "), "{bad_store}");
}

#[test]
fn verify_passes_a_sound_store_and_catches_corruption() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("a.db");
    let store = populated(&path);
    assert_eq!(
        ok(&attrflow(&store, &["verify"], None)),
        ["ok: 2 flows, 2 chunked logs, 253 records"]
    );

    // A record cut out of the second archive: sequences are no longer dense.
    let chunk = "subscriber_chunks/00000000000000000101";
    let conn = rusqlite::Connection::open(&path).expect("sqlite opens");
    conn.execute(
        "UPDATE attribute_values SET value = json_remove(value, '$.subscribers[5]') WHERE name = ?1",
        [chunk],
    )
    .expect("chunk edited");
    let error = failure(&attrflow(&store, &["verify"], None));
    assert!(error.contains(chunk), "{error}");

    // Put it right, then break the state's next sequence instead.
    drop(conn);
    let repaired = dir.path().join("b.db");
    let store = populated(&repaired);
    let conn = rusqlite::Connection::open(&repaired).expect("sqlite opens");
    conn.execute(
        "UPDATE attribute_values SET value = json_set(value, '$.nextSequence', 300) WHERE name = 'subscriber_archive_state'",
        [],
    )
    .expect("state edited");
    let error = failure(&attrflow(&store, &["verify"], None));
    assert!(
        error.contains("subscriber_archive_state: next sequence is 300"),
        "{error}"
    );
}

#[test]
fn a_stopped_flow_is_listed_as_such_verifies_pages_and_exports_but_takes_no_import() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = populated(&dir.path().join("a.db"));
    Runtime::open(&store)
        .expect("store opens")
        .stop_flow("my-app", attrflow::StopType::Cancel, Some("retired"))
        .expect("stopped");
    assert_eq!(
        ok(&attrflow(&store, &["verify"], None)),
        ["ok: 2 flows, 2 chunked logs, 253 records"]
    );
    let flows = ok(&attrflow(&store, &["flows"], None));
    assert!(flows[0].ends_with("\trunning"), "{flows:?}");
    assert!(
        flows[1].starts_with("my-app\tChunkedLogFlow\t") && flows[1].ends_with("\tcanceled"),
        "{flows:?}"
    );
    let shown = ok(&attrflow(&store, &["show", "my-app"], None));
    assert!(
        shown
            .iter()
            .any(|l| l.starts_with("/run\t{\"status\":\"canceled\",\"reason\":\"retired\"")),
        "{shown:?}"
    );
    // Its log is read as an inspection: paged and exported as before the stop.
    let paged = ok(&attrflow(
        &store,
        &["page", "my-app", "--log", "audit", "--json"],
        None,
    ));
    assert_eq!(sequences(&paged), [3, 2, 1]);
    let exported = attrflow(&store, &["export", "my-app", "--log", "audit"], None);
    let lines = ok(&exported);
    assert_eq!(sequences(&lines), [1, 2, 3]);
    // Nothing is appended to a stopped flow.
    let refused = failure(&attrflow(
        &store,
        &["import", "my-app", "--log", "audit"],
        Some(b"{\"sequence\": 4, \"record\": {\"event\": 4}}\n"),
    ));
    assert!(refused.contains("was stopped (canceled)"), "{refused}");
    assert_eq!(
        sequences(&ok(&attrflow(
            &store,
            &["page", "my-app", "--log", "audit", "--json"],
            None
        ))),
        [3, 2, 1]
    );
}

#[test]
fn an_export_reads_a_trimmed_log_forward_from_its_oldest_retained_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = dir.path().join("a.db").to_str().expect("UTF-8").to_owned();
    let runtime = Runtime::open(&store).expect("store opens");
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);
    archive.start().expect("archive starts");
    // More records than one read forward returns (1,000), so the export takes several.
    register_subscribers(&archive, 2_350);
    archive.trim(Trim::DropBefore(201)).expect("trimmed");
    drop(runtime);

    let exported = ok(&attrflow(&store, &["export", FLOW_ID], None));
    assert_eq!(sequences(&exported), (201..=2_350).collect::<Vec<_>>());
    // Each line is the record as a page shows it.
    let mut paged = ok(&attrflow(&store, &["page", FLOW_ID, "--json"], None));
    paged.reverse();
    assert_eq!(exported, paged);
}

#[test]
fn verify_catches_a_damaged_database_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("a.db");
    let store = populated(&path);
    let conn = rusqlite::Connection::open(&path).expect("sqlite opens");
    conn.pragma_update(None, "wal_checkpoint", "TRUNCATE")
        .expect("checkpoint");
    let page_size: u32 = conn
        .query_row("PRAGMA page_size", [], |row| row.get(0))
        .expect("page size");
    // The b-tree of the values' primary-key index: the store opens, the index is damaged.
    let root: u32 = conn
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE type = 'index' AND tbl_name = 'attribute_values'",
            [],
            |row| row.get(0),
        )
        .expect("index root page");
    drop(conn);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("file opens");
    std::os::unix::fs::FileExt::write_all_at(
        &file,
        &vec![0u8; usize::try_from(page_size).expect("size")],
        u64::from(root - 1) * u64::from(page_size),
    )
    .expect("page zeroed");
    drop(file);
    let error = failure(&attrflow(&store, &["verify"], None));
    assert!(error.contains("integrity check: "), "{error}");
}

/// Exports both logs of `from`, imports them into `to`, and checks `to` pages the same.
fn round_trip(from: &str, to: &str) {
    for (flow, log) in [(FLOW_ID, None), ("my-app", Some("audit"))] {
        let mut args = vec![flow];
        args.extend(log.iter().flat_map(|log| ["--log", *log]));
        let export = |store: &str| {
            let mut command = vec!["export"];
            command.extend(&args);
            ok(&attrflow(store, &command, None))
        };
        let exported = export(from);
        let mut command = vec!["import"];
        command.extend(&args);
        let lines = exported.join("\n");
        let imported = ok(&attrflow(to, &command, Some(lines.as_bytes())));
        assert_eq!(
            imported,
            [format!(
                "imported {} records into flow {flow:?}",
                exported.len()
            )]
        );
        assert_eq!(export(to), exported);
        // A second import would not keep the sequences: refused, one line, nothing written.
        let again = failure(&attrflow(to, &command, Some(lines.as_bytes())));
        assert!(again.contains("nothing imported"), "{again}");
        assert_eq!(export(to), exported);
    }
}

#[test]
fn export_and_import_between_sqlite_stores() {
    let dir = tempfile::tempdir().expect("temp dir");
    let from = populated(&dir.path().join("a.db"));
    let to = dir.path().join("b.db").to_str().expect("UTF-8").to_owned();
    round_trip(&from, &to);
    assert_eq!(
        sequences(&ok(&attrflow(&to, &["export", FLOW_ID], None)))[..3],
        [1, 2, 3]
    );
}

#[test]
fn export_and_import_between_sqlite_and_postgresql() {
    let Ok(base) = std::env::var("ATTRFLOW_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("ATTRFLOW_TEST_POSTGRES_REQUIRED").is_err(),
            "ATTRFLOW_TEST_POSTGRES_URL is required"
        );
        return;
    };
    let schema = format!("cli_{}", uuid::Uuid::new_v4().simple());
    let separator = if base.contains('?') { '&' } else { '?' };
    let postgres = format!("{base}{separator}schema={schema}");
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = populated(&dir.path().join("a.db"));
    let back = dir
        .path()
        .join("back.db")
        .to_str()
        .expect("UTF-8")
        .to_owned();
    round_trip(&sqlite, &postgres);
    round_trip(&postgres, &back);
    assert_eq!(
        ok(&attrflow(&postgres, &["verify"], None)),
        ["ok: 2 flows, 2 chunked logs, 253 records"]
    );
    if let Ok(mut client) = postgres::Client::connect(&base, postgres::NoTls) {
        let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"));
    }
}

/// `n` exported subscriber lines from sequence `from`.
fn subscriber_lines(from: u64, n: u64) -> Vec<String> {
    (from..from + n)
        .map(|s| json!({ "sequence": s, "subscriberId": format!("s-{s}"), "deliveryAddress": "a@example.com" }).to_string())
        .collect()
}

/// Every line of an import is checked before anything is written, and the first bad one is
/// named; a batch the store refuses is named with the records imported before it.
#[test]
fn an_import_names_the_first_bad_line_and_what_was_imported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = dir.path().join("to.db").to_str().expect("UTF-8").to_owned();
    let import = |lines: &[String]| {
        attrflow(
            &store,
            &["import", FLOW_ID],
            Some(lines.join("\n").as_bytes()),
        )
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            [subscriber_lines(1, 120), subscriber_lines(125, 1)].concat(),
            "line 121: sequence 125 follows sequence 120 (an export's sequences are dense, oldest first); nothing imported",
        ),
        (
            [subscriber_lines(1, 2), vec![r#"{"sequence":"3","subscriberId":"x","deliveryAddress":"y"}"#.to_owned()]].concat(),
            r#"line 3: "sequence" must be a whole number from 1, not "3"; nothing imported"#,
        ),
        (
            vec![r#"{"sequence":1,"subscriberId":"x","deliveryAddress":"y","email":"z"}"#.to_owned()],
            r#"line 1: unknown field "email" (a record of this log has "sequence" and "subscriberId" and "deliveryAddress"); nothing imported"#,
        ),
        (
            vec![r#"{"sequence":1,"subscriberId":"x"}"#.to_owned()],
            r#"line 1: the record has no "deliveryAddress" text; nothing imported"#,
        ),
        (vec!["{not json".to_owned()], "line 1: the line is not JSON"),
    ];
    for (lines, expected) in cases {
        let error = failure(&import(&lines));
        assert!(error.contains(expected), "{error:?} says {expected:?}");
        let listed = ok(&attrflow(&store, &["flows"], None));
        assert!(
            !listed.iter().any(|line| line.contains(FLOW_ID)),
            "nothing started: {listed:?}"
        );
    }
    let not_utf8 = attrflow(
        &store,
        &["import", FLOW_ID],
        Some(b"{\"sequence\":1,\"subscriberId\":\"\xff\",\"deliveryAddress\":\"y\"}"),
    );
    assert!(failure(&not_utf8).contains("line 1: not UTF-8 text"));

    // The second batch holds a record the store refuses (over the record limit of a log with
    // chunks of 100): the first batch stays imported, and the message says so.
    let mut lines = subscriber_lines(1, 1500);
    lines[1199] =
        json!({ "sequence": 1200, "subscriberId": "x".repeat(20_000), "deliveryAddress": "y" })
            .to_string();
    let error = failure(&import(&lines));
    assert!(
        error.starts_with("attrflow: lines 1001 to 1500: ")
            && error.contains("none of them stored, and the 1000 records before them imported (sequences 1 to 1000)"),
        "{error}"
    );
    assert_eq!(
        ok(&attrflow(&store, &["verify"], None)),
        ["ok: 1 flows, 1 chunked logs, 1000 records"]
    );
    // The rest imports once fixed.
    let rest = subscriber_lines(1001, 500);
    assert_eq!(
        ok(&import(&rest)),
        [format!("imported 500 records into flow {FLOW_ID:?}")]
    );

    // An existing flow decides what it holds.
    let wrong_log = failure(&attrflow(
        &store,
        &["import", FLOW_ID, "--log", "audit"],
        Some(b""),
    ));
    assert!(
        wrong_log.contains("is a subscriber archive: it has one log, so no --log"),
        "{wrong_log}"
    );
}

#[test]
fn a_table_escapes_control_characters_so_a_record_stays_one_row() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = dir.path().join("a.db").to_str().expect("UTF-8").to_owned();
    let runtime = Runtime::open(&store).expect("store opens");
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);
    archive.start().expect("archive starts");
    archive
        .register("line1\nline2\tTAB", "esc\u{1b}[31mRED")
        .expect("registered");
    drop(runtime);
    let table = ok(&attrflow(&store, &["page", FLOW_ID], None));
    assert_eq!(
        table,
        ["1\tdeliveryAddress=esc\\u{1b}[31mRED\tsubscriberId=line1\\nline2\\tTAB"]
    );
}
