//! The store is a file: what was committed is there after the runtime is dropped and the
//! file opened again, and a file attrflow cannot use is refused with a storage error that
//! names it, before anything is written.

mod common;

use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID};
use attrflow::store::{StoreUrl, Synchronous};
use attrflow::{Error, Runtime};
use common::{all_subscribers, expected_subscriber, register_in_order, Backend, TestStore};

fn storage_message(result: attrflow::Result<impl std::fmt::Debug>) -> String {
    match result {
        Err(Error::Storage(message)) => message,
        other => panic!("expected a storage error, got {other:?}"),
    }
}

#[test]
fn flows_and_values_survive_dropping_the_runtime_and_reopening_the_file() {
    let t = TestStore::new();
    let run_id = t.archive().start().unwrap();
    register_in_order(&t.archive(), 1..=150);
    let pages_before = [
        t.archive().page("current").unwrap(),
        t.archive().page("00000000000000000001").unwrap(),
    ];

    let t = t.reopen();

    assert_eq!(t.flow(FLOW_ID).unwrap().run_id, run_id);
    assert_eq!(
        t.archive().start().unwrap(),
        run_id,
        "the flow is still running"
    );
    let pages_after = [
        t.archive().page("current").unwrap(),
        t.archive().page("00000000000000000001").unwrap(),
    ];
    assert_eq!(pages_after, pages_before);
    register_in_order(&t.archive(), 151..=151);
    assert_eq!(
        all_subscribers(&t.archive()),
        (1..=151).map(expected_subscriber).collect::<Vec<_>>()
    );
    assert_eq!(
        t.held_locks(),
        0,
        "no lock outlives the runtime that took it"
    );
}

#[test]
fn the_store_url_opens_the_same_store_the_runtime_wrote() {
    let t = TestStore::new();
    t.archive().start().unwrap();
    register_in_order(&t.archive(), 1..=2);
    let url = t.url.clone();
    drop(t.runtime);
    drop(t.store);

    let runtime = Runtime::open(&url).unwrap();
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);
    assert_eq!(
        all_subscribers(&archive),
        vec![expected_subscriber(1), expected_subscriber(2)]
    );
}

#[test]
fn a_synchronous_normal_url_opens_a_working_store_that_a_plain_path_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("normal.db");
    let url = format!("sqlite://{}?synchronous=normal", path.display());
    assert!(matches!(
        StoreUrl::parse(&url).unwrap(),
        StoreUrl::Sqlite { options, .. } if options.synchronous == Synchronous::Normal
    ));

    {
        let runtime = Runtime::open(&url).unwrap();
        let archive = SubscriberArchive::new(&runtime, FLOW_ID);
        archive.start().unwrap();
        register_in_order(&archive, 1..=3);
    }

    let runtime = Runtime::open(path.to_str().unwrap()).unwrap();
    let archive = SubscriberArchive::new(&runtime, FLOW_ID);
    assert_eq!(
        all_subscribers(&archive),
        (1..=3).map(expected_subscriber).collect::<Vec<_>>()
    );
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(
        mode, "wal",
        "the store keeps its write-ahead log mode in the file"
    );
}

#[test]
fn missing_parent_folders_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("deeper").join("attrflow.db");
    let runtime = Runtime::open(path.to_str().unwrap()).unwrap();
    SubscriberArchive::new(&runtime, FLOW_ID).start().unwrap();
    assert!(path.is_file());
}

#[test]
fn a_file_that_is_not_a_database_is_a_storage_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    let text = "These are my notes, not a database.\n".repeat(200);
    std::fs::write(&path, &text).unwrap();

    let message = storage_message(Runtime::open(path.to_str().unwrap()));
    assert!(
        message.contains(&path.display().to_string()),
        "{message:?} names the file"
    );
    assert!(message.contains("not an SQLite database"), "{message:?}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "left untouched"
    );
}

#[test]
fn a_folder_is_refused_naming_a_file_to_use_instead() {
    let dir = tempfile::tempdir().unwrap();
    let message = storage_message(Runtime::open(dir.path().to_str().unwrap()));
    assert_eq!(
        message,
        format!(
            "store {} is a folder; name a database file, such as {}",
            dir.path().display(),
            dir.path().join("attrflow.db").display()
        )
    );
}

#[test]
fn an_sqlite_database_of_another_program_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada');")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();

    let message = storage_message(Runtime::open(path.to_str().unwrap()));
    assert!(
        message.contains(&path.display().to_string())
            && message.contains("an SQLite database of another program"),
        "{message:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "not a byte changed");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "delete", "its journal mode kept");
    assert!(!dir.path().join("app.db-wal").exists());
}

#[test]
fn a_store_written_by_a_newer_schema_version_is_refused() {
    let t = TestStore::new();
    t.archive().start().unwrap();
    let schema_version = match t.backend() {
        Backend::Sqlite => attrflow::store::sqlite::SCHEMA_VERSION,
        Backend::Postgres => attrflow::store::postgres::SCHEMA_VERSION,
    };
    let location = t.location();
    t.set_schema_version(schema_version + 1);

    let message = storage_message(Runtime::open(&t.url));
    assert_eq!(
        message,
        format!(
            "store {location} has schema version {}; this attrflow reads version {schema_version}",
            schema_version + 1
        )
    );
}
