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
//! One state mutex per store file (per lane for PostgreSQL, whose lanes the stores opened
//! in one process with one URL share) holds: whether a thread holds the *turn* (runs
//! members in the open transaction, or commits it), the queue of callers waiting, and the
//! open group while nobody holds the turn (its transaction, members, bytes, and where to
//! answer each member).
//!
//! 1. A caller finding the turn free takes it. Otherwise it queues, first come first
//!    served, with its member lent to the queue, and sleeps until it is answered or handed
//!    the turn, at most the store's busy timeout *while its member is still in the queue*;
//!    then it takes it out and fails with a retryable [`Error::LockConflict`] saying what
//!    it waited for. Once a turn holder has taken its member out, it waits for the answer
//!    however long (its writes may yet commit), so it never returns while its member may
//!    still run. The turn is never left free while callers queue: it is handed to the first
//!    in line directly, so a caller that gives up never strands an open group.
//! 2. While it queues, a fail-fast lock it needs that is held by a handler still running
//!    fails the call with [`Error::LockConflict`] once that handler has run [`LOCK_GRACE`]
//!    (most handlers end much sooner, so back-to-back callers of one flow queue instead of
//!    colliding). Callers in the queue hold no locks.
//! 3. The turn holder takes its own member's locks, opens the group's transaction when none
//!    is open and runs its own member, then the queued callers' members, first in line
//!    first, back to back (*flat combining*, below), each after taking its locks. Each
//!    member runs in a savepoint. The locks are released as soon as the savepoint is (*early lock release*):
//!    a later member taking the same lock reads the earlier member's not yet durable
//!    writes, and since both are answered only after the same COMMIT (or the later one after
//!    a later COMMIT), and a failed COMMIT fails both, nobody ever observes a write that is
//!    later lost. A member that fails (or panics) is answered at once; its savepoint is
//!    rolled back and the group goes on.
//! 4. When the queue is empty, or the group reaches its member or byte bound of
//!    [`GroupLimits`], it commits the group, hands the turn to the first in line (or frees
//!    it) and answers every member. Just before the COMMIT it forewarns the members (on
//!    SQLite), so that they watch for their answers instead of sleeping through the COMMIT
//!    and each needing a wake-up after it (`group_commit/slot.rs`). With a commit delay
//!    that has not passed and nobody waiting, it leaves the group open instead and waits; a
//!    caller arriving meanwhile takes the turn and the group on, and whoever waits commits
//!    it once the delay has passed and nobody holds the turn. When the turn holder's own
//!    member failed while others queue, it hands them the turn with the group open and
//!    returns its error at once. So a caller waits at most for the group before its own and
//!    its own (both bounded).
//!
//! # Why the turn holder runs the queued members (flat combining)
//!
//! Before, each member ran on its caller's thread and the turn passed from thread to
//! thread: two wake-ups per member (its turn, then its group's outcome), one of them on
//! the path every member waits behind. On a disk that fsyncs in about 0.1 ms the appends
//! were bound by that, not by fsyncs: with 16 appending threads at `synchronous=FULL` the
//! kernel's scheduler (`finish_task_switch`, `try_to_wake_up`: about a third of all CPU
//! samples, `perf record -g`) outweighed the members' own work, and the process used
//! 0.6 to 0.75 of a core while 10 members shared a COMMIT. Now one thread runs the queued
//! members back to back with nothing between them but the state lock, and each caller
//! sleeps once, until it is answered (see bench/notes/6-concurrency.md for the figures).
//! Cheaper hand-offs (waking the next caller early, spinning) would still put a thread
//! switch between members, and spinning steals the core the members need on a busy
//! machine; cheaper per-member SQL is already done (statements prepared once per
//! connection, flows remembered).
//!
//! What it takes for a member to run on another caller's thread:
//!
//! - The member and the RPC body it holds are `Send` ([`RpcBody`] is); the caller's stack
//!   frame owns them and lends them to the queue through the one `unsafe` lifetime
//!   erasure in this module, sound because the caller does not return (nor unwind) before
//!   its member is out of the queue and no longer runs (a guard waits for that even on a
//!   panic). Its result stays in that frame.
//! - The handler runs inside its caller's `tracing` span and with its caller's default
//!   subscriber, so its spans land where they would have on its own thread.
//! - The reentrancy check stays: the turn holder is inside this pipeline, so a handler
//!   writing to its own store is refused at once on whichever thread it runs.
//! - A panic in a member goes back to its own caller and resumes there; a panic outside
//!   the member's savepoint fails the group (its transaction is in doubt). Either way the
//!   turn holder answers everyone and hands the turn on.
//! - A handler must not depend on its calling thread: not on thread-locals set by the
//!   caller, nor on a lock the calling thread holds while it calls (the bindings release
//!   Python's GIL before every store call and take it inside the handler, on whichever
//!   thread that is).
//!
//! A caller holding several independent calls at once (a binding's worker thread that took
//! every queued call: [`GroupCommit::run_rpcs`]) queues their members together, first in
//! line first, and then waits for each outcome in order, taking the turn when it is handed
//! to one of them: its calls join one group with no thread woken between them, and each
//! keeps every rule of a call on its own.
//!
//! A lock-free RPC ([`Isolation::Shared`]) runs its handler on a snapshot of committed
//! state outside the group. If it wrote anything, its writes join a group as a member that
//! first re-reads, inside the group's transaction, every value the handler read: any change
//! (by a committed or an earlier member's write) fails the call with a retryable
//! [`Error::LockConflict`], so no acknowledged update is silently overwritten
//! (`group_commit/lock_free.rs`).
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
//! A backend for which opening a member costs a round trip may also open the members
//! queued behind the next one together, before it runs ([`GroupBackend::open_ahead`]).
//! SQLite implements it with `BEGIN IMMEDIATE` on one connection; a server database
//! implements it with one transaction per group on one pooled connection, a savepoint per
//! RPC and row locks taken inside the member.

mod lock_free;
mod slot;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sync::{Mutex, MutexGuard};

use super::{
    FlowRecord, Isolation, LockGuard, LockTable, ReplaceRun, RpcBody, RpcCall, SnapshotReader,
    StartOutcome, Write,
};
use crate::error::{Error, Result};
use crate::metrics::timed_commit;
use lock_free::{verify_reads, RecordingReader};
use slot::{forewarn, Reply, Slot};

/// Members of a group are forewarned of their answer (`slot.rs`) while the store's recent
/// COMMITs took at most this long on average.
const FOREWARN_COMMITS_UP_TO: Duration = Duration::from_micros(500);

/// The shortest watch a forewarned member keeps for its answer.
const SHORTEST_WATCH: Duration = Duration::from_micros(50);

/// The longest watch a forewarned member keeps for its answer.
const LONGEST_WATCH: Duration = Duration::from_millis(1);

/// How long a caller queues behind a running handler that holds a lock it needs before it
/// fails with [`Error::LockConflict`].
pub const LOCK_GRACE: Duration = Duration::from_millis(10);

/// How often a member of a parked group whose commit delay has passed, while another thread
/// holds the turn, looks again whether it falls to it to commit the group.
const PARKED_RECHECK: Duration = Duration::from_millis(1);

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
    /// Whether the members of a group about to commit are forewarned of their answers
    /// (`group_commit/slot.rs`): worth it where the COMMIT waits on local I/O with the
    /// CPUs idle (SQLite); not where it is a round trip to a server that may need those
    /// CPUs itself (PostgreSQL on the same host).
    fn forewarns_members(&self) -> bool {
        true
    }

    /// Whether the member about to run (of flow `flow_id`, taking `locks`) would cost the
    /// backend a round trip to open: then the turn holder offers it, with the members
    /// queued behind it, to [`GroupBackend::open_ahead`] first.
    fn wants_ahead(&self, _group: &Self::Group, _flow_id: &str, _locks: &[String]) -> bool {
        false
    }
    /// Opens, in one round trip, what the members about to run (`upcoming`: each one's flow,
    /// locks and reads, in the order they run) need of a server, so that each then opens on
    /// what the group holds. Best effort and outside any member's savepoint: a member it
    /// did not open opens by itself, and a failure that loses the transaction is reported
    /// by the next member's run.
    fn open_ahead(&self, _group: &mut Self::Group, _upcoming: &[Upcoming]) {}

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
    /// unknown flow, takes whatever row locks the backend needs for the opening's locks
    /// (the names it will read first, and the AttributeMaps `maps` it will load whole, may
    /// be read with them), hands `body` a reader on the transaction and applies the writes
    /// it returns. Returns the bytes written.
    fn run_member(
        &self,
        group: &mut Self::Group,
        flow_id: &str,
        opening: Opening<'_>,
        maps: &[String],
        body: &mut RpcBody<'_>,
    ) -> Result<usize>;
    /// Creates a flow with its initial values in the open transaction, or replaces the run
    /// of the existing one when `replace` says so ([`super::Store::start_flow`]).
    fn start_flow_member(
        &self,
        group: &mut Self::Group,
        flow: &FlowRecord,
        initial: &[(String, String)],
        replace: &ReplaceRun<'_>,
    ) -> Result<StartOutcome>;
    /// Runs `body` on a snapshot of committed state (outside any group, on a connection of
    /// its own) and returns the writes it staged, uncommitted. `ahead` holds the names the
    /// body will read first and the AttributeMaps it will load whole
    /// ([`Isolation::Shared`]), which the backend may read with the flow. Fails with
    /// [`Error::FlowNotFound`] for an unknown flow.
    fn read_committed(
        &self,
        flow_id: &str,
        ahead: (&[String], &[String]),
        body: &mut RpcBody<'_>,
    ) -> Result<Vec<Write>>;
    /// Commits the group durably.
    fn commit_group(&self, group: Self::Group) -> Result<()>;
    /// Rolls the group back (it has no members, or it failed).
    fn rollback_group(&self, group: Self::Group);
}

/// What a member opens with: the names it locks, and the names it will read first, locked
/// or not ([`Isolation::Exclusive`]).
pub type Opening<'a> = (&'a [String], &'a [String]);

/// A call of a batch run as a member: its place in the batch, its flow, its opening, the
/// AttributeMaps it loads whole and its body.
type Member<'m, 'b> = (
    usize,
    &'m str,
    Opening<'m>,
    &'m [String],
    &'m mut RpcBody<'b>,
);

/// A member about to run, as [`GroupBackend::open_ahead`] is offered it: its flow, the
/// names it locks and the names it will read.
pub type Upcoming = (String, Vec<String>, Vec<String>);

/// `opening` of flow `flow_id`, owned.
fn upcoming(flow_id: &str, (locks, reads): Opening<'_>) -> Upcoming {
    (flow_id.to_owned(), locks.to_vec(), reads.to_vec())
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
    tx: G,
    members: usize,
    bytes: usize,
    opened: Instant,
    /// Where to answer each member once the group's COMMIT has returned.
    replies: Vec<Arc<Slot>>,
}

/// One member's work as the turn holder runs it: take the call's locks (unless given them),
/// run it in a savepoint of the group's transaction, release the locks. Its value stays with
/// its caller.
type JobFn<'a, G> = dyn FnMut(&mut G, Option<LockGuard>) -> Ran<()> + Send + 'a;

/// The member of a caller waiting in the queue, lent from that caller's stack to whichever
/// thread holds the turn.
struct Job<G: 'static>(&'static mut JobFn<'static, G>);

impl<G: 'static> Job<G> {
    /// Lends `job` to the queue.
    ///
    /// # Safety
    ///
    /// The caller must keep `job` alive and untouched until the returned `Job` has been
    /// dropped, and until the thread that took it out of the queue (if any) has finished
    /// running it: until its caller has either taken it out of the queue itself or received
    /// a [`Reply`] (see [`Queued`], which ensures it even while unwinding).
    unsafe fn lend<'a>(job: &'a mut JobFn<'a, G>) -> Self {
        // SAFETY: only the lifetime changes (same fat pointer); the caller promises the
        // borrow outlives every use (see above). `Send` is checked on the real type.
        Job(unsafe {
            std::mem::transmute::<&'a mut JobFn<'a, G>, &'static mut JobFn<'static, G>>(job)
        })
    }
}

/// A caller waiting in the queue for the turn (or for a turn holder to run its member).
struct Waiting<G: 'static> {
    ticket: u64,
    slot: Arc<Slot>,
    job: Job<G>,
    /// The flow, the locks the job takes and the names it reads
    /// ([`GroupBackend::open_ahead`]).
    opens: Upcoming,
    /// The caller's span and `tracing` subscriber, so that its handler's spans land where
    /// they would on its own thread.
    span: tracing::Span,
    dispatch: tracing::Dispatch,
}

struct State<G: 'static> {
    /// A thread holds the turn: it runs members or commits. While nobody holds it, the
    /// queue is empty (the turn is handed to the first in line directly).
    busy: bool,
    /// When the member now running started (`None` while committing or idle).
    member_started: Option<Instant>,
    /// The callers waiting, first come first.
    queue: VecDeque<Waiting<G>>,
    next_ticket: u64,
    /// The open group, while nobody runs members in it (its commit delay has not passed).
    open: Option<OpenGroup<G>>,
}

/// The commit pipeline of one store file (or database): see the module docs.
pub struct GroupCommit<G: 'static> {
    state: Mutex<State<G>>,
    commits: AtomicU64,
    members: AtomicU64,
    /// The recent COMMITs' latency in nanoseconds (a moving average), which bounds how
    /// long forewarned members watch for their answer.
    commit_nanos: AtomicU64,
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
            }),
            commits: AtomicU64::new(0),
            members: AtomicU64::new(0),
            commit_nanos: AtomicU64::new(0),
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

/// How the thread holding the turn leaves a group.
enum Leave {
    /// Commit it now.
    Commit,
    /// Leave it open for its commit delay.
    Park,
    /// Hand it, open, to the first in line (its own member failed).
    HandOver,
}

/// A caller's job lent to the queue; dropping it without [`Queued::settled`] (a panic
/// while waiting) waits until no other thread can still run the job.
struct Queued<'p, G: 'static> {
    pipeline: &'p GroupCommit<G>,
    ticket: u64,
    slot: &'p Slot,
    settled: bool,
}

impl<G> Queued<'_, G> {
    fn settled(mut self) {
        self.settled = true;
    }
}

impl<G> Drop for Queued<'_, G> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let mut state = self.pipeline.state.lock();
        let ticket = self.ticket;
        if let Some(at) = state.queue.iter().position(|w| w.ticket == ticket) {
            state.queue.remove(at);
            return;
        }
        drop(state);
        // Taken out by a turn holder: it answers once the job no longer runs. A turn handed
        // here is handed on.
        if let Some(Reply::Turn) = self.slot.wait(None) {
            let mut state = self.pipeline.state.lock();
            let next = release_turn(&mut state);
            drop(state);
            if let Some(next) = next {
                next.send(Reply::Turn);
            }
        }
    }
}

impl<G: Send + 'static> GroupCommit<G> {
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
    pub fn run_rpc<B: GroupBackend<Group = G> + Sync>(
        &self,
        backend: &B,
        flow_id: &str,
        isolation: &Isolation,
        body: &mut RpcBody<'_>,
    ) -> Result<()> {
        match isolation {
            Isolation::Exclusive { locks, reads, maps } => {
                self.execute(backend, flow_id, (locks, reads), |b, tx| {
                    b.run_member(tx, flow_id, (locks, reads), maps, body)
                        .map(|bytes| ((), bytes))
                })
            }
            Isolation::Shared { reads: ahead, maps } => {
                let (flow, reads, writes) = {
                    // A lock-free handler may read its own store but not write to it.
                    let _inside = self.enter();
                    let mut seen = None;
                    let writes = backend.read_committed(
                        flow_id,
                        (ahead, maps),
                        &mut |reader: &mut dyn SnapshotReader| {
                            let mut recording = RecordingReader::new(reader);
                            let writes = body(&mut recording)?;
                            seen = Some(recording.into_reads());
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
                self.execute(backend, flow_id, (&[], ahead), |b, tx| {
                    let mut verify = |reader: &mut dyn SnapshotReader| {
                        verify_reads(&flow, &reads, reader)?;
                        Ok(writes.clone())
                    };
                    // The planned reads are what the handler read: read again with the flow.
                    b.run_member(tx, flow_id, (&[], ahead), maps, &mut verify)
                        .map(|bytes| ((), bytes))
                })
            }
        }
    }

    /// Runs a batch of independent RPCs (see [`super::Store::run_rpcs`]): their members
    /// are queued together, first in line first, so the turn holder (this thread, when the
    /// turn is free) runs them back to back in one group, and this thread then waits once
    /// for each outcome in order, taking the turn where it is handed to one of them. Each
    /// member keeps every rule of a call on its own (its savepoint, its locks, its error,
    /// its busy timeout while queued). Lock-free calls run first, one by one. A panic
    /// outside a handler resumes once every call of the batch is settled.
    pub fn run_rpcs<B: GroupBackend<Group = G> + Sync>(
        &self,
        backend: &B,
        calls: &mut [RpcCall<'_, '_>],
    ) -> Vec<Result<()>> {
        let mut results: Vec<Option<Result<()>>> = calls.iter().map(|_| None).collect();
        let mut members = Vec::new();
        for (at, call) in calls.iter_mut().enumerate() {
            match call.isolation {
                Isolation::Exclusive { locks, reads, maps } if !self.is_inside() => {
                    let opening = (locks.as_slice(), reads.as_slice());
                    members.push((at, call.flow_id, opening, maps.as_slice(), &mut *call.body));
                }
                isolation => {
                    results[at] = Some(self.run_rpc(backend, call.flow_id, isolation, call.body));
                }
            }
        }
        if !members.is_empty() {
            let _inside = self.enter();
            for (at, outcome) in self.run_members(backend, members) {
                results[at] = Some(outcome);
            }
        }
        results
            .into_iter()
            .map(|result| result.unwrap_or_else(|| Err(Error::storage("the call was not run"))))
            .collect()
    }

    /// Queues `members` (the first takes the turn when it is free) and settles each in
    /// order; returns `(index, outcome)` pairs.
    fn run_members<'m, B: GroupBackend<Group = G> + Sync>(
        &self,
        backend: &B,
        members: Vec<Member<'m, '_>>,
    ) -> Vec<(usize, Result<()>)> {
        let keys: Vec<(usize, &str, Opening<'_>)> = members
            .iter()
            .map(|(at, flow_id, opening, _, _)| (*at, *flow_id, *opening))
            .collect();
        let table = backend.lock_table();
        let mut jobs: Vec<_> = members
            .into_iter()
            .map(|(_, flow_id, (locks, reads), maps, body)| {
                move |tx: &mut G, taken: Option<LockGuard>| -> Ran<()> {
                    let guard = match taken.map_or_else(|| table.try_lock_all(flow_id, locks), Ok) {
                        Ok(guard) => guard,
                        Err(error) => return Ran::Failed(error),
                    };
                    let ran = run_in_savepoint(backend, tx, |b, tx| {
                        b.run_member(tx, flow_id, (locks, reads), maps, &mut *body)
                            .map(|bytes| ((), bytes))
                    });
                    // Early lock release, as for a call on its own.
                    drop(guard);
                    ran
                }
            })
            .collect();
        let mut jobs: Vec<&mut JobFn<'_, G>> = jobs
            .iter_mut()
            .map(|job| job as &mut JobFn<'_, G>)
            .collect();
        let slots: Vec<Arc<Slot>> = keys.iter().map(|_| Arc::new(Slot::unwarned())).collect();
        let mut state = self.state.lock();
        let holds = !state.busy && state.queue.is_empty();
        state.busy |= holds;
        let mut queued = Vec::new();
        for (m, job) in jobs.iter_mut().enumerate().skip(usize::from(holds)) {
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            state.queue.push_back(Waiting {
                ticket,
                slot: Arc::clone(&slots[m]),
                // SAFETY: as in `take_part`: each `Queued` below is settled only once its
                // job is out of the queue and no longer runs, and this frame neither
                // returns nor touches the job before (a panic while settling is caught
                // below; one elsewhere drops the guards, which wait for the same).
                job: unsafe { Job::lend(&mut **job) },
                opens: upcoming(keys[m].1, keys[m].2),
                span: tracing::Span::current(),
                dispatch: tracing::dispatcher::get_default(tracing::Dispatch::clone),
            });
            queued.push((
                m,
                Queued {
                    pipeline: self,
                    ticket,
                    slot: &slots[m],
                    settled: false,
                },
            ));
        }
        drop(state);
        let mut outcomes = Vec::with_capacity(keys.len());
        let mut panic = None;
        let mut settle = |m: usize, outcome: std::thread::Result<Result<()>>| {
            let outcome = outcome.unwrap_or_else(|payload| {
                panic.get_or_insert(payload);
                Err(Error::storage("the store panicked running the call"))
            });
            outcomes.push((keys[m].0, outcome));
        };
        if holds {
            let (_, flow_id, opening) = keys[0];
            let job = &mut *jobs[0];
            settle(
                0,
                catch_unwind(AssertUnwindSafe(|| {
                    self.hold_turn(backend, flow_id, opening, &slots[0], job)
                })),
            );
        }
        for (m, guard) in queued {
            let (_, flow_id, opening) = keys[m];
            let job = &mut *jobs[m];
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let state = self.state.lock();
                let (locks, _) = opening;
                let reply =
                    self.wait_in_queue(backend, state, guard.ticket, &slots[m], flow_id, locks);
                guard.settled();
                match reply? {
                    Reply::Turn => self.hold_turn(backend, flow_id, opening, &slots[m], job),
                    Reply::Done(result) => result,
                    Reply::Panicked(payload) => resume_unwind(payload),
                }
            }));
            settle(m, outcome);
        }
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
        outcomes
    }

    /// Starts a flow as a member of a group.
    pub fn start_flow<B: GroupBackend<Group = G> + Sync>(
        &self,
        backend: &B,
        flow: &FlowRecord,
        initial: &[(String, String)],
        replace: &ReplaceRun<'_>,
    ) -> Result<StartOutcome> {
        let bytes = initial.iter().map(|(n, v)| n.len() + v.len()).sum();
        self.execute(backend, &flow.flow_id, (&[], &[]), |b, tx| {
            b.start_flow_member(tx, flow, initial, replace)
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
        opening: Opening<'_>,
        member: impl FnOnce(&B, &mut G) -> Result<(T, usize)> + Send,
    ) -> Result<T>
    where
        B: GroupBackend<Group = G> + Sync,
        T: Send,
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
        let (locks, _) = opening;
        let mut waiting = Some(tracing::debug_span!(
            crate::metrics::SPAN_LOCK_WAIT,
            flow_id
        ));
        let mut member = Some(member);
        let mut value = None;
        let mut job = |tx: &mut G, taken: Option<LockGuard>| -> Ran<()> {
            let Some(member) = member.take() else {
                return Ran::Failed(Error::storage("a call's writes were run twice"));
            };
            let guard = match taken.map_or_else(|| table.try_lock_all(flow_id, locks), Ok) {
                Ok(guard) => guard,
                Err(error) => return Ran::Failed(error),
            };
            drop(waiting.take());
            let ran = run_in_savepoint(backend, tx, member);
            // Early lock release: the member's writes are in the group, not yet durable.
            drop(guard);
            match ran {
                Ran::Done(done, bytes) => {
                    value = Some(done);
                    Ran::Done((), bytes)
                }
                Ran::Failed(error) => Ran::Failed(error),
                Ran::Broke(error) => Ran::Broke(error),
                Ran::Panicked(payload, broke) => Ran::Panicked(payload, broke),
            }
        };
        // Once this returns no thread runs `job` any more, and `value` is this thread's again.
        self.take_part(backend, flow_id, opening, &mut job)?;
        value.ok_or_else(|| Error::storage("the store did not run the call"))
    }

    /// Queues `job` (unless the turn is free), and either runs it with the turn or has the
    /// turn holder run it; returns once its group's outcome is known.
    fn take_part<B: GroupBackend<Group = G>>(
        &self,
        backend: &B,
        flow_id: &str,
        opening: Opening<'_>,
        job: &mut JobFn<'_, G>,
    ) -> Result<()> {
        let (locks, _) = opening;
        let slot = Arc::new(Slot::default());
        let mut state = self.state.lock();
        if state.busy || !state.queue.is_empty() {
            // First come, first served: a caller arriving now cannot overtake one waiting.
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            let waiting = Waiting {
                ticket,
                slot: Arc::clone(&slot),
                // SAFETY: `queued` below is settled only once the job is out of the queue and
                // no longer runs (taken out here, or answered by the thread that ran it);
                // until then this frame does not return, and if it unwinds, dropping
                // `queued` waits for the same. `job` is not touched meanwhile.
                job: unsafe { Job::lend(job) },
                opens: upcoming(flow_id, opening),
                span: tracing::Span::current(),
                dispatch: tracing::dispatcher::get_default(tracing::Dispatch::clone),
            };
            state.queue.push_back(waiting);
            let queued = Queued {
                pipeline: self,
                ticket,
                slot: &slot,
                settled: false,
            };
            let reply = self.wait_in_queue(backend, state, ticket, &slot, flow_id, locks);
            queued.settled();
            match reply? {
                Reply::Turn => {}
                Reply::Done(result) => return result,
                Reply::Panicked(payload) => resume_unwind(payload),
            }
        } else {
            state.busy = true;
            drop(state);
        }
        self.hold_turn(backend, flow_id, opening, &slot, job)
    }

    /// Waits in the queue (see the module docs) until a turn holder answers or hands over
    /// the turn, or until this caller gives up (only while its job is still queued).
    fn wait_in_queue<'s, B: GroupBackend<Group = G>>(
        &'s self,
        backend: &B,
        mut state: MutexGuard<'s, State<G>>,
        ticket: u64,
        slot: &Slot,
        flow_id: &str,
        locks: &[String],
    ) -> Result<Reply> {
        let table = backend.lock_table();
        let timeout = backend.busy_timeout();
        let deadline = Instant::now() + timeout;
        loop {
            let Some(at) = state.queue.iter().position(|w| w.ticket == ticket) else {
                // Taken out: the answer is on its way.
                drop(state);
                return Ok(slot.wait(None).unwrap_or(Reply::Turn));
            };
            let held = table.held_among(flow_id, locks);
            let now = Instant::now();
            let wake = match (held.is_empty(), state.member_started) {
                (false, Some(started)) if now >= started + LOCK_GRACE => {
                    state.queue.remove(at);
                    return Err(LockTable::conflict(flow_id, &held));
                }
                (false, Some(started)) => deadline.min(started + LOCK_GRACE),
                _ => deadline,
            };
            if now >= deadline {
                state.queue.remove(at);
                return Err(Error::LockConflict(format!(
                    "store {}: waited over {timeout:?} for this process's other writers \
                     (a handler still running, or a handler writing to its own store from \
                     another thread, which cannot work); retry",
                    backend.location()
                )));
            }
            drop(state);
            if let Some(reply) = slot.wait(Some(wake)) {
                return Ok(reply);
            }
            state = self.state.lock();
        }
    }

    /// With the turn: runs this caller's own member, then the queued callers' members back
    /// to back, and commits (or parks, or hands over) the group.
    fn hold_turn<B: GroupBackend<Group = G>>(
        &self,
        backend: &B,
        flow_id: &str,
        opening: Opening<'_>,
        slot: &Arc<Slot>,
        job: &mut JobFn<'_, G>,
    ) -> Result<()> {
        let (locks, _) = opening;
        let mut state = self.state.lock();
        state.member_started = Some(Instant::now());
        let open = state.open.take();
        drop(state);
        // Its own locks first, as a call on its own would (a caller queued behind this one
        // while it waits for another process's write lock sees them held).
        let guard = match backend.lock_table().try_lock_all(flow_id, locks) {
            Ok(guard) => guard,
            Err(error) => {
                // An empty group is not left open (holding the file's write lock) for nobody.
                let open = match open {
                    Some(open) if open.members == 0 => {
                        let _ = catch_unwind(AssertUnwindSafe(|| backend.rollback_group(open.tx)));
                        None
                    }
                    open => open,
                };
                self.hand_on(open);
                return Err(error);
            }
        };
        let mut open = match open {
            Some(open) => open,
            None => match catch_unwind(AssertUnwindSafe(|| backend.begin_group()))
                .unwrap_or_else(|_| Err(Error::storage("the store panicked opening a transaction")))
            {
                Ok(tx) => OpenGroup {
                    tx,
                    members: 0,
                    bytes: 0,
                    opened: Instant::now(),
                    replies: Vec::new(),
                },
                Err(error) => {
                    drop(guard);
                    self.hand_on(None);
                    return Err(error);
                }
            },
        };
        // This caller's own member, on its own thread; `own` is its answer unless it joined
        // the group.
        let ran = catch_unwind(AssertUnwindSafe(|| {
            let room = backend.limits().max_members.saturating_sub(open.members);
            self.open_ahead(backend, &mut open.tx, room, flow_id, opening);
            job(&mut open.tx, Some(guard))
        }))
        .unwrap_or_else(|payload| Ran::Panicked(payload, true));
        let mut own: Option<Reply> = match ran {
            Ran::Done((), bytes) => {
                open.members += 1;
                open.bytes += bytes;
                open.replies.push(Arc::clone(slot));
                None
            }
            Ran::Failed(error) => Some(Reply::Done(Err(error))),
            Ran::Panicked(payload, false) => Some(Reply::Panicked(payload)),
            Ran::Broke(error) => {
                self.fail_group(backend, open, Some(&error));
                return Err(error);
            }
            Ran::Panicked(payload, true) => {
                self.fail_group(backend, open, None);
                resume_unwind(payload);
            }
        };
        let limits = backend.limits();
        let mut state = self.state.lock();
        let leave = loop {
            state.member_started = None;
            if open.members >= limits.max_members || open.bytes >= limits.max_bytes {
                break Leave::Commit;
            }
            if state.queue.is_empty() {
                let delaying = open.members > 0 && open.opened.elapsed() < limits.commit_delay;
                break if delaying { Leave::Park } else { Leave::Commit };
            }
            if own.is_some() {
                // Its own error is answered at once; the next in line takes the group on.
                break Leave::HandOver;
            }
            let Some(next) = state.queue.pop_front() else {
                break Leave::Commit;
            };
            state.member_started = Some(Instant::now());
            drop(state);
            let Waiting {
                slot: theirs,
                job,
                opens: (flow, flow_locks, flow_reads),
                span,
                dispatch,
                ..
            } = next;
            // Whatever panics here goes back to its caller: a panic outside the member's
            // savepoint leaves the transaction in doubt, so it fails the group.
            let ran = catch_unwind(AssertUnwindSafe(|| {
                tracing::dispatcher::with_default(&dispatch, || {
                    span.in_scope(|| {
                        let room = limits.max_members.saturating_sub(open.members);
                        let opening = (flow_locks.as_slice(), flow_reads.as_slice());
                        self.open_ahead(backend, &mut open.tx, room, &flow, opening);
                        (job.0)(&mut open.tx, None)
                    })
                })
            }))
            .unwrap_or_else(|payload| Ran::Panicked(payload, true));
            match ran {
                Ran::Done((), bytes) => {
                    open.members += 1;
                    open.bytes += bytes;
                    open.replies.push(theirs);
                }
                Ran::Failed(error) => theirs.send(Reply::Done(Err(error))),
                Ran::Panicked(payload, false) => theirs.send(Reply::Panicked(payload)),
                Ran::Broke(error) => {
                    let cause = error.clone();
                    theirs.send(Reply::Done(Err(error)));
                    self.fail_group(backend, open, Some(&cause));
                    return answer(own, slot);
                }
                Ran::Panicked(payload, true) => {
                    theirs.send(Reply::Panicked(payload));
                    self.fail_group(backend, open, None);
                    return answer(own, slot);
                }
            }
            state = self.state.lock();
        };
        match leave {
            Leave::Commit => {
                drop(state);
                self.finish(backend, open);
            }
            Leave::Park => {
                state.open = Some(open);
                state.busy = false;
                drop(state);
                if own.is_none() {
                    own = Some(self.wait_parked(backend, slot));
                }
            }
            Leave::HandOver => {
                state.open = Some(open);
                let next = release_turn(&mut state);
                drop(state);
                if let Some(next) = next {
                    next.send(Reply::Turn);
                }
            }
        }
        answer(own, slot)
    }

    /// Before the member of `flow_id` opening with `opening` runs: when it would cost the
    /// backend a round trip to open, offers it and the members queued behind it (as many as
    /// the group has `room` for) to [`GroupBackend::open_ahead`].
    fn open_ahead<B: GroupBackend<Group = G>>(
        &self,
        backend: &B,
        tx: &mut G,
        room: usize,
        flow_id: &str,
        opening: Opening<'_>,
    ) {
        if !backend.wants_ahead(tx, flow_id, opening.0) {
            return;
        }
        let upcoming: Vec<Upcoming> = {
            let state = self.state.lock();
            std::iter::once(upcoming(flow_id, opening))
                .chain(
                    state
                        .queue
                        .iter()
                        .take(room.saturating_sub(1))
                        .map(|w| w.opens.clone()),
                )
                .collect()
        };
        backend.open_ahead(tx, &upcoming);
    }

    /// Rolls back a group whose transaction was lost (still holding the turn), fails its
    /// members, and hands the turn on. Their error names `cause`, the member's error that
    /// lost the group (`None`: a handler panicked), and is of its kind: retryable when it
    /// is (a server connection cut before the COMMIT was sent), a full disk when it is
    /// one, else a storage error.
    fn fail_group<B: GroupBackend<Group = G>>(
        &self,
        backend: &B,
        open: OpenGroup<G>,
        cause: Option<&Error>,
    ) {
        // A panicking rollback still answers every member (dropping the transaction ends it).
        let _ = catch_unwind(AssertUnwindSafe(|| backend.rollback_group(open.tx)));
        let cause_text = cause.map_or_else(|| "a handler panicked".to_owned(), Error::to_string);
        let message = format!(
            "store {}: the group transaction this call was part of was lost ({cause_text}); \
             nothing of it was written",
            backend.location()
        );
        let lost = match cause {
            Some(Error::LockConflict(_)) => Error::LockConflict(format!("{message}; retry")),
            Some(Error::StorageFull(_)) => Error::StorageFull(message),
            _ => Error::storage(message),
        };
        self.hand_on(None);
        for reply in open.replies {
            reply.send(Reply::Done(Err(lost.clone())));
        }
    }

    /// Gives the turn to the first in line (or frees it), with `open` as the open group.
    fn hand_on(&self, open: Option<OpenGroup<G>>) {
        let mut state = self.state.lock();
        state.open = open;
        let next = release_turn(&mut state);
        drop(state);
        if let Some(next) = next {
            next.send(Reply::Turn);
        }
    }

    /// Commits (or, with no members, rolls back) the group while holding the turn, hands
    /// the turn on and answers every member.
    fn finish<B: GroupBackend<Group = G>>(&self, backend: &B, open: OpenGroup<G>) {
        let OpenGroup {
            tx,
            members,
            replies,
            ..
        } = open;
        if members > 0 && backend.forewarns_members() {
            if let Some(watch) = self.forewarning_watch() {
                forewarn(&replies, watch);
            }
        }
        let started = Instant::now();
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
        // A COMMIT the backend knows did not take effect and may be retried (a server
        // refused it) stays a lock conflict; one whose outcome is unknown is a storage error
        // saying so.
        let result = ended.map_err(|error| match error {
            Error::Storage(_) | Error::StorageFull(_) | Error::LockConflict(_) => error,
            other => Error::storage(format!(
                "store {}: committing a group of {} calls failed: {other}; nothing of it was written",
                backend.location(),
                members
            )),
        });
        if result.is_ok() && members > 0 {
            self.commits.fetch_add(1, Ordering::Relaxed);
            self.members.fetch_add(members as u64, Ordering::Relaxed);
            self.record_commit_latency(started.elapsed());
        }
        self.hand_on(None);
        for reply in replies {
            reply.send(Reply::Done(result.clone()));
        }
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
    }

    /// How long the members of a group about to commit watch for their answer (about twice
    /// the recent COMMITs' latency), or `None` while COMMITs take so long that watching
    /// would cost more CPU than the wake-ups it saves (`slot.rs`).
    fn forewarning_watch(&self) -> Option<Duration> {
        let expected = Duration::from_nanos(self.commit_nanos.load(Ordering::Relaxed));
        (expected <= FOREWARN_COMMITS_UP_TO)
            .then(|| (expected * 2).clamp(SHORTEST_WATCH, LONGEST_WATCH))
    }

    /// Adds a COMMIT's latency to the moving average (only the turn holder commits).
    fn record_commit_latency(&self, latency: Duration) {
        let sample = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        let average = self.commit_nanos.load(Ordering::Relaxed);
        let next = if average == 0 {
            sample
        } else {
            average - average / 8 + sample / 8
        };
        self.commit_nanos.store(next, Ordering::Relaxed);
    }

    /// Waits for the outcome of a parked group this caller is a member of; commits it when
    /// its commit delay has passed and nobody holds the turn.
    fn wait_parked<B: GroupBackend<Group = G>>(&self, backend: &B, slot: &Slot) -> Reply {
        loop {
            let mut state = self.state.lock();
            let parked = state
                .open
                .as_ref()
                .map(|open| open.replies.iter().any(|r| std::ptr::eq(&**r, slot)));
            let due = match parked {
                Some(true) => state
                    .open
                    .as_ref()
                    .map(|open| open.opened + backend.limits().commit_delay),
                _ => None,
            };
            match due {
                Some(due) if !state.busy && Instant::now() >= due => {
                    if let Some(open) = state.open.take() {
                        state.busy = true;
                        drop(state);
                        self.finish(backend, open);
                    }
                }
                Some(due) => {
                    drop(state);
                    // Until the delay has passed; past it, another thread holds the turn
                    // and takes the group on or hands it back, and answers meanwhile.
                    let now = Instant::now();
                    let wake = if due > now { due } else { now + PARKED_RECHECK };
                    if let Some(reply) = slot.wait(Some(wake)) {
                        return reply;
                    }
                }
                None => {
                    drop(state);
                    // Another thread runs or commits the group and answers; the timeout
                    // is a safety net only.
                    if let Some(reply) =
                        slot.wait(Some(Instant::now() + Duration::from_millis(100)))
                    {
                        return reply;
                    }
                }
            }
        }
    }
}

/// The answer of the caller holding the turn: its own error, or its group's outcome.
fn answer(own: Option<Reply>, slot: &Slot) -> Result<()> {
    let reply = match own {
        Some(reply) => reply,
        None => slot
            .wait(Some(Instant::now()))
            .unwrap_or_else(|| Reply::Done(Err(Error::storage("the group was not answered")))),
    };
    match reply {
        Reply::Done(result) => result,
        Reply::Panicked(payload) => resume_unwind(payload),
        Reply::Turn => Err(Error::storage("the group was not answered")),
    }
}

/// Takes the turn from its holder: the first in line gets it (the returned slot is to be
/// told), or it is free.
fn release_turn<G>(state: &mut State<G>) -> Option<Arc<Slot>> {
    state.member_started = None;
    match state.queue.pop_front() {
        Some(next) => Some(next.slot),
        None => {
            state.busy = false;
            None
        }
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
