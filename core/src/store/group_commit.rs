//! Group commit: many RPCs, one transaction, one COMMIT (one fsync).
//!
//! # What it promises
//!
//! Concurrent writing RPCs on one store (of any flows) run back to back inside one open
//! write transaction, the *group*, which is made durable by a single COMMIT. Each RPC (a
//! *member*) runs inside its own savepoint, so:
//!
//! - a handler that fails, or whose writes break a limit, rolls back only its own savepoint
//!   and gets its own error at once; the other members commit;
//! - **no caller is answered before the COMMIT holding its writes has returned**. When that
//!   COMMIT fails, every member gets a storage error, nothing of the group is visible, and
//!   the next group starts on a clean transaction. An acknowledged write is therefore
//!   exactly as durable as one committed on its own;
//! - readers outside the group (lock-free RPCs, page reads, other connections and processes)
//!   see committed groups only.
//!
//! # How a call goes through
//!
//! One state mutex per store file (per opened store for PostgreSQL) holds: whether a
//! thread is *executing* (running a member in the open transaction, or committing it), the
//! queue of callers waiting for that turn, the open group (its transaction, members, bytes),
//! and the published outcome of every group whose members have not all read it yet.
//!
//! 1. A caller queues for the executor turn, first come first served, at most the store's
//!    busy timeout; then it fails with a retryable [`Error::LockConflict`] saying what it
//!    waited for. Only the first in line is woken when the turn is released. A caller that
//!    gives up never strands an open group: the first in line never gives up once the turn
//!    is free, and while another thread executes, that thread decides what happens to the
//!    group when it ends (under the state lock).
//! 2. While it queues, a fail-fast lock it needs that is held by a handler still running
//!    fails the call with [`Error::LockConflict`] once that handler has run [`LOCK_GRACE`]
//!    (most handlers end much sooner, so back-to-back callers of one flow queue instead of
//!    colliding). Callers in the queue hold no locks.
//! 3. With the turn, it takes its locks, opens the group's transaction when none is open,
//!    and runs its member in a savepoint. Its locks are released as soon as the savepoint is
//!    (*early lock release*): a later member taking the same lock reads the earlier member's
//!    not yet durable writes, and since both are answered only after the same COMMIT (or the
//!    later one after a later COMMIT), and a failed COMMIT fails both, nobody ever observes
//!    a write that is later lost.
//! 4. Then, still under the state lock, it either hands the turn on (others are waiting,
//!    the group is under its member and byte bounds of [`GroupLimits`], or the optional
//!    commit delay has not passed) and waits for its group's outcome, or it commits the
//!    group itself and publishes the outcome to every member. Waiting for that outcome is
//!    not cut short by the busy timeout (the caller's writes may yet commit); it is bounded
//!    by the group's bounds and the handlers of the members after it.
//!
//! A lock-free RPC ([`Isolation::Shared`]) runs its handler on a snapshot of committed
//! state outside the group. If it wrote anything, its writes join a group as a member that
//! first re-reads, inside the group's transaction, every value the handler read: any change
//! (by a committed or an earlier member's write) fails the call with a retryable
//! [`Error::LockConflict`], so no acknowledged update is silently overwritten.
//!
//! A handler that writes through its own store on its own thread gets an error at once; one
//! that does it from another thread (which then waits for the turn its own handler holds)
//! gets a [`Error::LockConflict`] after the busy timeout whose message says so.
//!
//! # The backend seam
//!
//! The pipeline knows nothing of SQL. A backend implements [`GroupBackend`]: open a write
//! transaction; set, release and roll back to a savepoint; run one member (require the
//! flow, take whatever row locks the backend needs, hand the body a reader on the open
//! transaction, apply its writes); read committed state; commit or roll back the group.
//! SQLite implements it with `BEGIN IMMEDIATE` on one connection; a server database
//! implements it with one transaction per group on one pooled connection, a savepoint per
//! RPC and row locks taken inside the member.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::{FlowRecord, Isolation, LockTable, RpcBody, SnapshotReader, StartOutcome, Write};
use crate::error::{Error, Result};
use crate::metrics::timed_commit;

/// How long a caller queues behind a running handler that holds a lock it needs before it
/// fails with [`Error::LockConflict`].
pub const LOCK_GRACE: Duration = Duration::from_millis(10);

/// Bounds of one group, so that one busy store cannot keep a caller waiting for its COMMIT
/// indefinitely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupLimits {
    /// At most this many RPCs share one COMMIT.
    pub max_members: usize,
    /// A group is committed once its members wrote this many bytes (names plus JSON).
    pub max_bytes: usize,
    /// How long a group stays open for more members when nobody is waiting (like
    /// PostgreSQL's `commit_delay`): a little latency traded for bigger groups. Zero
    /// commits as soon as no other caller waits.
    pub commit_delay: Duration,
}

impl Default for GroupLimits {
    fn default() -> Self {
        GroupLimits {
            max_members: 64,
            max_bytes: 8 * 1024 * 1024,
            commit_delay: Duration::ZERO,
        }
    }
}

/// Counters of one pipeline, for tests and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupStats {
    /// Groups committed (one COMMIT, one fsync at `synchronous=FULL`, each).
    pub commits: u64,
    /// Members (RPCs and flow starts) those groups committed.
    pub members: u64,
    /// Callers waiting for their turn right now.
    pub waiting: usize,
}

/// What a store backend provides to the pipeline: one write transaction per group, one
/// savepoint per member.
pub trait GroupBackend {
    /// An open write transaction (with the connection it runs on).
    type Group: Send;

    /// Where the store lives, for messages.
    fn location(&self) -> String;
    /// How long a caller waits for a turn before a [`Error::LockConflict`].
    fn busy_timeout(&self) -> Duration;
    /// The bounds of a group.
    fn limits(&self) -> GroupLimits;
    /// The in-process fail-fast locks of this store.
    fn lock_table(&self) -> &Arc<LockTable>;

    /// Opens a write transaction for a new group.
    fn begin_group(&self) -> Result<Self::Group>;
    /// Sets the savepoint a member runs in.
    fn savepoint(&self, group: &mut Self::Group) -> Result<()>;
    /// Releases the member's savepoint (its writes stay in the group).
    fn release_savepoint(&self, group: &mut Self::Group) -> Result<()>;
    /// Rolls the member's writes back and releases its savepoint. An error here means the
    /// whole transaction is lost: the group fails.
    fn rollback_to_savepoint(&self, group: &mut Self::Group) -> Result<()>;
    /// Runs one RPC in the open transaction: fails with [`Error::FlowNotFound`] for an
    /// unknown flow, takes whatever row locks the backend needs for `locks`, hands `body` a
    /// reader on the transaction and applies the writes it returns. Returns the bytes
    /// written.
    fn run_member(
        &self,
        group: &mut Self::Group,
        flow_id: &str,
        locks: &[String],
        body: &mut RpcBody<'_>,
    ) -> Result<usize>;
    /// Creates a flow with its initial values in the open transaction, unless it exists.
    fn start_flow_member(
        &self,
        group: &mut Self::Group,
        flow: &FlowRecord,
        initial: &[(String, String)],
    ) -> Result<StartOutcome>;
    /// Runs `body` on a snapshot of committed state (outside any group, on a connection of
    /// its own) and returns the writes it staged, uncommitted. Fails with
    /// [`Error::FlowNotFound`] for an unknown flow.
    fn read_committed(&self, flow_id: &str, body: &mut RpcBody<'_>) -> Result<Vec<Write>>;
    /// Commits the group durably.
    fn commit_group(&self, group: Self::Group) -> Result<()>;
    /// Rolls the group back (it has no members, or it failed).
    fn rollback_group(&self, group: Self::Group);
}

thread_local! {
    /// The pipelines (by address) in whose RPC this thread is now.
    static INSIDE: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// This thread's presence in one pipeline's RPC; dropping it ends it.
struct Inside {
    key: usize,
}

impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|inside| {
            let mut inside = inside.borrow_mut();
            if let Some(at) = inside.iter().rposition(|&key| key == self.key) {
                inside.remove(at);
            }
        });
    }
}

/// The open transaction of a group and what it holds.
struct OpenGroup<G> {
    id: u64,
    tx: G,
    members: usize,
    bytes: usize,
    opened: Instant,
}

/// A group's published result and how many members have yet to read it.
struct Outcome {
    result: Result<()>,
    unread: usize,
}

struct State<G> {
    /// A thread holds the turn: it runs a member or commits.
    busy: bool,
    /// When the member now running started (`None` while committing or idle).
    member_started: Option<Instant>,
    /// The callers waiting for the turn, first come first: a ticket and what wakes it.
    queue: VecDeque<(u64, Arc<Condvar>)>,
    next_ticket: u64,
    /// The open group, while no member runs in it.
    open: Option<OpenGroup<G>>,
    next_id: u64,
    outcomes: HashMap<u64, Outcome>,
}

/// The commit pipeline of one store file (or database): see the module docs.
pub struct GroupCommit<G> {
    state: Mutex<State<G>>,
    /// Signalled when a group's outcome is published.
    settled: Condvar,
    commits: AtomicU64,
    members: AtomicU64,
}

impl<G> std::fmt::Debug for GroupCommit<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit")
            .field("commits", &self.commits.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<G> Default for GroupCommit<G> {
    fn default() -> Self {
        GroupCommit {
            state: Mutex::new(State {
                busy: false,
                member_started: None,
                queue: VecDeque::new(),
                next_ticket: 0,
                open: None,
                next_id: 0,
                outcomes: HashMap::new(),
            }),
            settled: Condvar::new(),
            commits: AtomicU64::new(0),
            members: AtomicU64::new(0),
        }
    }
}

/// What became of one member.
enum Ran<T> {
    /// It ran; its writes are in the group.
    Done(T, usize),
    /// It failed; its savepoint was rolled back, the group goes on.
    Failed(Error),
    /// It failed and took the group's transaction with it.
    Broke(Error),
    /// It panicked; its savepoint was rolled back (or the group broke).
    Panicked(Box<dyn std::any::Any + Send>, bool),
}

impl<G: Send> GroupCommit<G> {
    /// A pipeline with no open group.
    pub fn new() -> Self {
        Self::default()
    }

    /// Groups and members committed so far.
    pub fn stats(&self) -> GroupStats {
        GroupStats {
            commits: self.commits.load(Ordering::Relaxed),
            members: self.members.load(Ordering::Relaxed),
            waiting: self.state.lock().queue.len(),
        }
    }

    /// Runs one RPC through the pipeline (see the module docs).
    pub fn run_rpc<B: GroupBackend<Group = G>>(
        &self,
        backend: &B,
        flow_id: &str,
        isolation: &Isolation,
        body: &mut RpcBody<'_>,
    ) -> Result<()> {
        match isolation {
            Isolation::Exclusive { locks } => self.execute(backend, flow_id, locks, |b, tx| {
                b.run_member(tx, flow_id, locks, body)
                    .map(|bytes| ((), bytes))
            }),
            Isolation::Shared => {
                let (flow, reads, writes) = {
                    // A lock-free handler may read its own store but not write to it.
                    let _inside = self.enter();
                    let mut seen = None;
                    let writes = backend.read_committed(
                        flow_id,
                        &mut |reader: &mut dyn SnapshotReader| {
                            let mut recording = RecordingReader {
                                inner: reader,
                                reads: Vec::new(),
                            };
                            let writes = body(&mut recording)?;
                            seen = Some((recording.inner.flow().clone(), recording.reads));
                            Ok(writes)
                        },
                    )?;
                    let (flow, reads) =
                        seen.ok_or_else(|| Error::storage("the store did not run the RPC body"))?;
                    (flow, reads, writes)
                };
                if writes.is_empty() {
                    return Ok(());
                }
                self.execute(backend, flow_id, &[], |b, tx| {
                    let mut verify = |reader: &mut dyn SnapshotReader| {
                        verify_reads(&flow, &reads, reader)?;
                        Ok(writes.clone())
                    };
                    b.run_member(tx, flow_id, &[], &mut verify)
                        .map(|bytes| ((), bytes))
                })
            }
        }
    }

    /// Starts a flow as a member of a group.
    pub fn start_flow<B: GroupBackend<Group = G>>(
        &self,
        backend: &B,
        flow: &FlowRecord,
        initial: &[(String, String)],
    ) -> Result<StartOutcome> {
        let bytes = initial.iter().map(|(n, v)| n.len() + v.len()).sum();
        self.execute(backend, &flow.flow_id, &[], |b, tx| {
            b.start_flow_member(tx, flow, initial)
                .map(|outcome| (outcome, bytes))
        })
    }

    fn enter(&self) -> Inside {
        let key = self as *const Self as usize;
        INSIDE.with(|inside| inside.borrow_mut().push(key));
        Inside { key }
    }

    fn is_inside(&self) -> bool {
        let key = self as *const Self as usize;
        INSIDE.with(|inside| inside.borrow().contains(&key))
    }

    /// Runs `member` as one member of a group and returns its result once the COMMIT
    /// holding its writes has returned.
    fn execute<B, T>(
        &self,
        backend: &B,
        flow_id: &str,
        locks: &[String],
        member: impl FnOnce(&B, &mut G) -> Result<(T, usize)>,
    ) -> Result<T>
    where
        B: GroupBackend<Group = G>,
    {
        if self.is_inside() {
            return Err(Error::invalid_input(format!(
                "store {}: an RPC handler cannot write to the store it is running in \
                 (start a flow or call a writing RPC) before its own RPC returns",
                backend.location()
            )));
        }
        let _inside = self.enter();
        let table = backend.lock_table();
        let timeout = backend.busy_timeout();
        let deadline = Instant::now() + timeout;
        let waiting = tracing::debug_span!(crate::metrics::SPAN_LOCK_WAIT, flow_id).entered();
        let mut state = self.state.lock();
        if state.busy || !state.queue.is_empty() {
            // First come, first served: a caller arriving now cannot overtake one waiting.
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            let wakes_me = Arc::new(Condvar::new());
            state.queue.push_back((ticket, Arc::clone(&wakes_me)));
            loop {
                if !state.busy && first(&state) == Some(ticket) {
                    break;
                }
                let held = table.held_among(flow_id, locks);
                let wake = match (held.is_empty(), state.member_started) {
                    (false, Some(started)) if Instant::now() >= started + LOCK_GRACE => {
                        self.leave_queue(&mut state, ticket);
                        return Err(LockTable::conflict(flow_id, &held));
                    }
                    (false, Some(started)) => deadline.min(started + LOCK_GRACE),
                    _ => deadline,
                };
                let timed_out = wakes_me.wait_until(&mut state, wake).timed_out();
                let next = !state.busy && first(&state) == Some(ticket);
                if timed_out && !next && Instant::now() >= deadline {
                    self.leave_queue(&mut state, ticket);
                    return Err(Error::LockConflict(format!(
                        "store {}: waited over {timeout:?} for this process's other writers \
                         (a handler still running, or a handler writing to its own store from \
                         another thread, which cannot work); retry",
                        backend.location()
                    )));
                }
            }
            state.queue.pop_front();
        }
        state.busy = true;
        state.member_started = Some(Instant::now());
        let reserved = match state.open.is_none() {
            true => {
                state.next_id += 1;
                Some(state.next_id)
            }
            false => None,
        };
        let open = state.open.take();
        drop(state);

        let guard = match table.try_lock_all(flow_id, locks) {
            Ok(guard) => guard,
            Err(error) => return Err(self.give_back(open, error)),
        };
        drop(waiting);
        let mut open = match (open, reserved) {
            (Some(open), _) => open,
            (None, id) => match catch_unwind(AssertUnwindSafe(|| backend.begin_group()))
                .unwrap_or_else(|_| Err(Error::storage("the store panicked opening a transaction")))
            {
                Ok(tx) => OpenGroup {
                    id: id.unwrap_or_default(),
                    tx,
                    members: 0,
                    bytes: 0,
                    opened: Instant::now(),
                },
                Err(error) => {
                    drop(guard);
                    return Err(self.give_back(None, error));
                }
            },
        };
        let ran = run_in_savepoint(backend, &mut open.tx, member);
        // Early lock release: the member's writes are in the group, not yet durable.
        drop(guard);

        let mut state = self.state.lock();
        state.member_started = None;
        let limits = backend.limits();
        let (mine, panic) = match ran {
            Ran::Done(value, bytes) => {
                open.members += 1;
                open.bytes += bytes;
                (Ok(value), None)
            }
            Ran::Failed(error) => (Err(error), None),
            Ran::Broke(error) => {
                let retryable = matches!(error, Error::LockConflict(_));
                self.fail_group(backend, state, open, &error.to_string(), retryable);
                return Err(error);
            }
            Ran::Panicked(payload, broke) => {
                if broke {
                    self.fail_group(backend, state, open, "a handler panicked", false);
                    resume_unwind(payload);
                }
                (
                    Err(Error::storage("a handler panicked inside the store")),
                    Some(payload),
                )
            }
        };
        let full = open.members >= limits.max_members || open.bytes >= limits.max_bytes;
        let delaying = open.members > 0 && open.opened.elapsed() < limits.commit_delay;
        let id = open.id;
        let member = mine.is_ok();
        if !full && (!state.queue.is_empty() || delaying) {
            // Hand the turn on; the group stays open for the next member.
            state.open = Some(open);
            state.busy = false;
            wake_next(&state);
            if let Some(payload) = panic {
                drop(state);
                resume_unwind(payload);
            }
            let value = mine?;
            self.wait_outcome(backend, state, id)?;
            return Ok(value);
        }
        let readers = open.members - usize::from(member);
        let committed = self.finish(backend, state, open, readers);
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
        let value = mine?;
        committed.map(|()| value)
    }

    /// Rolls back a group whose transaction was lost (still holding the turn), fails its
    /// members that wait, and gives the turn back. When the backend said the loss is
    /// retryable (a server connection cut before the COMMIT was sent), so is their error.
    fn fail_group<B: GroupBackend<Group = G>>(
        &self,
        backend: &B,
        state: MutexGuard<'_, State<G>>,
        open: OpenGroup<G>,
        cause: &str,
        retryable: bool,
    ) {
        drop(state);
        backend.rollback_group(open.tx);
        let message = format!(
            "store {}: the group transaction this call was part of was lost ({cause}); \
             nothing of it was written",
            backend.location()
        );
        let lost = match retryable {
            true => Error::LockConflict(format!("{message}; retry")),
            false => Error::storage(message),
        };
        let mut state = self.state.lock();
        self.publish(&mut state, open.id, open.members, Err(lost));
        state.busy = false;
        wake_next(&state);
    }

    /// Takes a caller that gives up out of the queue; the next one may now be first.
    fn leave_queue(&self, state: &mut State<G>, ticket: u64) {
        state.queue.retain(|(waiting, _)| *waiting != ticket);
        wake_next(state);
    }

    /// Gives the turn back without running a member (the open group, if any, goes back).
    fn give_back(&self, open: Option<OpenGroup<G>>, error: Error) -> Error {
        let mut state = self.state.lock();
        state.member_started = None;
        state.open = open;
        state.busy = false;
        wake_next(&state);
        error
    }

    /// Commits (or, with no members, rolls back) the group while holding the turn, and
    /// publishes the outcome to `readers` members. Returns the outcome.
    fn finish<B: GroupBackend<Group = G>>(
        &self,
        backend: &B,
        state: MutexGuard<'_, State<G>>,
        open: OpenGroup<G>,
        readers: usize,
    ) -> Result<()> {
        drop(state);
        let (members, tx) = (open.members, open.tx);
        // A panicking backend must not keep the turn forever: it fails the group instead.
        let ended = catch_unwind(AssertUnwindSafe(|| {
            if members == 0 {
                backend.rollback_group(tx);
                Ok(())
            } else {
                timed_commit(members, || backend.commit_group(tx))
            }
        }));
        let (ended, panic) = match ended {
            Ok(ended) => (ended, None),
            Err(payload) => (
                Err(Error::storage("the store panicked while committing")),
                Some(payload),
            ),
        };
        let result = if members == 0 {
            ended
        } else {
            // A COMMIT the backend knows did not take effect and may be retried (a server
            // refused it) stays a lock conflict; one whose outcome is unknown is a storage
            // error saying so.
            let committed = ended.map_err(|error| match error {
                Error::Storage(_) | Error::StorageFull(_) | Error::LockConflict(_) => error,
                other => Error::storage(format!(
                    "store {}: committing a group of {} calls failed: {other}; nothing of it was written",
                    backend.location(),
                    members
                )),
            });
            if committed.is_ok() {
                self.commits.fetch_add(1, Ordering::Relaxed);
                self.members.fetch_add(members as u64, Ordering::Relaxed);
            }
            committed
        };
        let mut state = self.state.lock();
        self.publish(&mut state, open.id, readers, result.clone());
        state.busy = false;
        wake_next(&state);
        drop(state);
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
        result
    }

    fn publish(&self, state: &mut State<G>, id: u64, readers: usize, result: Result<()>) {
        if readers > 0 {
            state.outcomes.insert(
                id,
                Outcome {
                    result,
                    unread: readers,
                },
            );
            self.settled.notify_all();
        }
    }

    /// Waits until the group `id` is committed or failed. If nobody else is left to commit
    /// it (its commit delay ran out while no one held the turn), commits it.
    fn wait_outcome<'s, B: GroupBackend<Group = G>>(
        &'s self,
        backend: &B,
        mut state: MutexGuard<'s, State<G>>,
        id: u64,
    ) -> Result<()> {
        loop {
            if let Some(outcome) = state.outcomes.get_mut(&id) {
                let result = outcome.result.clone();
                outcome.unread -= 1;
                if outcome.unread == 0 {
                    state.outcomes.remove(&id);
                }
                return result;
            }
            let mine_open = state.open.as_ref().filter(|open| open.id == id);
            let due = mine_open.map(|open| open.opened + backend.limits().commit_delay);
            match due {
                Some(due) if !state.busy && state.queue.is_empty() && Instant::now() >= due => {
                    let open = state.open.take().filter(|open| open.id == id);
                    let Some(open) = open else { continue };
                    state.busy = true;
                    let readers = open.members;
                    // The outcome is read back from the map on the next pass.
                    let _ = self.finish(backend, state, open, readers);
                    state = self.state.lock();
                }
                Some(due) => {
                    let wake = due.max(Instant::now() + Duration::from_millis(1));
                    self.settled.wait_until(&mut state, wake);
                }
                None => {
                    // A safety net only: the outcome is always published with a signal.
                    self.settled
                        .wait_for(&mut state, Duration::from_millis(100));
                }
            }
        }
    }
}

/// The ticket of the first caller in line.
fn first<G>(state: &State<G>) -> Option<u64> {
    state.queue.front().map(|(ticket, _)| *ticket)
}

/// Wakes the first caller in line (only it may take the turn next).
fn wake_next<G>(state: &State<G>) {
    if let Some((_, wakes)) = state.queue.front() {
        wakes.notify_one();
    }
}

/// Runs `member` in a savepoint of the open transaction.
fn run_in_savepoint<B, T>(
    backend: &B,
    tx: &mut B::Group,
    member: impl FnOnce(&B, &mut B::Group) -> Result<(T, usize)>,
) -> Ran<T>
where
    B: GroupBackend,
{
    if let Err(error) = backend.savepoint(tx) {
        return Ran::Broke(error);
    }
    let ran = catch_unwind(AssertUnwindSafe(|| {
        let (value, bytes) = member(backend, tx)?;
        backend.release_savepoint(tx)?;
        Ok((value, bytes))
    }));
    match ran {
        Ok(Ok((value, bytes))) => Ran::Done(value, bytes),
        Ok(Err(error)) => match backend.rollback_to_savepoint(tx) {
            Ok(()) => Ran::Failed(error),
            Err(_) => Ran::Broke(error),
        },
        Err(payload) => {
            let broke = backend.rollback_to_savepoint(tx).is_err();
            Ran::Panicked(payload, broke)
        }
    }
}

/// One read of a lock-free handler: the names asked for and the values found.
type Read = (Vec<String>, Vec<(String, String)>);

/// A reader that remembers what a lock-free handler read.
struct RecordingReader<'r> {
    inner: &'r mut dyn SnapshotReader,
    reads: Vec<Read>,
}

impl SnapshotReader for RecordingReader<'_> {
    fn flow(&self) -> &FlowRecord {
        self.inner.flow()
    }

    fn read(&mut self, physical_names: &[String]) -> Result<Vec<(String, String)>> {
        let found = self.inner.read(physical_names)?;
        self.reads.push((physical_names.to_vec(), found.clone()));
        Ok(found)
    }
}

/// Fails with a retryable [`Error::LockConflict`] unless every value a lock-free handler
/// read is unchanged in the group's transaction.
fn verify_reads(flow: &FlowRecord, reads: &[Read], reader: &mut dyn SnapshotReader) -> Result<()> {
    let changed = |what: &str| {
        Error::LockConflict(format!(
            "flow {:?}: {what} changed after this lock-free RPC read it and before its writes \
             could commit; nothing was written; retry",
            flow.flow_id
        ))
    };
    if reader.flow().run_id != flow.run_id {
        return Err(changed("the flow's run"));
    }
    for (names, found) in reads {
        let now = reader.read(names)?;
        if &now != found {
            let differs: Vec<&str> = names
                .iter()
                .filter(|name| {
                    let then = found.iter().find(|(n, _)| n == *name);
                    let now = now.iter().find(|(n, _)| n == *name);
                    then != now
                })
                .map(String::as_str)
                .collect();
            return Err(changed(&differs.join(", ")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend that logs every step of the seam and keeps values in memory.
    #[derive(Default)]
    struct Logged {
        locks: Arc<LockTable>,
        steps: Mutex<Vec<String>>,
        committed: Mutex<Vec<Write>>,
    }

    /// A group: the writes of released members, and those of the member now running.
    #[derive(Default)]
    struct Staged {
        kept: Vec<Write>,
        running: Vec<Write>,
    }

    impl Logged {
        fn step(&self, step: impl Into<String>) {
            self.steps.lock().push(step.into());
        }
    }

    struct NoReads(FlowRecord);

    impl SnapshotReader for NoReads {
        fn flow(&self) -> &FlowRecord {
            &self.0
        }
        fn read(&mut self, _: &[String]) -> Result<Vec<(String, String)>> {
            Ok(Vec::new())
        }
    }

    fn record(flow_id: &str) -> FlowRecord {
        FlowRecord {
            flow_id: flow_id.to_owned(),
            flow_type: "T".to_owned(),
            run_id: "r".to_owned(),
        }
    }

    impl GroupBackend for Logged {
        type Group = Staged;
        fn location(&self) -> String {
            "memory".to_owned()
        }
        fn busy_timeout(&self) -> Duration {
            Duration::from_secs(5)
        }
        fn limits(&self) -> GroupLimits {
            GroupLimits::default()
        }
        fn lock_table(&self) -> &Arc<LockTable> {
            &self.locks
        }
        fn begin_group(&self) -> Result<Staged> {
            self.step("begin");
            Ok(Staged::default())
        }
        fn savepoint(&self, _: &mut Staged) -> Result<()> {
            self.step("savepoint");
            Ok(())
        }
        fn release_savepoint(&self, group: &mut Staged) -> Result<()> {
            self.step("release");
            let running = std::mem::take(&mut group.running);
            group.kept.extend(running);
            Ok(())
        }
        fn rollback_to_savepoint(&self, group: &mut Staged) -> Result<()> {
            self.step("rollback to savepoint");
            group.running.clear();
            Ok(())
        }
        fn run_member(
            &self,
            group: &mut Staged,
            flow_id: &str,
            locks: &[String],
            body: &mut RpcBody<'_>,
        ) -> Result<usize> {
            self.step(format!(
                "member {flow_id}, {} locks held",
                self.locks.held_count()
            ));
            assert_eq!(self.locks.held_among(flow_id, locks), locks);
            let writes = body(&mut NoReads(record(flow_id)))?;
            group.running.extend(writes);
            Ok(1)
        }
        fn start_flow_member(
            &self,
            _: &mut Staged,
            _: &FlowRecord,
            _: &[(String, String)],
        ) -> Result<StartOutcome> {
            Ok(StartOutcome::Started)
        }
        fn read_committed(&self, flow_id: &str, body: &mut RpcBody<'_>) -> Result<Vec<Write>> {
            self.step("read committed");
            body(&mut NoReads(record(flow_id)))
        }
        fn commit_group(&self, group: Staged) -> Result<()> {
            self.step("commit");
            self.committed.lock().extend(group.kept);
            Ok(())
        }
        fn rollback_group(&self, _: Staged) {
            self.step("rollback");
        }
    }

    fn write(name: &str) -> Vec<Write> {
        vec![(name.to_owned(), Some("1".to_owned()))]
    }

    #[test]
    fn a_lone_call_runs_in_a_savepoint_of_its_own_group_and_releases_its_locks() {
        let backend = Logged::default();
        let pipeline = GroupCommit::<Staged>::new();
        let locks = Isolation::Exclusive {
            locks: vec!["a".to_owned()],
        };
        pipeline
            .run_rpc(&backend, "f", &locks, &mut |_| Ok(write("a")))
            .unwrap();
        let failed = pipeline.run_rpc(&backend, "f", &locks, &mut |_| {
            Err(Error::handler("refused"))
        });
        assert_eq!(failed, Err(Error::handler("refused")));
        assert_eq!(
            *backend.steps.lock(),
            [
                "begin",
                "savepoint",
                "member f, 1 locks held",
                "release",
                "commit",
                "begin",
                "savepoint",
                "member f, 1 locks held",
                "rollback to savepoint",
                "rollback",
            ]
        );
        assert_eq!(*backend.committed.lock(), write("a"));
        assert_eq!(backend.locks.held_count(), 0);
        let stats = pipeline.stats();
        assert_eq!((stats.commits, stats.members, stats.waiting), (1, 1, 0));
    }

    #[test]
    fn a_lock_free_call_reads_committed_state_and_joins_a_group_only_to_write() {
        let backend = Logged::default();
        let pipeline = GroupCommit::<Staged>::new();
        pipeline
            .run_rpc(&backend, "f", &Isolation::Shared, &mut |_| Ok(Vec::new()))
            .unwrap();
        pipeline
            .run_rpc(&backend, "f", &Isolation::Shared, &mut |_| Ok(write("m")))
            .unwrap();
        assert_eq!(
            *backend.steps.lock(),
            [
                "read committed",
                "read committed",
                "begin",
                "savepoint",
                "member f, 0 locks held",
                "release",
                "commit",
            ]
        );
        assert_eq!(*backend.committed.lock(), write("m"));
    }
}
