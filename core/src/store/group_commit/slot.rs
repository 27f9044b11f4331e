//! Where a caller waits for its answer ([`Slot`]), and how the members of a group about to
//! commit are forewarned of theirs ([`forewarn`]).
//!
//! A caller waiting in the pipeline sleeps on its slot until a turn holder answers it. Each
//! answer to a sleeping caller is a wake-up (`futex`, then the scheduler placing the thread,
//! often on the other CPU), and the thread that committed a group used to make every one of
//! them after its COMMIT: about 15 µs each on the two-CPU virtual machines of
//! bench/notes/6-concurrency.md, 120–150 µs for a group of nine, made just as the next turn
//! holder starts running its members, on the same two CPUs.
//!
//! So before it commits, the turn holder forewarns the group's members: it wakes the first
//! member that sleeps, which, as it wakes, forewarns the next, and so on down the group
//! (a chain, so the committer makes one wake-up, not one per member). A forewarned caller
//! watches for its answer instead of sleeping: it spins, yielding its CPU every few
//! turns, for at most the watch the committer gave it (about twice the store's recent
//! COMMIT latency, see [`super::GroupCommit`]). Those wake-ups happen while the COMMIT
//! waits for its write and sync, when both CPUs are otherwise idle, and the answers after
//! it need none: a caller watching sees its answer at once and is back in line for the
//! next group sooner, so groups grow (about 11 members instead of 9 with 16 appending
//! threads at `synchronous=FULL`) and the appends per second rose by 25–33 % there, for
//! 10–25 % more CPU per append (the watching). A caller holding a batch of calls (a
//! binding's worker, [`Slot::unwarned`]) is not forewarned, nor are PostgreSQL's groups
//! ([`super::GroupBackend::forewarns_members`]).
//!
//! A forewarning changes when a caller looks for its answer, never what it gets: a watch
//! that runs out (a slow COMMIT) leaves the caller asleep again, answered as any other; an
//! answer that was already there ends the watch before it starts; a caller not asleep when
//! forewarned watches once it waits. Who sleeps is known under the slot's own lock, so a
//! forewarning that wakes nobody passes the chain on itself.

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::sync::{Condvar, Mutex};

/// What a waiting caller is told.
pub(super) enum Reply {
    /// It holds the turn now (its member did not run).
    Turn,
    /// Its member ran; the outcome of its group (or its own error).
    Done(Result<()>),
    /// Its handler panicked; the panic resumes on the caller's thread.
    Panicked(Box<dyn Any + Send>),
}

/// Where one caller is answered: set once, read by the caller.
#[derive(Default)]
pub(super) struct Slot {
    state: Mutex<SlotState>,
    wakes: Condvar,
    /// Set with the reply, so that a watching caller sees it without taking the lock.
    answered: AtomicBool,
    /// Its caller is not forewarned: it holds a batch of calls for another thread (a
    /// binding's worker, whose results go to an event loop), so answering it sooner does not
    /// bring its next calls sooner, and watching would take CPU that thread needs.
    unwarned: bool,
    /// How many watches its caller began.
    #[cfg(test)]
    watches: std::sync::atomic::AtomicUsize,
}

#[derive(Default)]
struct SlotState {
    reply: Option<Reply>,
    /// The caller sleeps on `wakes` (set and cleared by the caller under the lock).
    sleeping: bool,
    /// The caller was forewarned: how long to watch for its answer once it looks.
    watch: Option<Duration>,
    /// The member forewarned after this one.
    next: Option<Arc<Slot>>,
}

impl Slot {
    /// The slot of a call in a batch ([`super::GroupCommit::run_rpcs`]), never forewarned.
    pub(super) fn unwarned() -> Self {
        Slot {
            unwarned: true,
            ..Slot::default()
        }
    }

    /// Answers the caller.
    pub(super) fn send(&self, reply: Reply) {
        self.state.lock().reply = Some(reply);
        self.answered.store(true, Ordering::Release);
        self.wakes.notify_one();
    }

    /// The reply, waiting for it until `until` (forever with `None`).
    pub(super) fn wait(&self, until: Option<Instant>) -> Option<Reply> {
        let mut state = self.state.lock();
        loop {
            if let Some(watch) = state.watch.take() {
                let next = state.next.take();
                let reply = state.reply.take();
                drop(state);
                if let Some(next) = next {
                    forewarn_from(next, watch);
                }
                if reply.is_some() {
                    return reply;
                }
                #[cfg(test)]
                self.watches.fetch_add(1, Ordering::Relaxed);
                let now = Instant::now();
                self.watch_for_answer(until.map_or(now + watch, |until| until.min(now + watch)));
                state = self.state.lock();
                continue;
            }
            if let Some(reply) = state.reply.take() {
                return Some(reply);
            }
            state.sleeping = true;
            match until {
                Some(until) => {
                    let (guard, timed_out) = self.wakes.wait_until(state, until);
                    state = guard;
                    state.sleeping = false;
                    if timed_out && state.watch.is_none() {
                        return state.reply.take();
                    }
                }
                None => {
                    state = self.wakes.wait(state);
                    state.sleeping = false;
                }
            }
        }
    }

    /// Spins until the answer is in or `deadline` has passed, yielding the CPU every few
    /// turns so that a thread with work to do (the committer, its sync done) runs first.
    fn watch_for_answer(&self, deadline: Instant) {
        let mut turns = 0u32;
        while !self.answered.load(Ordering::Acquire) {
            std::hint::spin_loop();
            turns = turns.wrapping_add(1);
            if turns % 32 == 0 {
                std::thread::yield_now();
                if Instant::now() >= deadline {
                    return;
                }
            }
        }
    }

    /// Whether the caller sleeps on its slot now.
    #[cfg(test)]
    pub(super) fn sleeping(&self) -> bool {
        self.state.lock().sleeping
    }
}

/// Forewarns the callers of `slots`, in order, that their answers are coming: each watches
/// for it for at most `watch` once it looks (see the module docs).
pub(super) fn forewarn(slots: &[Arc<Slot>], watch: Duration) {
    let Some(first) = slots.first() else {
        return;
    };
    for pair in slots.windows(2) {
        pair[0].state.lock().next = Some(Arc::clone(&pair[1]));
    }
    forewarn_from(Arc::clone(first), watch);
}

/// Forewarns the chain starting at `slot`: the first caller found asleep is woken and
/// passes the rest on as it wakes; callers already answered are skipped.
fn forewarn_from(slot: Arc<Slot>, watch: Duration) {
    let mut at = Some(slot);
    while let Some(slot) = at {
        let mut state = slot.state.lock();
        if state.reply.is_none() && !slot.unwarned {
            state.watch = Some(watch);
            if state.sleeping {
                slot.wakes.notify_one();
                return;
            }
            // Not asleep: it watches once it waits; it has nobody left to forewarn.
        }
        at = state.next.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    impl Slot {
        /// Whether a forewarning waits for its caller to look.
        fn forewarned(&self) -> bool {
            self.state.lock().watch.is_some()
        }

        /// How many watches its caller began.
        fn watches(&self) -> usize {
            self.watches.load(Ordering::Relaxed)
        }
    }

    /// Waits (at most 10 s) until `condition` holds.
    fn eventually(what: &str, condition: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !condition() {
            assert!(Instant::now() < deadline, "never: {what}");
            thread::sleep(Duration::from_millis(1));
        }
    }

    fn waiting(slot: &Arc<Slot>) -> thread::JoinHandle<Option<Reply>> {
        let caller = Arc::clone(slot);
        let waiter = thread::spawn(move || caller.wait(None));
        eventually("the caller sleeps", || slot.sleeping());
        waiter
    }

    fn turn(reply: Option<Reply>) -> bool {
        matches!(reply, Some(Reply::Turn))
    }

    #[test]
    fn a_forewarned_caller_whose_answer_is_late_sleeps_again_and_is_answered() {
        let slot = Arc::new(Slot::default());
        let waiter = waiting(&slot);
        forewarn(&[Arc::clone(&slot)], Duration::from_micros(50));
        eventually("the caller watched, then slept again", || {
            slot.watches() == 1 && slot.sleeping()
        });
        slot.send(Reply::Turn);
        assert!(turn(waiter.join().unwrap()));
    }

    #[test]
    fn a_forewarning_reaches_every_sleeping_caller_of_the_chain_past_those_it_skips() {
        let slots: Vec<Arc<Slot>> = (0..5)
            .map(|i| {
                Arc::new(if i == 2 {
                    Slot::unwarned()
                } else {
                    Slot::default()
                })
            })
            .collect();
        let [first, answered, unwarned, fourth, not_waiting] = &slots[..] else {
            unreachable!()
        };
        answered.send(Reply::Turn);
        let waiters = [waiting(first), waiting(unwarned), waiting(fourth)];
        // A long watch: the forewarned callers watch until answered below.
        forewarn(&slots, Duration::from_secs(60));
        eventually("the first and the fourth caller watch", || {
            first.watches() == 1 && fourth.watches() == 1
        });
        assert!(unwarned.sleeping() && !unwarned.forewarned() && unwarned.watches() == 0);
        assert!(
            not_waiting.forewarned(),
            "a caller not waiting yet watches once it waits"
        );
        for slot in [first, unwarned, fourth, not_waiting] {
            slot.send(Reply::Turn);
        }
        for waiter in waiters {
            assert!(turn(waiter.join().unwrap()));
        }
        assert!(turn(not_waiting.wait(None)));
        assert!(turn(answered.wait(None)), "an answer already given is kept");
    }

    #[test]
    fn a_forewarned_wait_with_a_deadline_still_ends_there_unanswered() {
        let slot = Arc::new(Slot::default());
        let waiter = {
            let caller = Arc::clone(&slot);
            thread::spawn(move || caller.wait(Some(Instant::now() + Duration::from_secs(1))))
        };
        eventually("the caller sleeps", || slot.sleeping());
        forewarn(&[Arc::clone(&slot)], Duration::from_secs(60));
        eventually("the caller watches", || slot.watches() == 1);
        // An answer long after the deadline: a watch that outlived the deadline would get it.
        let late = {
            let slot = Arc::clone(&slot);
            thread::spawn(move || {
                thread::sleep(Duration::from_secs(4));
                slot.send(Reply::Turn);
            })
        };
        assert!(waiter.join().unwrap().is_none());
        late.join().unwrap();
    }
}
