//! `steal-half`: tokio's multi-thread scheduler design (see DESIGN.md,
//! "Facts about tokio's multi-thread scheduler"), every part a knob:
//! - a fixed ring per worker (`queue.rs`), owner FIFO, stealers take
//!   ceil-half (`steal`), overflow of half the ring to the inject queue;
//! - a LIFO slot for tasks woken or spawned by a worker (`lifo`), at most
//!   `max-lifo-polls` in a row; not stealable, or with `lifo-steal=on`
//!   stealable on a thief's last pass (`lifo_slot.rs`);
//! - the inject queue (`inject=mutex|sharded`), checked first every
//!   `global-interval` ticks (adaptive by default), refilled in batches of
//!   `min(len / workers + 1, free slots, 128)` (`inject-batch=share`) or
//!   `min(N, free slots)` (`inject-batch=N`); pushes from outside go to
//!   the pushing thread's home shard, and a worker pops its own first;
//! - the steal loop: `steal-passes` passes, each a random (or sequential)
//!   first victim then each other worker once (or the topology's order,
//!   `victim=topology`: `crate::topology`), then the inject queue; the
//!   searching throttle and wake protocol live in the shared core
//!   (`runtime/idle.rs`).
//!
//! The policy is generic over its local queue ([`RunQueue`]): the ring
//! makes the `steal-half` row, the BWoS queue the `bwos` row
//! (`bwos/mod.rs`), with everything else shared.

pub(crate) mod lifo_slot;
pub(crate) mod local_queue;
pub(crate) mod queue;

use crossbeam_utils::CachePadded;

use crate::fairness::Fairness;
use crate::fast_rand::FastRand;
use crate::inject::Inject;
use crate::knobs::{InjectBatch, Knobs, StealAmount};
use crate::metrics::Counters;
use crate::policies::victims::VictimOrder;
use crate::policy::{Origin, Policy, Wake, WorkerRef};
use crate::task::raw::Notified;
use lifo_slot::LifoSlot;
pub(crate) use local_queue::RunQueue;
use queue::{Overflow, StealLimit};

/// What `steal-half` is (its entry in `wsbench list`).
pub(crate) const INFO: crate::PolicyInfo = crate::PolicyInfo {
    name: "steal-half",
    about: "tokio's design: 256-slot ring, LIFO slot, steal half, inject queue, searching throttle",
    workers: crate::WorkerRule::Any,
    knobs: &[
        "lifo",
        "max-lifo-polls",
        "global-interval",
        "steal",
        "queue-capacity",
        "searching-limit",
        "idle",
        "inject",
        "inject-batch",
        "budget",
        "victim",
        "event-interval",
        "task-align",
        "lifo-steal",
        "steal-passes",
        "timer",
        "sched-delay",
    ],
};

/// Most tasks moved from the inject queue per refill (tokio's).
const MAX_INJECT_BATCH: usize = 128;

/// The policy over local queue `Q`; `StealHalf` alone is the `steal-half`
/// row (tokio's ring).
pub(crate) struct StealHalf<Q: RunQueue = queue::Local<Notified>> {
    steals: Box<[Q::Stealer]>,
    inject: Inject,
    lifo: bool,
    max_lifo_polls: u32,
    limit: StealLimit,
    victims: VictimOrder,
    inject_batch: InjectBatch,
    /// `lifo-steal=on`: the workers' LIFO slots live here, by index, where
    /// thieves reach them (with off: in `Core::lifo_slot`, this is empty).
    lifo_slots: Box<[CachePadded<LifoSlot<Notified>>]>,
    steal_passes: u32,
}

pub(crate) struct Core<Q> {
    /// This worker's index (its slot in `lifo_slots`).
    index: usize,
    local: Q,
    /// The LIFO slot with `lifo-steal=off`.
    lifo_slot: Option<Notified>,
    /// LIFO polls in a row since the last normal task.
    lifo_polls: u32,
    fairness: Fairness,
    rng: FastRand,
    /// Reused buffer for inject refills (no allocation after warm-up).
    batch: Vec<Notified>,
    /// Reused buffer of peers' stealable counts (weighted victims only).
    stealable: Vec<usize>,
}

impl Overflow<Notified> for Inject {
    fn push(&self, task: Notified) {
        // Closed only at shutdown; the task was cancelled by then.
        let _ = Inject::push(self, task);
    }

    fn push_batch<I: Iterator<Item = Notified>>(&self, tasks: I) {
        Inject::push_batch(self, tasks);
    }
}

impl<Q: RunQueue> StealHalf<Q> {
    fn push_back(&self, core: &mut Core<Q>, task: Notified, counters: &Counters) {
        if core.local.push_back_or_overflow(task, &self.inject) {
            Counters::bump(&counters.overflows, 1);
        }
    }

    /// Takes `min(len / workers + 1, free slots + 1, 128)` tasks from the
    /// inject queue in one lock (with `inject-batch=N`: `min(N, free slots
    /// + 1)`): runs the first, queues the rest.
    fn refill_from_inject(&self, core: &mut Core<Q>, w: &WorkerRef<'_>) -> Option<Notified> {
        if self.inject.is_empty() {
            return None;
        }
        let room = core.local.remaining_slots() + 1;
        let n = match self.inject_batch {
            InjectBatch::Share => (self.inject.len() / self.steals.len() + 1).min(room).min(MAX_INJECT_BATCH),
            InjectBatch::Fixed(n) => (n as usize).min(room),
        };
        let start = w.index % self.inject.shards();
        let mut batch = std::mem::take(&mut core.batch);
        let first = self.inject.pop_batch(start, n, |t| batch.push(t));
        if first.is_some() {
            Counters::bump(&w.counters.inject_pops, batch.len() as u64 + 1);
        }
        core.local.push_batch(batch.drain(..));
        core.batch = batch;
        first
    }

    /// One steal attempt on `victim`, counted: its queue, then (on the
    /// `last_pass`, with `lifo-steal=on`) its LIFO slot.
    fn steal_from(&self, core: &mut Core<Q>, w: &WorkerRef<'_>, victim: usize, last_pass: bool) -> Option<Notified> {
        Counters::bump(&w.counters.steal_attempts, 1);
        let (t, moved) = match Q::steal_into(&self.steals[victim], &mut core.local, self.limit) {
            Some(got) => got,
            None if last_pass && !self.lifo_slots.is_empty() => {
                let t = self.lifo_slots[victim].take()?;
                Counters::bump(&w.counters.lifo_steals, 1);
                (t, 1)
            }
            None => return None,
        };
        Counters::bump(&w.counters.steals, 1);
        Counters::bump(&w.counters.tasks_stolen, moved as u64);
        self.victims.count_steal(w.counters, w.index, victim);
        Some(t)
    }

    /// Puts `task` in this worker's LIFO slot; returns what it displaced.
    #[inline]
    fn lifo_put(&self, core: &mut Core<Q>, task: Notified) -> Option<Notified> {
        match self.lifo_slots.get(core.index) {
            Some(slot) => slot.put(task),
            None => core.lifo_slot.replace(task),
        }
    }

    /// Empties this worker's LIFO slot (`None` also when a thief took it).
    #[inline]
    fn lifo_take(&self, core: &mut Core<Q>) -> Option<Notified> {
        match self.lifo_slots.get(core.index) {
            Some(slot) => slot.take(),
            None => core.lifo_slot.take(),
        }
    }

    #[inline]
    fn lifo_occupied(&self, core: &Core<Q>) -> bool {
        self.lifo_slots.get(core.index).map_or(core.lifo_slot.is_some(), |slot| slot.is_occupied())
    }

    /// BWoS's probabilistic victim choice: a peer drawn with probability
    /// proportional to its stealable tasks (`None` when none has any).
    fn weighted_victim(&self, core: &mut Core<Q>, me: usize) -> Option<usize> {
        let mut lens = std::mem::take(&mut core.stealable);
        lens.clear();
        lens.extend(self.steals.iter().enumerate().map(|(v, s)| if v == me { 0 } else { Q::stealable(s) }));
        let total: usize = lens.iter().sum();
        let chosen = (total > 0).then(|| {
            let mut draw = core.rng.below(total);
            lens.iter()
                .position(|&len| {
                    let hit = draw < len;
                    draw = draw.saturating_sub(len);
                    hit
                })
                .expect("the draw is below the sum of the counts")
        });
        core.stealable = lens;
        chosen
    }

    /// Runs `task`, just taken from the LIFO slot, unless the cap of LIFO
    /// polls in a row is reached: then it waits in the queue.
    fn lifo_or_queue(&self, core: &mut Core<Q>, w: &WorkerRef<'_>, task: Notified) -> Option<Notified> {
        if core.lifo_polls < self.max_lifo_polls {
            core.lifo_polls += 1;
            Counters::bump(&w.counters.lifo_hits, 1);
            return Some(task);
        }
        // Cap reached: the slot is bypassed until a normal task runs.
        self.push_back(core, task, w.counters);
        None
    }
}

impl<Q: RunQueue> Policy for StealHalf<Q> {
    type Core = Core<Q>;
    const STEALS: bool = true;

    fn new(workers: usize, knobs: &Knobs) -> (Self, Vec<Core<Q>>) {
        let mut steals = Vec::with_capacity(workers);
        let cores = (0..workers)
            .map(|i| {
                let (local, steal) = Q::with_knobs(knobs);
                steals.push(steal);
                Core {
                    index: i,
                    local,
                    lifo_slot: None,
                    lifo_polls: 0,
                    fairness: Fairness::new(knobs.global_interval),
                    rng: FastRand::new(i + 1),
                    batch: Vec::with_capacity(MAX_INJECT_BATCH),
                    stealable: Vec::with_capacity(if Q::WEIGHTED_VICTIMS { workers } else { 0 }),
                }
            })
            .collect();
        let limit = match knobs.steal {
            StealAmount::Half => StealLimit::Half,
            StealAmount::Count(n) => StealLimit::AtMost(n),
        };
        let policy = StealHalf {
            steals: steals.into(),
            inject: Inject::new(knobs.inject, workers),
            lifo: knobs.lifo,
            max_lifo_polls: knobs.max_lifo_polls,
            limit,
            victims: VictimOrder::new(knobs.victim, knobs.topology.as_ref(), workers),
            inject_batch: knobs.inject_batch,
            lifo_slots: (0..if knobs.lifo_steal { workers } else { 0 })
                .map(|_| CachePadded::new(LifoSlot::new()))
                .collect(),
            steal_passes: knobs.steal_passes,
        };
        (policy, cores)
    }

    fn push_local(&self, core: &mut Core<Q>, w: &WorkerRef<'_>, task: Notified, origin: Origin) -> bool {
        if origin == Origin::Yield || !self.lifo {
            self.push_back(core, task, w.counters);
        } else if let Some(prev) = self.lifo_put(core, task) {
            self.push_back(core, prev, w.counters);
        }
        // Notify when a peer has something to steal (for the ring, tokio's
        // rule: more than one task waits here). The same rule with
        // `lifo-steal=on`: a lone slot task wakes nobody (see `lifo_slot.rs`).
        !w.is_searching && core.local.worth_notifying(self.lifo_occupied(core))
    }

    fn push_remote(&self, task: Notified) -> Result<Wake, Notified> {
        self.inject.push(task).map(|()| Wake::Any)
    }

    fn next_task(&self, core: &mut Core<Q>, w: &WorkerRef<'_>) -> Option<Notified> {
        if core.fairness.due(&w.counters.global_interval) {
            if let Some(t) = self.inject.pop(w.index % self.inject.shards()) {
                Counters::bump(&w.counters.inject_pops, 1);
                return Some(t);
            }
        }
        if let Some(t) = self.lifo_take(core).and_then(|t| self.lifo_or_queue(core, w, t)) {
            return Some(t);
        }
        core.lifo_polls = 0;
        core.local.pop().or_else(|| self.refill_from_inject(core, w))
    }

    fn next_lifo(&self, core: &mut Core<Q>, w: &WorkerRef<'_>, has_budget: bool) -> Option<Notified> {
        let task = self.lifo_take(core)?;
        if !has_budget {
            // Out of budget: the woken task waits its turn in the ring.
            self.push_back(core, task, w.counters);
            return None;
        }
        self.lifo_or_queue(core, w, task)
    }

    fn steal(&self, core: &mut Core<Q>, w: &WorkerRef<'_>) -> Option<Notified> {
        let n = self.steals.len();
        // A stolen task is a normal task: the LIFO run starts afresh.
        core.lifo_polls = 0;
        if core.local.len() > core.local.capacity() / 2 {
            return None;
        }
        // `victim=topology` orders victims itself: no weighted draw first.
        if Q::WEIGHTED_VICTIMS && n > 2 && !self.victims.by_topology() {
            if let Some(victim) = self.weighted_victim(core, w.index) {
                if let Some(t) = self.steal_from(core, w, victim, false) {
                    return Some(t);
                }
            }
        }
        for pass in 1..=self.steal_passes {
            for victim in self.victims.victims(&mut core.rng, w.index) {
                if let Some(t) = self.steal_from(core, w, victim, pass == self.steal_passes) {
                    return Some(t);
                }
            }
        }
        self.refill_from_inject(core, w)
    }

    fn has_work(&self, core: &Core<Q>, _index: usize, peers: bool) -> bool {
        self.lifo_occupied(core)
            || core.local.len() > 0
            || !self.inject.is_empty()
            || (peers && self.steals.iter().any(|s| Q::stealable(s) > 0))
            || (peers && self.lifo_slots.iter().any(|s| s.is_occupied()))
    }

    fn maintenance(&self, core: &mut Core<Q>, mean_poll_ns: f64, polls: u64) {
        core.fairness.update(mean_poll_ns, polls);
    }

    fn drain_core(&self, core: &mut Core<Q>, out: &mut Vec<Notified>) {
        out.extend(self.lifo_take(core));
        while let Some(t) = core.local.pop() {
            out.push(t);
        }
    }

    fn close_shared(&self, out: &mut Vec<Notified>) {
        // Every worker drained its own slot on exit; one that missed the
        // shutdown deadline leaves its task here (a swap: taken once).
        out.extend(self.lifo_slots.iter().filter_map(|s| s.take()));
        self.inject.close(out);
    }

    fn inject_lock_contended(&self) -> Option<u64> {
        Some(self.inject.lock_contended())
    }

    fn counts_steal_groups(&self) -> bool {
        self.victims.counts_groups()
    }
}
