//! Trimming a chunked log and reading it forward, on the backend under test: a trim drops
//! whole archived chunks oldest first and leaves every remaining stored chunk byte for
//! byte, every retained token keeps its page, a dropped chunk's token is `PageTrimmed`
//! naming the oldest retained page, the newest-first walk ends at the oldest retained
//! chunk, and a read forward crosses chunks and chunk-size changes.

mod common;

use std::collections::BTreeMap;

use attrflow::chunked_log::{archive_token, Trim, TrimOutcome, MAX_READ_RECORDS};
use attrflow::flows::app_log::{AppLog, LogEntry};
use attrflow::flows::chunked_subscriber::appends::NewSubscriber;
use attrflow::flows::chunked_subscriber::{
    SubscriberArchive, SubscriberPage, FLOW_ID, LOG, READ_SUBSCRIBERS_FROM, SUBSCRIBER_CHUNKS_MAP,
    TRIM_SUBSCRIBERS,
};
use attrflow::{Error, RpcInvokeOptions};
use common::{all_subscribers, delivery_address, expected_subscriber, subscriber_id, TestStore};
use serde_json::{json, Value};

/// Registers subscribers `from..=to` in batches, checking their sequences.
fn register(archive: &SubscriberArchive<'_>, from: u64, to: u64) {
    let numbers: Vec<u64> = (from..=to).collect();
    for batch in numbers.chunks(250) {
        let new: Vec<NewSubscriber> = batch
            .iter()
            .map(|n| NewSubscriber::new(subscriber_id(*n), delivery_address(*n)))
            .collect();
        let registered = archive.register_batch(&new, None).unwrap();
        let got: Vec<u64> = registered.iter().map(|s| s.sequence).collect();
        assert_eq!(got, batch);
    }
}

/// Every stored value of the archive as the store holds it: physical name → JSON text.
fn stored_text(t: &TestStore) -> BTreeMap<String, String> {
    t.runtime
        .store()
        .stored_values(FLOW_ID)
        .unwrap()
        .into_iter()
        .collect()
}

/// The archive checked by the inspection tools' invariants; returns (records, archives).
fn verified(t: &TestStore) -> (u64, u64) {
    let summary = LOG.verify(&t.stored_values(FLOW_ID)).unwrap();
    (summary.records, summary.archives)
}

fn chunk_name(first: u64) -> String {
    format!("{SUBSCRIBER_CHUNKS_MAP}/{}", archive_token(first).unwrap())
}

fn trimmed(token: u64, oldest_token: &str, oldest_sequence: u64) -> Error {
    Error::PageTrimmed {
        token: archive_token(token).unwrap(),
        oldest_token: oldest_token.to_owned(),
        oldest_sequence,
    }
}

/// 550 subscribers: archives 1, 101, 201, 301, 401 and the open chunk 501..=550.
fn archive_of_550(t: &TestStore) -> SubscriberArchive<'_> {
    let archive = t.archive();
    archive.start().unwrap();
    register(&archive, 1, 550);
    archive
}

#[test]
fn a_trim_leaves_the_rest_byte_for_byte_and_retained_tokens_keep_their_pages() {
    let t = TestStore::fast();
    let archive = archive_of_550(&t);
    let before = stored_text(&t);
    let pages_before: BTreeMap<u64, SubscriberPage> = [1, 101, 201, 301, 401]
        .into_iter()
        .map(|first| (first, archive.page(&archive_token(first).unwrap()).unwrap()))
        .collect();

    let outcome = archive.trim(Trim::DropBefore(250)).unwrap();
    assert_eq!(
        outcome,
        TrimOutcome {
            dropped_chunks: 2,
            dropped_records: 200,
            retained_records: 350,
            oldest_sequence: 201,
            oldest_token: archive_token(201).unwrap(),
        }
    );

    let after = stored_text(&t);
    for first in [1, 101] {
        assert!(
            !after.contains_key(&chunk_name(first)),
            "{first} is dropped"
        );
    }
    for first in [201, 301, 401] {
        let name = chunk_name(first);
        assert_eq!(after[&name], before[&name], "{name} is unchanged");
    }
    assert_eq!(
        after["subscriber_chunks/current"],
        before["subscriber_chunks/current"]
    );
    // The state gains the oldest sequence, and nothing else changes.
    let state: Value = serde_json::from_str(&after["subscriber_archive_state"]).unwrap();
    assert_eq!(
        state,
        json!({
            "nextSequence": 551,
            "latestArchivedChunkToken": archive_token(401).unwrap(),
            "oldestSequence": 201,
        })
    );
    assert_eq!(after.len(), before.len() - 2);
    assert_eq!(verified(&t), (350, 3));

    for first in [301, 401] {
        let page = archive.page(&archive_token(first).unwrap()).unwrap();
        assert_eq!(page, pages_before[&first], "page {first}");
    }
    let oldest = archive.page(&archive_token(201).unwrap()).unwrap();
    assert_eq!(oldest.subscribers, pages_before[&201].subscribers);
    assert_eq!(
        oldest.next_page_token, "",
        "the walk ends at the oldest chunk"
    );

    for first in [1, 101] {
        assert_eq!(
            archive.page(&archive_token(first).unwrap()).unwrap_err(),
            trimmed(first, &archive_token(201).unwrap(), 201)
        );
    }
    let message = archive.page(&archive_token(1).unwrap()).unwrap_err();
    assert_eq!(
        message.to_string(),
        "page \"00000000000000000001\" was trimmed; the oldest retained page is \
         \"00000000000000000201\", from sequence 201"
    );
    // A token of a form no chunk ever had is still invalid, not trimmed.
    assert_eq!(
        archive.page("00000000000000000002").unwrap_err(),
        Error::InvalidPageToken {
            token: "00000000000000000002".into()
        }
    );
    assert_eq!(
        all_subscribers(&archive),
        (201..=550).map(expected_subscriber).collect::<Vec<_>>()
    );
    assert_eq!(t.held_locks(), 0);
}

#[test]
fn keeping_the_newest_records_drops_whole_chunks_down_to_the_open_one() {
    let t = TestStore::fast();
    let archive = archive_of_550(&t);

    // 550 records: dropping 1 and 101 leaves 350 ≥ 300; dropping 201 would leave 250.
    let outcome = archive.trim(Trim::KeepNewest(300)).unwrap();
    assert_eq!((outcome.dropped_chunks, outcome.retained_records), (2, 350));
    // Nothing more to drop: a second trim writes nothing.
    let before = stored_text(&t);
    let again = archive.trim(Trim::KeepNewest(300)).unwrap();
    assert_eq!((again.dropped_chunks, again.oldest_sequence), (0, 201));
    assert_eq!(stored_text(&t), before);

    let outcome = archive.trim(Trim::KeepNewest(1)).unwrap();
    assert_eq!(
        outcome,
        TrimOutcome {
            dropped_chunks: 3,
            dropped_records: 300,
            retained_records: 50,
            oldest_sequence: 501,
            oldest_token: "current".into(),
        }
    );
    let current = archive.page("").unwrap();
    assert_eq!(current.subscribers.len(), 50);
    assert_eq!(current.next_page_token, "");
    assert_eq!(
        archive.page(&archive_token(401).unwrap()).unwrap_err(),
        trimmed(401, "current", 501)
    );
    assert_eq!(verified(&t), (50, 0));

    // The log goes on growing from where it was.
    register(&archive, 551, 720);
    assert_eq!(
        all_subscribers(&archive),
        (501..=720).map(expected_subscriber).collect::<Vec<_>>()
    );
    assert_eq!(verified(&t), (220, 2));
    assert_eq!(
        archive.page(&archive_token(1).unwrap()).unwrap_err(),
        trimmed(1, &archive_token(501).unwrap(), 501)
    );
}

#[test]
fn bad_trims_are_refused_naming_the_value_and_change_nothing() {
    let t = TestStore::fast();
    let archive = archive_of_550(&t);
    let before = stored_text(&t);
    let refused = |trim| match archive.trim(trim) {
        Err(Error::InvalidInput(message)) => message,
        other => panic!("{trim:?} gave {other:?}"),
    };
    assert!(refused(Trim::KeepNewest(0)).starts_with("keepNewest must be from 1 to "));
    assert_eq!(
        refused(Trim::DropBefore(0)),
        format!("dropBefore must be from 1 to {}, not 0", u64::MAX)
    );
    assert_eq!(
        refused(Trim::DropBefore(502)),
        "dropBefore 502 would drop records of the open chunk, which starts at sequence 501; \
         a trim drops whole archived chunks only"
    );
    for input in [json!({}), json!({"keepNewest": 5, "dropBefore": 5})] {
        let error = t
            .runtime
            .invoke_rpc(
                attrflow::flows::chunked_subscriber::FLOW_TYPE,
                FLOW_ID,
                TRIM_SUBSCRIBERS,
                input,
                &RpcInvokeOptions::new(),
            )
            .unwrap_err();
        assert_eq!(
            error,
            Error::invalid_input("a trim takes exactly one of keepNewest and dropBefore")
        );
    }
    // Dropping up to the open chunk is allowed and drops every archive.
    assert_eq!(stored_text(&t), before);
    assert_eq!(
        archive.trim(Trim::DropBefore(501)).unwrap().dropped_chunks,
        5
    );
}

/// The subscribers `sequence..` a read forward of `limit` returns, and the next sequence.
fn read(archive: &SubscriberArchive<'_>, sequence: u64, limit: u64) -> (Vec<u64>, u64) {
    let read = archive.read_from(sequence, limit, None).unwrap();
    for subscriber in &read.subscribers {
        assert_eq!(*subscriber, expected_subscriber(subscriber.sequence));
    }
    assert!(read.chunks_to_load.is_empty());
    (
        read.subscribers.iter().map(|s| s.sequence).collect(),
        read.next_sequence,
    )
}

#[test]
fn a_read_forward_crosses_chunks_and_chunk_size_changes() {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    register(&archive, 1, 150);
    assert_eq!(archive.change_chunk_size(50).unwrap().from_sequence, 201);
    register(&archive, 151, 300);
    assert_eq!(archive.change_chunk_size(125).unwrap().from_sequence, 301);
    register(&archive, 301, 801);
    // Chunks: 1, 101 (100 each), 201, 251 (50), 301, 426, 551, 676 (125), open 801.

    for start in [
        1, 99, 100, 101, 200, 201, 250, 251, 300, 301, 550, 676, 800, 801,
    ] {
        for limit in [1, 7, 50, 126, 333, MAX_READ_RECORDS] {
            let end = (start + limit).min(802);
            assert_eq!(
                read(&archive, start, limit),
                ((start..end).collect(), end),
                "from {start}, {limit} records"
            );
        }
    }
    // Past the newest record there is nothing yet, and the next read starts there again.
    assert_eq!(read(&archive, 802, 10), (vec![], 802));
    assert_eq!(read(&archive, 5_000, 10), (vec![], 5_000));

    // Reading on from each next sequence returns every record once, in order.
    let mut all = Vec::new();
    let mut next = 1;
    loop {
        let (sequences, after) = read(&archive, next, 37);
        if sequences.is_empty() {
            break;
        }
        all.extend(sequences);
        next = after;
    }
    assert_eq!(all, (1..=801).collect::<Vec<_>>());

    // A trim in the middle of a layout: 201..=250 goes, 251..=300 stays.
    let outcome = archive.trim(Trim::DropBefore(260)).unwrap();
    assert_eq!((outcome.dropped_chunks, outcome.oldest_sequence), (3, 251));
    assert_eq!(read(&archive, 251, 60), ((251..311).collect(), 311));
    assert_eq!(
        archive.read_from(230, 10, None).unwrap_err(),
        trimmed(201, &archive_token(251).unwrap(), 251)
    );
    assert_eq!(
        archive.read_from(1, 10, None).unwrap_err(),
        trimmed(1, &archive_token(251).unwrap(), 251)
    );
    let walked: Vec<u64> = all_subscribers(&archive)
        .iter()
        .map(|s| s.sequence)
        .collect();
    assert_eq!(walked, (251..=801).collect::<Vec<_>>());
}

#[test]
fn a_read_forward_refuses_bad_starts_and_limits_naming_the_value() {
    let t = TestStore::fast();
    let archive = archive_of_550(&t);
    let refused = |sequence, limit| match archive.read_from(sequence, limit, None) {
        Err(Error::InvalidInput(message)) => message,
        other => panic!("{sequence}, {limit} gave {other:?}"),
    };
    assert_eq!(
        refused(0, 10),
        format!("sequence must be from 1 to {}, not 0", u64::MAX)
    );
    assert_eq!(
        refused(1, 0),
        format!("limit must be from 1 to {MAX_READ_RECORDS}, not 0")
    );
    assert_eq!(
        refused(1, MAX_READ_RECORDS + 1),
        format!(
            "limit must be from 1 to {MAX_READ_RECORDS}, not {}",
            MAX_READ_RECORDS + 1
        )
    );
    // The RPC checks the same, whoever calls it.
    let error = t
        .runtime
        .invoke_rpc(
            attrflow::flows::chunked_subscriber::FLOW_TYPE,
            FLOW_ID,
            READ_SUBSCRIBERS_FROM,
            json!({"sequence": 1, "limit": 5_000}),
            &RpcInvokeOptions::new(),
        )
        .unwrap_err();
    assert_eq!(
        error,
        Error::invalid_input(format!(
            "limit must be from 1 to {MAX_READ_RECORDS}, not 5000"
        ))
    );
}

#[test]
fn an_app_log_trims_and_reads_forward_one_log_at_a_time() {
    let t = TestStore::fast();
    let logs = AppLog::new(&t.runtime, "app");
    logs.start().unwrap();
    for log in ["audit", "chat"] {
        let records: Vec<Value> = (1..=250).map(|n| json!({"n": n, "log": log})).collect();
        logs.append_batch(log, records, None).unwrap();
    }
    let outcome = logs.trim("audit", Trim::KeepNewest(120)).unwrap();
    assert_eq!(
        (
            outcome.dropped_chunks,
            outcome.oldest_sequence,
            outcome.oldest_token.as_str()
        ),
        (1, 101, "00000000000000000101")
    );
    assert_eq!(
        logs.page("audit", "00000000000000000001").unwrap_err(),
        trimmed(1, "00000000000000000101", 101)
    );
    // The other log keeps everything.
    assert_eq!(
        logs.page("chat", "00000000000000000001")
            .unwrap()
            .entries
            .len(),
        100
    );
    let read = logs.read_from("audit", 95, 20, None).unwrap_err();
    assert_eq!(read, trimmed(1, "00000000000000000101", 101));
    let read = logs.read_from("audit", 195, 20, None).unwrap();
    let sequences: Vec<u64> = read.entries.iter().map(|e| e.sequence).collect();
    assert_eq!(sequences, (195..215).collect::<Vec<_>>());
    assert_eq!(read.next_sequence, 215);
    assert_eq!(
        read.entries[0],
        LogEntry {
            sequence: 195,
            record: json!({"n": 195, "log": "audit"}),
        }
    );
    let read = logs.read_from("chat", 1, 3, None).unwrap();
    assert_eq!(read.entries.len(), 3);
    // A log never written reads as empty and trims nothing.
    assert!(logs
        .read_from("never", 1, 10, None)
        .unwrap()
        .entries
        .is_empty());
    assert_eq!(
        logs.trim("never", Trim::KeepNewest(1))
            .unwrap()
            .dropped_chunks,
        0
    );
    assert!(matches!(
        logs.trim("a/b", Trim::KeepNewest(1)),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn trims_racing_appends_and_readers_keep_every_invariant() {
    const WRITERS: u64 = 3;
    const APPENDS: u64 = 150;
    let t = TestStore::fast();
    let archive = t.archive().with_retry_policy(common::patient_retry());
    archive.start().unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for writer in 0..WRITERS {
            let archive = &archive;
            scope.spawn(move || {
                for k in 0..APPENDS {
                    let id = format!("w{writer}-{k}");
                    archive.register(&id, &format!("{id}@example.com")).unwrap();
                }
            });
        }
        // A trimmer keeps the newest 120, racing the appends.
        scope.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let outcome = archive
                    .retrying(|archive| archive.trim(Trim::KeepNewest(120)))
                    .unwrap();
                let written = outcome.oldest_sequence - 1 + outcome.retained_records;
                assert!(outcome.retained_records >= written.min(120), "{outcome:?}");
            }
        });
        // A reader walks newest first; a trimmed page restarts its walk at the oldest.
        scope.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let mut token = "current".to_owned();
                while !token.is_empty() {
                    match archive.page(&token) {
                        Ok(page) => token = page.next_page_token,
                        Err(Error::PageTrimmed { oldest_token, .. }) => token = oldest_token,
                        Err(other) => panic!("reading {token}: {other}"),
                    }
                }
                let read = archive.read_from(1, 10, None);
                assert!(
                    matches!(read, Ok(_) | Err(Error::PageTrimmed { .. })),
                    "{read:?}"
                );
            }
        });
        // The writers end first; then the trimmer and the reader stop.
        while verified(&t).0 + t_oldest(&t) - 1 < WRITERS * APPENDS {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let (records, _) = verified(&t);
    let oldest = t_oldest(&t);
    assert_eq!(oldest + records - 1, WRITERS * APPENDS);
    assert!(records >= 120);
    let walked: Vec<u64> = all_subscribers(&archive)
        .iter()
        .map(|s| s.sequence)
        .collect();
    assert_eq!(walked, (oldest..=WRITERS * APPENDS).collect::<Vec<_>>());
    assert_eq!(t.held_locks(), 0);
}

/// The oldest retained sequence the stored state records (1 before any trim).
fn t_oldest(t: &TestStore) -> u64 {
    t.stored_values(FLOW_ID)["subscriber_archive_state"]
        .get("oldestSequence")
        .and_then(Value::as_u64)
        .unwrap_or(1)
}
