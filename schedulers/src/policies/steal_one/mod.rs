//! `steal-one`: classic work stealing. Each worker owns a Chase–Lev deque
//! (crossbeam-deque's `Worker`, LIFO for the owner; Chase & Lev, SPAA'05,
//! with the weak-memory fixes of Lê et al., PPoPP'13); idle workers steal
//! one task from a victim (random start, then every other worker once; or
//! the `victim` knob's order, `crate::topology`);
//! tasks from outside go through a global `Injector`.
//!
//! Every `global-interval` ticks the owner takes from the injector, or
//! else the oldest task of its own deque, so that a self-respawning task on
//! top of a LIFO deque cannot starve the tasks beneath it.
//!
//! A yielded task goes to the injector rather than the owner's deque: with
//! a LIFO owner end the deque has no "back" for the owner, and a yield that
//! is popped again at once would not yield.

use crossbeam_deque::{Injector, Steal, Stealer, Worker};

use crate::fairness::Fairness;
use crate::fast_rand::FastRand;
use crate::knobs::Knobs;
use crate::loom::sync::atomic::AtomicBool;
use crate::metrics::Counters;
use crate::policies::global::{close_injector, pop_injector, push_closable};
use crate::policies::victims::VictimOrder;
use crate::policy::{Origin, Policy, Wake, WorkerRef};
use crate::task::raw::Notified;

/// What `steal-one` is (its entry in `wsbench list`).
pub(crate) const INFO: crate::PolicyInfo = crate::PolicyInfo {
    name: "steal-one",
    about: "Chase-Lev deque per worker (crossbeam-deque), thieves steal one task",
    workers: crate::WorkerRule::Any,
    knobs: &[
        "global-interval",
        "searching-limit",
        "idle",
        "budget",
        "victim",
        "event-interval",
        "task-align",
        "timer",
        "sched-delay",
    ],
};

/// Bounded retries of a steal that lost a race before moving on.
const STEAL_RETRIES: u32 = 4;

pub(crate) struct StealOne {
    stealers: Box<[Stealer<Notified>]>,
    injector: Injector<Notified>,
    /// Closed at shutdown; see `global::push_closable`.
    closed: AtomicBool,
    victims: VictimOrder,
}

pub(crate) struct Core {
    deque: Worker<Notified>,
    fairness: Fairness,
    rng: FastRand,
}

impl StealOne {
    fn pop_injector_into(&self, core: &mut Core, counters: &Counters) -> Option<Notified> {
        loop {
            let before = core.deque.len();
            match self.injector.steal_batch_and_pop(&core.deque) {
                Steal::Success(t) => {
                    let moved = core.deque.len().saturating_sub(before) as u64;
                    Counters::bump(&counters.inject_pops, moved + 1);
                    return Some(t);
                }
                Steal::Empty => return None,
                Steal::Retry => std::hint::spin_loop(),
            }
        }
    }

    /// Takes the oldest task of worker `index`'s deque, retrying lost races
    /// a bounded number of times.
    fn steal_oldest(&self, index: usize) -> Option<Notified> {
        for _ in 0..STEAL_RETRIES {
            match self.stealers[index].steal() {
                Steal::Success(t) => return Some(t),
                Steal::Empty => return None,
                Steal::Retry => std::hint::spin_loop(),
            }
        }
        None
    }

    fn steal_from(&self, me: usize, victim: usize, counters: &Counters) -> Option<Notified> {
        Counters::bump(&counters.steal_attempts, 1);
        let t = self.steal_oldest(victim)?;
        Counters::bump(&counters.steals, 1);
        Counters::bump(&counters.tasks_stolen, 1);
        self.victims.count_steal(counters, me, victim);
        Some(t)
    }
}

impl Policy for StealOne {
    type Core = Core;
    const STEALS: bool = true;

    fn new(workers: usize, knobs: &Knobs) -> (Self, Vec<Core>) {
        let cores: Vec<Core> = (0..workers)
            .map(|i| Core {
                deque: Worker::new_lifo(),
                fairness: Fairness::new(knobs.global_interval),
                rng: FastRand::new(i + 1),
            })
            .collect();
        let stealers = cores.iter().map(|c| c.deque.stealer()).collect();
        let victims = VictimOrder::new(knobs.victim, knobs.topology.as_ref(), workers);
        let policy = StealOne { stealers, injector: Injector::new(), closed: AtomicBool::new(false), victims };
        (policy, cores)
    }

    fn push_local(&self, core: &mut Core, _w: &WorkerRef<'_>, task: Notified, origin: Origin) -> bool {
        match origin {
            Origin::Yield => self.injector.push(task),
            Origin::Spawn | Origin::Wake => core.deque.push(task),
        }
        true
    }

    fn push_remote(&self, task: Notified) -> Result<Wake, Notified> {
        push_closable(&self.injector, &self.closed, task).map(|()| Wake::Any)
    }

    fn next_task(&self, core: &mut Core, w: &WorkerRef<'_>) -> Option<Notified> {
        if core.fairness.due(&w.counters.global_interval) {
            if let Some(t) = pop_injector(&self.injector) {
                Counters::bump(&w.counters.inject_pops, 1);
                return Some(t);
            }
            // LIFO starvation guard: a task that keeps respawning itself
            // stays on top of the owner's end forever; with no thief (one
            // worker, or all busy) the tasks beneath would never run. Take
            // the oldest one through our own stealer at the same interval.
            if let Some(t) = self.steal_oldest(w.index) {
                return Some(t);
            }
        }
        core.deque.pop().or_else(|| self.pop_injector_into(core, w.counters))
    }

    fn steal(&self, core: &mut Core, w: &WorkerRef<'_>) -> Option<Notified> {
        for victim in self.victims.victims(&mut core.rng, w.index) {
            if let Some(t) = self.steal_from(w.index, victim, w.counters) {
                return Some(t);
            }
        }
        self.pop_injector_into(core, w.counters)
    }

    fn has_work(&self, core: &Core, _index: usize, peers: bool) -> bool {
        !core.deque.is_empty() || !self.injector.is_empty() || (peers && self.stealers.iter().any(|s| !s.is_empty()))
    }

    fn maintenance(&self, core: &mut Core, mean_poll_ns: f64, polls: u64) {
        core.fairness.update(mean_poll_ns, polls);
    }

    fn drain_core(&self, core: &mut Core, out: &mut Vec<Notified>) {
        while let Some(t) = core.deque.pop() {
            out.push(t);
        }
    }

    fn close_shared(&self, out: &mut Vec<Notified>) {
        close_injector(&self.injector, &self.closed, out);
    }

    fn counts_steal_groups(&self) -> bool {
        self.victims.counts_groups()
    }
}
