//! The binding's own worker threads for awaitable calls.
//!
//! `AsyncClient` hands each store call to [`submit`]: the call runs on a thread of a pool
//! owned by this module (which grows with the number of calls in flight and lets idle
//! threads go), never on the event loop and never through the loop's default executor. A
//! queued call wakes a sleeping thread only when no thread awake and not running a call
//! will take it, and calls queued together wake one thread, which wakes the next: tasks
//! that resubmit in one turn of the loop cost the loop one wake-up, not one each. One
//! idle thread watches the queue briefly before it sleeps, while no other thread runs an
//! RPC call, so a caller awaiting one call at a time has its next call taken up without a
//! thread being woken. When the call is done the worker never attaches to the
//! interpreter: it queues the result on the event loop's [`Completions`] and, when that
//! queue was empty, wakes the loop by writing a byte to a socket the loop watches
//! (`loop.add_reader`). The loop's thread then drains the queue in one go: it turns each
//! result into a Python value or exception (decoding the output there) and completes the
//! awaited futures. The GIL thus never passes between worker threads and the loop for a
//! call, and many calls finishing at once cost the loop one wake-up.
//!
//! RPC calls go through [`submit_rpc`]: a worker taking one that gains from a batch (it
//! takes locks, on a store that runs a batch as one commit group: `Runtime::batches`)
//! takes every queued call of the same runtime that does too and runs them together
//! (`Runtime::invoke_rpcs`): tasks resubmitting in one loop turn then cost one thread and
//! one COMMIT, with no thread woken between their calls, and their results reach the loop
//! together. Measured with 16 tasks appending (bench/notes/3b-python.md), this is what
//! took them from about 0.7× to about 1× of 16 Rust threads at `synchronous=NORMAL`.
//!
//! Such a batch forms only if no worker takes the turn's first call before the others are
//! queued, and a worker woken for it runs within tens of µs, sooner than the loop's next
//! task submits. So while other calls of its loop are in flight, the loop *holds* the
//! wake-ups ([`Completions::hold`]): calls that gain from a batch are queued without waking
//! anyone until the loop's turn is over ([`Completions::release`], which the loop runs as
//! its next turn's callback), and then one worker takes them all. A call made while none of
//! its loop's calls are in flight is never held (a caller awaiting one call at a time waits
//! for no turn of the loop); nor is any other call. With 16 tasks appending at
//! `synchronous=FULL` a worker otherwise took the first call of each turn alone and the
//! loop woke a thread for nearly every call (bench/notes/3b-python.md).
//!
//! A read that waits for no writer (`Runtime::reads_in_place`: a read-only RPC taking no
//! locks, on SQLite) is not handed over when it is its event loop's only call and the loop
//! has nothing else ready: the loop's thread runs it with the GIL released
//! ([`Completions::run_in_place`]), as a blocking call runs, since a worker would only add
//! two hand-offs and the trips of its data between CPUs to the loop's wait. Such reads
//! that outlast the loop's watch for a lone call go to workers for a while (a [`BackOff`]).
//!
//! The Python package calls [`wait_for_calls`] at exit: it waits (detached) until every
//! submitted call has finished, as `concurrent.futures` waits for its workers, so that calls
//! whose callers were cancelled still run to their end.
//!
//! A process forked from one that made calls inherits neither the worker threads nor their
//! calls: the first use in the child starts a pool and a count of its own, and the
//! process-wide locks are held across the fork (`attrflow::fork::Mutex`).

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use attrflow::{fork, RpcOutput, RpcRequest, Runtime};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How many store calls may run at once before further calls queue for a thread.
const MAX_THREADS: usize = 512;

/// How long an idle worker thread waits for another call before it exits.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// How long one idle worker keeps watching the queue before it sleeps: a caller awaiting
/// one call at a time submits its next call within this, and that call then starts without
/// waking a sleeping thread (a futex wake-up and a reschedule, often of an idle CPU).
const SPIN: Duration = Duration::from_micros(100);

/// The CPU the event loop's thread last submitted a call from, and the CPU the last call
/// started on (-1: none yet). Watching only pays when the thread watched for runs on the
/// other core: on a busy machine the scheduler often puts the loop's thread and the worker
/// on one CPU, and a thread spinning there keeps the other one from running at all. So a
/// worker on the loop's CPU sleeps instead of watching, and the loop stops watching for a
/// call that runs on its own CPU.
static LOOP_CPU: AtomicI32 = AtomicI32::new(-1);
/// The CPU the last call started on (see [`LOOP_CPU`]).
static CALL_CPU: AtomicI32 = AtomicI32::new(-1);

/// The CPU this thread runs on now (-1 when unknown).
#[cfg(target_os = "linux")]
fn current_cpu() -> i32 {
    // SAFETY: sched_getcpu takes no arguments and only reads the calling thread's state.
    unsafe { libc::sched_getcpu() }
}

/// The CPU this thread runs on now: unknown on this system.
#[cfg(not(target_os = "linux"))]
fn current_cpu() -> i32 {
    -1
}

/// Whether `cpu` is known and the one this thread runs on.
fn on_cpu(cpu: &AtomicI32) -> bool {
    let cpu = cpu.load(Ordering::Relaxed);
    cpu >= 0 && cpu == current_cpu()
}

/// The pool of this process (see [`state`]) and the calls in flight.
struct State {
    pid: u32,
    pool: Option<&'static Pool>,
    in_flight: usize,
}

static STATE: fork::Mutex<State> = fork::Mutex::new(State {
    pid: 0,
    pool: None,
    in_flight: 0,
});

/// Signalled when the count of calls in flight reaches 0.
static FINISHED: Condvar = Condvar::new();

/// The state of this process: after a fork, the parent's pool and calls are forgotten (its
/// threads do not exist here; the pool is leaked, not dropped).
fn state() -> MutexGuard<'static, State> {
    let mut state = STATE.lock();
    let pid = std::process::id();
    if state.pid != pid {
        *state = State {
            pid,
            pool: None,
            in_flight: 0,
        };
    }
    state
}

/// Counts one call in flight for as long as it lives.
struct InFlight;

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = state();
        state.in_flight = state.in_flight.saturating_sub(1);
        if state.in_flight == 0 {
            FINISHED.notify_all();
        }
    }
}

/// Waits, with the GIL released, until no submitted call is running or `timeout` seconds
/// have passed; returns how many are still running.
#[pyfunction]
pub(crate) fn wait_for_calls(py: Python<'_>, timeout: f64) -> usize {
    let deadline = Duration::try_from_secs_f64(timeout)
        .ok()
        .and_then(|timeout| Instant::now().checked_add(timeout));
    py.detach(move || {
        // Calls whose loop ended before releasing them are still queued without a thread.
        let pool = state().pool;
        if let Some(pool) = pool {
            pool.wake_for_queued();
        }
        let mut state = state();
        while state.in_flight > 0 {
            let left = match deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                break;
            }
            state = FINISHED
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state.in_flight
    })
}

/// The most RPC calls a worker thread takes from the queue at once (a store's group holds
/// at most 64 members by default).
const MAX_BATCH: usize = 64;

/// One call waiting for a thread.
enum Job {
    /// Work run on its own.
    Work(Box<dyn FnOnce() + Send>),
    /// An RPC call (see [`submit_rpc`]).
    Rpc(RpcJob),
}

/// What a worker thread takes from the queue.
enum Taken {
    /// Work run on its own.
    Work(Box<dyn FnOnce() + Send>),
    /// RPC calls of one runtime that gain from a batch, run as one.
    Rpcs(Vec<RpcJob>),
}

/// A queued RPC call and where its result goes.
struct RpcJob {
    runtime: Arc<Runtime>,
    /// Makes the call (on the worker thread), or says why it cannot be made.
    request: Box<dyn FnOnce() -> attrflow::Result<RpcRequest> + Send>,
    /// Whether it gains from running in a batch ([`Runtime::batches`]).
    batches: bool,
    /// Turns the result into what the event loop receives (on the worker thread).
    report: Box<dyn FnOnce(attrflow::Result<RpcOutput>) -> Finished + Send>,
    completions: Py<Completions>,
    in_flight: InFlight,
}

/// What [`Pool::add_taker`] did.
enum Taker {
    /// Nothing to wake: the threads that will look at the queue are enough for its calls,
    /// or one was started for it.
    Enough,
    /// A sleeping thread was counted as woken; its caller wakes it once the queue's lock is
    /// released.
    Asleep,
}

/// The calls waiting for a thread, and the threads.
struct Queue {
    jobs: VecDeque<Job>,
    /// Worker threads alive.
    threads: usize,
    /// Worker threads asleep on [`Pool::wake`].
    sleeping: usize,
    /// Wake-ups sent to sleeping threads that have not woken yet.
    woken: usize,
}

impl Queue {
    /// How many threads will look at the queue before they sleep: those neither running a
    /// call (`busy` of them) nor asleep, and those woken that have not looked yet.
    fn takers(&self, busy: usize) -> usize {
        self.threads.saturating_sub(self.sleeping + busy) + self.woken
    }
}

/// Worker threads that grow with the calls in flight (up to [`MAX_THREADS`]) and exit
/// after [`KEEP_ALIVE`] idle. A thread that finishes a call takes the next queued one
/// without sleeping; a queued call wakes (or starts) a thread only when the threads awake
/// and not running a call are fewer than the calls queued, and then one at a time: a
/// woken thread that finds more calls queued than takers wakes the next one itself, so
/// many calls submitted together cost their submitter one wake-up. One idle thread at a
/// time watches the queue for [`SPIN`] before it sleeps, unless other threads run RPC
/// calls; the others sleep at once.
struct Pool {
    queue: Mutex<Queue>,
    wake: Condvar,
    /// How many jobs are queued: what the watching thread reads without the lock.
    queued: AtomicUsize,
    /// Threads running a call (or about to, having taken it from the queue).
    busy: AtomicUsize,
    /// Threads running RPC calls (see [`Pool::watch`]).
    running_rpcs: AtomicUsize,
    /// Whether a thread is watching the queue.
    watching: AtomicBool,
    /// When an idle moment is slept through without watching, after watches saw no job.
    watches: BackOff,
}

impl Pool {
    fn new() -> Self {
        Pool {
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                threads: 0,
                sleeping: 0,
                woken: 0,
            }),
            wake: Condvar::new(),
            queued: AtomicUsize::new(0),
            busy: AtomicUsize::new(0),
            running_rpcs: AtomicUsize::new(0),
            watching: AtomicBool::new(false),
            watches: BackOff::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `job`, waking or starting a thread for it unless a thread awake (or already
    /// woken) will take it, or `held` (its wake-up is held: [`Completions::hold`]) and a
    /// thread exists that [`Pool::wake_for_queued`] can wake later.
    fn submit(&'static self, job: Job, held: bool) -> PyResult<()> {
        let mut queue = self.lock();
        queue.jobs.push_back(job);
        self.queued.fetch_add(1, Ordering::SeqCst);
        if queue.woken > 0 || (held && queue.threads > 0) {
            // A woken thread wakes the next one when it finds more calls than takers; a
            // held call waits for its loop's release, or for a thread finishing a call.
            return Ok(());
        }
        match self.add_taker(&mut queue) {
            Err(error) if queue.threads == 0 => {
                // With no thread to take it, the call is not made.
                queue.jobs.pop_back();
                self.queued.fetch_sub(1, Ordering::SeqCst);
                Err(PyRuntimeError::new_err(format!(
                    "cannot start attrflow's worker threads: {error}"
                )))
            }
            // A woken or started thread takes it, or a running one when it is done.
            taker => {
                drop(queue);
                self.wake_taker(taker);
                Ok(())
            }
        }
    }

    /// Wakes (or starts) a thread for the calls queued, unless the threads that will look at
    /// the queue are enough: what [`Pool::submit`] does for a call whose wake-up is not held.
    fn wake_for_queued(&'static self) {
        let mut queue = self.lock();
        if queue.jobs.is_empty() || queue.woken > 0 {
            return;
        }
        let taker = self.add_taker(&mut queue);
        drop(queue);
        self.wake_taker(taker);
    }

    /// Counts a sleeping thread as woken, or starts a thread, when the queue holds more
    /// calls than the threads that will look at it. A sleeping thread is woken by the
    /// caller once it has released the queue's lock ([`Taker::Asleep`]): woken with the
    /// lock held, the thread can run at once (on the caller's CPU, when the scheduler has
    /// put both there), find the lock taken and sleep again until the caller lets it go:
    /// two more thread switches each time (measured on one CPU: 3.5 switches a call
    /// against 2, bench/notes/3b-python.md).
    fn add_taker(&'static self, queue: &mut Queue) -> std::io::Result<Taker> {
        if queue.jobs.len() <= queue.takers(self.busy.load(Ordering::SeqCst)) {
            return Ok(Taker::Enough);
        }
        if queue.sleeping > queue.woken {
            queue.woken += 1;
            return Ok(Taker::Asleep);
        }
        if queue.threads < MAX_THREADS {
            std::thread::Builder::new()
                .name("attrflow-call".to_owned())
                .spawn(move || self.work())?;
            queue.threads += 1;
        }
        Ok(Taker::Enough)
    }

    /// Wakes the sleeping thread [`Pool::add_taker`] counted as woken, if it did; called
    /// once the queue's lock is released. (A thread that left its sleep meanwhile, its
    /// keep-alive over, finds the call queued when it looks again, so no call waits for a
    /// wake-up that found nobody.)
    fn wake_taker(&self, taker: std::io::Result<Taker>) {
        if let Ok(Taker::Asleep) = taker {
            self.wake.notify_one();
        }
    }

    /// A worker thread: runs queued jobs until it has been idle for [`KEEP_ALIVE`].
    fn work(&'static self) {
        let _leaving = Leaving(self);
        while let Some(taken) = self.next() {
            match taken {
                Taken::Work(job) => job(),
                Taken::Rpcs(batch) => run_batch(self, batch),
            }
        }
    }

    /// The next job (with the RPC calls of the same runtime queued right behind it, when
    /// its store runs a batch as one group), or `None` once this thread should exit.
    fn next(&'static self) -> Option<Taken> {
        self.watch();
        let mut queue = self.lock();
        loop {
            if let Some(job) = queue.jobs.pop_front() {
                let job = match job {
                    Job::Work(work) => Taken::Work(work),
                    Job::Rpc(first) => Taken::Rpcs(take_batch(first, &mut queue.jobs)),
                };
                let taken = match &job {
                    Taken::Work(_) => 1,
                    Taken::Rpcs(batch) => batch.len(),
                };
                self.queued.fetch_sub(taken, Ordering::SeqCst);
                self.busy.fetch_add(1, Ordering::SeqCst);
                // Calls submitted together: wake the next taker (a failure to start one
                // leaves the call to a thread that finishes).
                let taker = if queue.jobs.is_empty() {
                    Ok(Taker::Enough)
                } else {
                    self.add_taker(&mut queue)
                };
                drop(queue);
                self.wake_taker(taker);
                return Some(job);
            }
            queue.sleeping += 1;
            let (woken, timeout) = self
                .wake
                .wait_timeout(queue, KEEP_ALIVE)
                .unwrap_or_else(PoisonError::into_inner);
            queue = woken;
            queue.sleeping -= 1;
            queue.woken = queue.woken.saturating_sub(1);
            if timeout.timed_out() && queue.jobs.is_empty() {
                queue.threads -= 1;
                return None;
            }
        }
    }

    /// Watches the queue for up to [`SPIN`] when no other thread does; returns when a job
    /// is queued or the time is up. After watches that saw no job, some of the next idle
    /// moments are not watched (see [`BackOff`]: calls are not coming one right after
    /// another).
    ///
    /// Nor does a thread watch while other threads run RPC calls: calls then come from
    /// many callers at once, and a thread spinning for the next one takes a core from the
    /// calls running and from the event loop that submits them. 16 tasks appending through
    /// one `AsyncClient` spent 12 % of the process's CPU samples in this spin at FULL, and
    /// without it appended 10–20 % faster at FULL and at NORMAL (bench/notes/3b-python.md).
    /// A long call of another kind (a tail waiting for records) does not stop the watching
    /// a caller awaiting one call at a time gains from.
    fn watch(&self) {
        if self.queued.load(Ordering::SeqCst) > 0
            || self.running_rpcs.load(Ordering::SeqCst) > 0
            || on_cpu(&LOOP_CPU)
            || self.watches.skip()
            || self.watching.swap(true, Ordering::SeqCst)
        {
            return;
        }
        let started = Instant::now();
        while self.queued.load(Ordering::SeqCst) == 0 {
            if started.elapsed() >= SPIN {
                self.watches.missed();
                break;
            }
            for _ in 0..32 {
                std::hint::spin_loop();
            }
        }
        if self.queued.load(Ordering::SeqCst) > 0 {
            self.watches.hit();
        }
        self.watching.store(false, Ordering::SeqCst);
    }
}

/// `first` and, when it gains from a batch ([`Runtime::batches`]), the queued calls of its
/// runtime that do too (up to [`MAX_BATCH`], in the order queued; the other jobs keep
/// their places): calls resubmitted in one turn of the event loop then run on one thread,
/// share one COMMIT and wake nobody between them. Calls queued together are concurrent,
/// so the order among them is theirs to have.
fn take_batch(first: RpcJob, jobs: &mut VecDeque<Job>) -> Vec<RpcJob> {
    if !first.batches {
        return vec![first];
    }
    let runtime = Arc::clone(&first.runtime);
    let mut batch = vec![first];
    let mut kept = VecDeque::with_capacity(jobs.len());
    for job in jobs.drain(..) {
        match job {
            Job::Rpc(next)
                if batch.len() < MAX_BATCH
                    && next.batches
                    && Arc::ptr_eq(&next.runtime, &runtime) =>
            {
                batch.push(next)
            }
            other => kept.push_back(other),
        }
    }
    *jobs = kept;
    batch
}

/// Runs a batch taken by [`Pool::next`] through [`Runtime::invoke_rpcs`] and queues every result on its event loop's
/// [`Completions`], each loop's at once.
fn run_batch(pool: &'static Pool, batch: Vec<RpcJob>) {
    CALL_CPU.store(current_cpu(), Ordering::Relaxed);
    let busy = Busy(pool);
    let running = RunningRpcs::new(pool);
    let runtime = Arc::clone(&batch[0].runtime);
    let mut requests = Vec::with_capacity(batch.len());
    let mut pending = Vec::with_capacity(batch.len());
    for RpcJob {
        request,
        report,
        completions,
        in_flight,
        ..
    } in batch
    {
        let refused = match request() {
            Ok(request) => {
                requests.push(request);
                None
            }
            Err(error) => Some(Err(error)),
        };
        pending.push((refused, report, completions, in_flight));
    }
    let mut results = runtime.invoke_rpcs_output(requests).into_iter();
    // Free before the results are queued: the loop may submit the next calls at once, or
    // close its client, whose store then closes with the last handle (a child forked after
    // that may open the file).
    drop((running, busy));
    drop(runtime);
    let mut reports: Vec<(Py<Completions>, Vec<Finished>)> = Vec::new();
    let mut done = Vec::with_capacity(pending.len());
    for (refused, report, completions, in_flight) in pending {
        let result = refused.unwrap_or_else(|| {
            results
                .next()
                .unwrap_or_else(|| Err(attrflow::Error::storage("the call was not run")))
        });
        let finished = report(result);
        match reports
            .iter_mut()
            .find(|(queue, _)| queue.as_ptr() == completions.as_ptr())
        {
            Some((_, calls)) => calls.push(finished),
            None => reports.push((completions, vec![finished])),
        }
        done.push(in_flight);
    }
    for (completions, calls) in reports {
        completions.get().push_all(calls);
    }
    drop(done);
    bury();
}

/// Uncounts its worker thread if a call panics on it (the thread then ends): the queue must
/// not wait for a taker that is gone, so another is woken or started for what is queued.
struct Leaving(&'static Pool);

impl Drop for Leaving {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut queue = self.0.lock();
            queue.threads -= 1;
            let taker = self.0.add_taker(&mut queue);
            drop(queue);
            self.0.wake_taker(taker);
        }
    }
}

/// Counts its thread as running a call (taken from the queue) until dropped.
struct Busy(&'static Pool);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Counts its thread as running RPC calls until dropped (see [`Pool::watch`]).
struct RunningRpcs(&'static Pool);

impl RunningRpcs {
    fn new(pool: &'static Pool) -> Self {
        pool.running_rpcs.fetch_add(1, Ordering::SeqCst);
        RunningRpcs(pool)
    }
}

impl Drop for RunningRpcs {
    fn drop(&mut self) {
        self.0.running_rpcs.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A moment of the event loop's watching: a few spin-loop hints, then, while the call still
/// waits for a worker thread to take it up, the CPU offered to any other thread ready to run
/// on it (that worker, on a busy machine). Once a worker runs the call the loop does not
/// yield: on a busy machine a yield hands the CPU to another process for the rest of its
/// time slice, which the loop then waits out (tens of µs a call, measured).
fn pause(pool: Option<&Pool>) {
    for _ in 0..16 {
        std::hint::spin_loop();
    }
    if queued(pool) {
        std::thread::yield_now();
    }
}

/// Whether calls wait in `pool` for a thread to take them.
fn queued(pool: Option<&Pool>) -> bool {
    pool.is_some_and(|pool| pool.queued.load(Ordering::SeqCst) > 0)
}

/// This process's pool (started at first use) and one more call counted in flight.
fn start_call() -> (&'static Pool, InFlight) {
    let mut state = state();
    let pool = *state
        .pool
        .get_or_insert_with(|| Box::leak(Box::new(Pool::new())));
    state.in_flight += 1;
    (pool, InFlight)
}

/// A result turned into a Python value on the event loop's thread.
type Finish = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// One finished call: the future awaiting it and how to make its result.
struct Finished {
    future: Py<PyAny>,
    finish: Finish,
}

/// The finished calls of one event loop, and the socket pair that wakes it.
///
/// Python creates one per event loop, watches [`Completions::fileno`] with
/// `loop.add_reader` and calls [`Completions::drain`] when it is readable, or after
/// [`Completions::wait_for_lone_call`] saw a call finish.
#[pyclass(frozen, name = "Completions", module = "attrflow._native")]
pub(crate) struct Completions {
    ready: Mutex<Ready>,
    /// How many finished calls wait in `ready`: what the waiting loop reads without the lock.
    finished: AtomicUsize,
    /// Calls submitted through this queue and not finished yet.
    running: Arc<AtomicUsize>,
    /// When a lone call is made without waiting for it, after waits outlasted their calls.
    waits: BackOff,
    /// When a lone read that could run in place runs on a worker instead, after reads run in
    /// place outlasted [`LONE_CALL_WAIT`] (see [`Completions::run_in_place`]).
    in_place: BackOff,
    reader: UnixStream,
    writer: UnixStream,
    /// Raised after a wake-up is written to `writer`, lowered by the drain that reads the
    /// wake-ups: a drain after a lone call the loop watched for (which writes none) makes
    /// no system call.
    written: AtomicBool,
    /// Whether calls that gain from a batch queue without waking a thread (see
    /// [`Completions::hold`]).
    holding: AtomicBool,
}

/// The finished calls, and whether the loop is waiting for one (then it needs no wake-up).
struct Ready {
    calls: Vec<Finished>,
    loop_waiting: bool,
}

/// How long the event loop waits, when it has nothing else to do, for a call it made alone
/// (see [`Completions::wait_for_lone_call`]).
const LONE_CALL_WAIT: Duration = Duration::from_micros(200);

/// The most lone calls made without waiting, or idle moments a worker sleeps through
/// without watching, after watches that saw nothing (see [`BackOff`]).
const MAX_SKIPS: usize = 32;

/// When a watch (the event loop's for a lone call, a worker's for the next call) is
/// skipped: after `n >= 2` watches in a row that saw nothing, the next `min(2^(n-2), 32)`
/// chances are skipped; a watch that sees what it waits for starts over.
///
/// Calls that take longer than a watch (a store waiting for fsync, say) are thus watched
/// for about once in 33, while calls coming one right after another are watched for
/// again after a single miss, and a lone slow call among fast ones (an append that
/// checkpoints or closes a chunk, about one in a hundred) costs no watch of the next
/// call: skipping the watch after every miss made the call after such a one wait for the
/// loop's wake-up, 100–350 µs on an idle machine, for a call of 35 µs. Skipping a fixed 32
/// after any miss made the two watches hold each other off: on a busy machine a miss on
/// one side (its thread descheduled for a moment) made that side sleep, which slowed every
/// round trip enough for the other side's next watch to miss too, and one-at-a-time calls
/// stayed at half speed.
struct BackOff {
    /// Watches in a row that saw nothing.
    misses: AtomicUsize,
    /// Chances left to skip.
    skips: AtomicUsize,
}

impl BackOff {
    const fn new() -> Self {
        BackOff {
            misses: AtomicUsize::new(0),
            skips: AtomicUsize::new(0),
        }
    }

    /// Whether to skip this chance to watch (counting it).
    fn skip(&self) -> bool {
        self.skips
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok()
    }

    /// A watch saw what it waited for.
    fn hit(&self) {
        self.misses.store(0, Ordering::SeqCst);
    }

    /// A watch ran out of time.
    fn missed(&self) {
        let before = self.misses.fetch_add(1, Ordering::SeqCst).min(16);
        if before > 0 {
            self.skips
                .store((1_usize << (before - 1)).min(MAX_SKIPS), Ordering::SeqCst);
        }
    }
}

impl Completions {
    /// Whether a call that waits for nothing but its own reads may run in place, on the
    /// event loop's thread, instead of on a worker: it is the loop's only call (none of
    /// this queue's calls is running), and in-place runs have not been outlasting
    /// [`LONE_CALL_WAIT`] (a chance is counted: see [`BackOff`]).
    pub(crate) fn may_run_in_place(&self) -> bool {
        self.running.load(Ordering::SeqCst) == 0 && !self.in_place.skip()
    }

    /// Runs `work` here with the GIL released (see [`Completions::may_run_in_place`]). A run
    /// longer than [`LONE_CALL_WAIT`], the most the loop watches for a lone call, counts as
    /// a miss: after two in a row, the next lone reads run on workers for a while, so a
    /// store whose reads have grown slow (a map of many instances loaded whole) keeps the
    /// loop waiting no more than watching for them would.
    pub(crate) fn run_in_place<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce() -> T + Send,
    ) -> T {
        let started = Instant::now();
        let result = py.detach(work);
        if started.elapsed() > LONE_CALL_WAIT {
            self.in_place.missed();
        } else {
            self.in_place.hit();
        }
        result
    }

    fn push(&self, finished: Finished) {
        self.push_all(vec![finished]);
    }

    /// Queues finished calls, waking the loop when the queue was empty.
    fn push_all(&self, finished: Vec<Finished>) {
        let count = finished.len();
        let wake = {
            let mut ready = self.lock();
            let was_empty = ready.calls.is_empty();
            ready.calls.extend(finished);
            self.finished.store(ready.calls.len(), Ordering::SeqCst);
            self.running.fetch_sub(count, Ordering::SeqCst);
            was_empty && count > 0 && !ready.loop_waiting
        };
        if wake {
            // A full socket buffer already holds a wake-up; any other failure means the
            // reader is gone with its loop, and nobody awaits the result any more.
            let _ = (&self.writer).write(&[1]);
            // After the write: a drain that finds it raised reads every wake-up written so
            // far; one that comes between the two leaves the byte for the next, which the
            // loop's reader makes at once.
            self.written.store(true, Ordering::SeqCst);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Ready> {
        self.ready.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Watches for a finished call until one is queued, `selector` has I/O ready, the call
    /// runs on this thread's CPU (see [`LOOP_CPU`]) or `LONE_CALL_WAIT` has passed; whether
    /// the time ran out.
    fn watch(&self, selector: i32) -> bool {
        let pool = state().pool;
        let started = Instant::now();
        let mut rounds = 0_u32;
        while self.finished.load(Ordering::SeqCst) == 0 {
            pause(pool);
            rounds = rounds.wrapping_add(1);
            if rounds % 4 == 0 {
                if started.elapsed() >= LONE_CALL_WAIT {
                    return true;
                }
                if readable(selector) || (!queued(pool) && on_cpu(&CALL_CPU)) {
                    return false;
                }
            }
        }
        false
    }
}

/// Whether `fd` is readable now (for an epoll or kqueue descriptor: whether it has events).
fn readable(fd: i32) -> bool {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `poll` points to one valid pollfd for the duration of the call.
    unsafe { libc::poll(&mut poll, 1, 0) != 0 }
}

#[pymethods]
impl Completions {
    /// A new, empty queue with its own socket pair.
    #[new]
    fn new() -> PyResult<Self> {
        let (reader, writer) = UnixStream::pair()?;
        reader.set_nonblocking(true)?;
        writer.set_nonblocking(true)?;
        Ok(Completions {
            ready: Mutex::new(Ready {
                calls: Vec::new(),
                loop_waiting: false,
            }),
            finished: AtomicUsize::new(0),
            running: Arc::new(AtomicUsize::new(0)),
            waits: BackOff::new(),
            in_place: BackOff::new(),
            reader,
            writer,
            written: AtomicBool::new(false),
            holding: AtomicBool::new(false),
        })
    }

    /// How many calls submitted through this queue have not finished yet.
    #[getter]
    fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// For the event loop with nothing else to do: when exactly one call is running, waits
    /// for it (GIL released, watching rather than sleeping) up to a fixed 200 µs, and returns
    /// whether it finished, so the caller drains it at once instead of sleeping until the
    /// socket wakes it. Stops early, returning `false`, when `selector` (the loop's epoll or
    /// kqueue descriptor) has I/O ready. After waits that outlasted their calls, some of
    /// the next lone calls are not waited for (see [`BackOff`]).
    fn wait_for_lone_call(&self, py: Python<'_>, selector: i32) -> bool {
        if self.running.load(Ordering::SeqCst) != 1 {
            return false;
        }
        if self.waits.skip() {
            return false;
        }
        {
            let mut ready = self.lock();
            if !ready.calls.is_empty() {
                return true;
            }
            ready.loop_waiting = true;
        }
        let timed_out = py.detach(|| self.watch(selector));
        let mut ready = self.lock();
        ready.loop_waiting = false;
        let finished = !ready.calls.is_empty();
        if finished {
            self.waits.hit();
        } else if timed_out {
            self.waits.missed();
        }
        finished
    }

    /// Until [`Completions::release`], RPC calls submitted through this queue that gain from
    /// a batch queue without waking a worker thread, so that the calls of one turn of the
    /// event loop are taken by one worker, together. The loop holds only while other calls
    /// of its are in flight, and schedules the release as it holds.
    fn hold(&self) {
        self.holding.store(true, Ordering::SeqCst);
    }

    /// Ends [`Completions::hold`]: wakes a worker for the calls queued meanwhile (unless a
    /// worker awake will take them).
    fn release(&self) {
        self.holding.store(false, Ordering::SeqCst);
        let pool = state().pool;
        if let Some(pool) = pool {
            pool.wake_for_queued();
        }
    }

    /// The file descriptor that becomes readable when calls have finished.
    fn fileno(&self) -> i32 {
        self.reader.as_raw_fd()
    }

    /// Takes every finished call: `(future, value, None)` or `(future, None, exception)`
    /// each, in the order they finished.
    fn drain(&self, py: Python<'_>) -> PyResult<Vec<Settled>> {
        let mut wake_ups = [0_u8; 64];
        if self.written.swap(false, Ordering::SeqCst) {
            loop {
                match (&self.reader).read(&mut wake_ups) {
                    Ok(read) if read == wake_ups.len() => continue,
                    Ok(_) => break,
                    Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                    Err(error) if error.kind() == ErrorKind::WouldBlock => break,
                    Err(error) => return Err(error.into()),
                }
            }
        }
        let finished = {
            let mut ready = self.lock();
            self.finished.store(0, Ordering::SeqCst);
            std::mem::take(&mut ready.calls)
        };
        Ok(finished
            .into_iter()
            .map(|Finished { future, finish }| match finish(py) {
                Ok(value) => (future, value, py.None()),
                Err(error) => (future, py.None(), error.into_value(py).into_any()),
            })
            .collect())
    }
}

/// A finished call as Python receives it: `(future, value, exception)`.
type Settled = (Py<PyAny>, Py<PyAny>, Py<PyAny>);

/// Where a submitted call reports: the event loop's queue and the future to complete.
pub(crate) type Done = (Py<Completions>, Py<PyAny>);

/// `done`'s future, once `hand` has handed the call to a worker thread that completes it.
pub(crate) fn submitted<'py>(
    py: Python<'py>,
    done: Done,
    hand: impl FnOnce(Done) -> PyResult<()>,
) -> PyResult<Bound<'py, PyAny>> {
    let future = done.1.clone_ref(py).into_bound(py);
    hand(done).map(|()| future)
}

/// Runs `work` on a worker thread, then queues it on `done`'s [`Completions`]; the event
/// loop's thread later runs `finish` (turning the result into a Python value) and completes
/// `done`'s future with it, or with the exception `finish` raised.
pub(crate) fn submit<T, W, F>(done: Done, work: W, finish: F) -> PyResult<()>
where
    T: Send + 'static,
    W: FnOnce() -> T + Send + 'static,
    F: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    enqueue(done, false, |pool, in_flight, completions, future| {
        Job::Work(Box::new(move || {
            let _in_flight = in_flight;
            CALL_CPU.store(current_cpu(), Ordering::Relaxed);
            let busy = Busy(pool);
            let result = work();
            // Free before the result is queued: the loop may submit the next call at once.
            drop(busy);
            completions.get().push(Finished {
                future,
                finish: Box::new(move |py| finish(py, result)),
            });
            bury();
        }))
    })
}

/// Counts one more call in flight (on `done`'s queue too) and hands the job `make` builds
/// (from the pool, the count, the queue and the future) to the pool; a call that gains
/// from a batch (`batches`) is held when its queue holds wake-ups ([`Completions::hold`]).
fn enqueue(
    done: Done,
    batches: bool,
    make: impl FnOnce(&'static Pool, InFlight, Py<Completions>, Py<PyAny>) -> Job,
) -> PyResult<()> {
    let (pool, in_flight) = start_call();
    let (completions, future) = done;
    let queue = completions.get();
    let running = Arc::clone(&queue.running);
    let held = batches && queue.holding.load(Ordering::SeqCst);
    running.fetch_add(1, Ordering::SeqCst);
    LOOP_CPU.store(current_cpu(), Ordering::Relaxed);
    let submitted = pool.submit(make(pool, in_flight, completions, future), held);
    if submitted.is_err() {
        running.fetch_sub(1, Ordering::SeqCst);
    }
    submitted
}

/// Queues the RPC call `request` makes on `runtime` like [`submit`] (`batches` says whether
/// it gains from a batch: [`Runtime::batches`]): on the worker thread `after`
/// turns its result into what `finish` later turns into a Python value on the event loop's
/// thread. Unlike other work, a worker thread takes the queued calls of one runtime that
/// gain from a batch ([`Runtime::batches`]: calls taking locks, on a store that runs a
/// batch as one group) together and runs them as one ([`Runtime::invoke_rpcs`]).
pub(crate) fn submit_rpc<T, R, A, F>(
    done: Done,
    runtime: Arc<Runtime>,
    batches: bool,
    request: R,
    after: A,
    finish: F,
) -> PyResult<()>
where
    T: Send + 'static,
    R: FnOnce() -> attrflow::Result<RpcRequest> + Send + 'static,
    A: FnOnce(attrflow::Result<RpcOutput>) -> T + Send + 'static,
    F: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    enqueue(done, batches, |_, in_flight, completions, future| {
        let report = Box::new(move |result| {
            let value = after(result);
            Finished {
                future,
                finish: Box::new(move |py| finish(py, value)),
            }
        });
        Job::Rpc(RpcJob {
            runtime,
            request: Box::new(request),
            batches,
            report,
            completions,
            in_flight,
        })
    })
}

/// Values the event loop is done with, freed by a worker thread (see [`dispose`]).
static GRAVEYARD: fork::Mutex<Vec<Box<dyn Send>>> = fork::Mutex::new(Vec::new());

/// How many values wait in [`GRAVEYARD`]: what a worker reads before it takes the lock.
static BURIED: AtomicUsize = AtomicUsize::new(0);

/// How many values wait in [`GRAVEYARD`] before the loop frees them itself (no worker
/// thread has finished a call meanwhile).
const GRAVEYARD_SIZE: usize = 64;

/// Hands `value` (a call's result, decoded on the event loop's thread) to the worker
/// threads to free: a page's JSON is hundreds of allocations made on the worker, which the
/// next worker to finish a call frees while the loop goes on, instead of the loop.
pub(crate) fn dispose<T: Send + 'static>(value: T) {
    let mut graveyard = GRAVEYARD.lock();
    graveyard.push(Box::new(value));
    if graveyard.len() >= GRAVEYARD_SIZE {
        let full = std::mem::take(&mut *graveyard);
        BURIED.store(0, Ordering::SeqCst);
        drop(graveyard);
        drop(full);
    } else {
        BURIED.store(graveyard.len(), Ordering::SeqCst);
    }
}

/// Frees what [`dispose`] was given (on a worker thread, after its call is queued).
fn bury() {
    if BURIED.load(Ordering::SeqCst) == 0 {
        return;
    }
    let buried = {
        let mut graveyard = GRAVEYARD.lock();
        BURIED.store(0, Ordering::SeqCst);
        std::mem::take(&mut *graveyard)
    };
    drop(buried);
}
