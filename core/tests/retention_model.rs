//! Random histories of appends, chunk-size changes and trims, on the backend under test,
//! checked against rules stated again here without chunk boundaries: a trim never drops a
//! record it was asked to keep (and never the open chunk), the oldest retained sequence
//! only grows, a read forward from any retained sequence returns exactly the records from
//! there, a trimmed start is `PageTrimmed` naming the oldest retained sequence, and the
//! newest-first walk returns exactly the retained records.

mod common;

use attrflow::chunked_log::Trim;
use attrflow::flows::chunked_subscriber::appends::NewSubscriber;
use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID, LOG};
use attrflow::Error;
use common::{all_subscribers, delivery_address, expected_subscriber, subscriber_id, TestStore};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

#[derive(Debug, Clone)]
enum Step {
    Append(u64),
    ChangeSize(u64),
    KeepNewest(u64),
    /// Drop before the oldest retained sequence plus this many.
    DropBefore(u64),
    ReadFrom(u64, u64),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            3 => (1u64..60).prop_map(Step::Append),
            1 => (1u64..15).prop_map(Step::ChangeSize),
            1 => (1u64..120).prop_map(Step::KeepNewest),
            1 => (0u64..80).prop_map(Step::DropBefore),
            2 => (0u64..150, 1u64..90).prop_map(|(start, limit)| Step::ReadFrom(start, limit)),
        ],
        1..25,
    )
}

fn append(archive: &SubscriberArchive<'_>, next: u64, count: u64) {
    let batch: Vec<NewSubscriber> = (next..next + count)
        .map(|n| NewSubscriber::new(subscriber_id(n), delivery_address(n)))
        .collect();
    archive.register_batch(&batch, None).unwrap();
}

fn run(steps: &[Step]) -> Result<(), TestCaseError> {
    let t = TestStore::fast();
    let archive = t.archive();
    archive.start().unwrap();
    let mut next = 1u64;
    let mut oldest = 1u64;
    for step in steps {
        match *step {
            Step::Append(count) => {
                append(&archive, next, count);
                next += count;
            }
            Step::ChangeSize(size) => {
                archive.change_chunk_size(size).unwrap();
            }
            Step::KeepNewest(keep) => {
                let outcome = archive.trim(Trim::KeepNewest(keep)).unwrap();
                prop_assert!(outcome.oldest_sequence >= oldest);
                prop_assert_eq!(outcome.oldest_sequence + outcome.retained_records, next);
                prop_assert!(outcome.retained_records >= keep.min(next - oldest));
                if next > oldest {
                    prop_assert!(outcome.retained_records >= 1, "the open chunk stays");
                }
                oldest = outcome.oldest_sequence;
            }
            Step::DropBefore(offset) => {
                match archive.trim(Trim::DropBefore(oldest + offset)) {
                    Ok(outcome) => {
                        prop_assert!(outcome.oldest_sequence >= oldest);
                        prop_assert!(outcome.oldest_sequence <= oldest + offset);
                        prop_assert_eq!(outcome.oldest_sequence + outcome.retained_records, next);
                        oldest = outcome.oldest_sequence;
                    }
                    // Only a sequence past the start of the open chunk is refused.
                    Err(Error::InvalidInput(message)) => {
                        prop_assert!(message.contains("would drop records of the open chunk"));
                        prop_assert!(offset > 0, "dropping before the oldest is a no-op");
                    }
                    Err(other) => return Err(TestCaseError::fail(format!("{other:?}"))),
                }
            }
            Step::ReadFrom(start, limit) => {
                let start = start.max(1);
                match archive.read_from(start, limit, None) {
                    Ok(read) => {
                        prop_assert!(start >= oldest, "{start} read below {oldest}");
                        let end = (start + limit).min(next).max(start);
                        let got: Vec<u64> = read.subscribers.iter().map(|s| s.sequence).collect();
                        prop_assert_eq!(got, (start..end).collect::<Vec<_>>());
                        prop_assert_eq!(read.next_sequence, end);
                        for subscriber in &read.subscribers {
                            prop_assert_eq!(subscriber, &expected_subscriber(subscriber.sequence));
                        }
                    }
                    Err(Error::PageTrimmed {
                        oldest_sequence, ..
                    }) => {
                        prop_assert!(start < oldest);
                        prop_assert_eq!(oldest_sequence, oldest);
                    }
                    Err(other) => return Err(TestCaseError::fail(format!("{other:?}"))),
                }
            }
        }
    }
    let walked: Vec<u64> = all_subscribers(&archive)
        .iter()
        .map(|s| s.sequence)
        .collect();
    prop_assert_eq!(walked, (oldest..next).collect::<Vec<_>>());
    let summary = LOG
        .verify(&t.stored_values(FLOW_ID))
        .map_err(|v| TestCaseError::fail(v.to_string()))?;
    prop_assert_eq!(summary.records, next - oldest);
    Ok(())
}

#[test]
fn random_histories_of_appends_changes_and_trims_follow_the_rules() {
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    runner.run(&steps(), |steps| run(&steps)).unwrap();
}
