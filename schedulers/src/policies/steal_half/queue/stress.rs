//! Many-thread runs with real threads: one owner pushing (with overflow) and
//! popping, several thieves stealing from it and from each other, every task
//! accounted for with per-task flags.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Barrier;
use std::thread;

use super::*;
use crate::test_util::queue::{Inject, Ledger, Rng, Task};

/// One stress configuration.
struct Run {
    tasks: usize,
    capacity: usize,
    limits: &'static [StealLimit],
    /// Whether everyone drains before stopping; otherwise tasks are left
    /// in the rings and must be dropped with them.
    drain: bool,
}

const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

impl Run {
    fn go(self) {
        let ledger = Ledger::new(self.tasks);
        let inject = Inject::default();
        let done = AtomicBool::new(false);
        let barrier = Barrier::new(self.limits.len() + 1);
        // Start near the top so indices wrap while threads race.
        let start = u32::MAX - self.capacity as u32;
        let (mut owner, owner_steal) = with_start_index(self.capacity, start);
        let thieves: Vec<_> = self.limits.iter().map(|_| with_start_index(self.capacity, start)).collect();
        let steals: Vec<Steal<Task<'_>>> =
            std::iter::once(owner_steal).chain(thieves.iter().map(|(_, steal)| steal.clone())).collect();
        thread::scope(|scope| {
            for (index, ((dst, _), &limit)) in thieves.into_iter().zip(self.limits).enumerate() {
                let victims: Vec<_> = steals
                    .iter()
                    .enumerate()
                    .filter(|&(victim, _)| victim != index + 1)
                    .map(|(_, steal)| steal.clone())
                    .collect();
                let (done, barrier, drain) = (&done, &barrier, self.drain);
                scope.spawn(move || thief(dst, victims, limit, done, barrier, drain));
            }
            barrier.wait();
            self.own(&mut owner, &ledger, &inject);
            done.store(true, SeqCst);
        });
        let spilled = inject.into_tasks();
        if self.drain {
            spilled.into_iter().for_each(Task::run);
        } else {
            drop(spilled);
        }
        drop((owner, steals));
        ledger.check(self.drain);
    }

    /// The owner: bursts of pushes (single and batched), some pops.
    fn own<'a>(&self, owner: &mut Local<Task<'a>>, ledger: &'a Ledger, inject: &Inject<Task<'a>>) {
        let mut rng = Rng(SEED);
        let mut next = 0;
        while next < self.tasks {
            let burst = (1 + rng.below(2 * self.capacity)).min(self.tasks - next);
            if rng.below(4) == 0 {
                let count = burst.min(owner.remaining_slots());
                owner.push_back((next..next + count).map(|id| ledger.task(id)));
                next += count;
            } else {
                for id in next..next + burst {
                    owner.push_back_or_overflow(ledger.task(id), inject);
                }
                next += burst;
            }
            for _ in 0..rng.below(burst + 1) {
                let Some(task) = owner.pop() else { break };
                task.run();
            }
            // Not for correctness: on a machine with fewer cores than
            // threads, the owner would otherwise finish whole time
            // slices alone and the thieves would rarely overlap with it.
            thread::yield_now();
        }
        if self.drain {
            while let Some(task) = owner.pop() {
                task.run();
            }
        }
    }
}

/// A thief: runs its own tasks first, then steals from the others.
fn thief<'a>(
    mut dst: Local<Task<'a>>,
    victims: Vec<Steal<Task<'a>>>,
    limit: StealLimit,
    done: &AtomicBool,
    barrier: &Barrier,
    drain: bool,
) {
    barrier.wait();
    loop {
        if !drain && done.load(SeqCst) {
            return;
        }
        if let Some(task) = dst.pop() {
            task.run();
            continue;
        }
        if let Some((task, moved)) = victims.iter().find_map(|v| v.steal_into(&mut dst, limit)) {
            // `dst` was empty; other thieves may already have taken some.
            assert!(dst.len() < moved, "stole {moved}, dst holds {}", dst.len());
            task.run();
            continue;
        }
        if done.load(SeqCst) && victims.iter().all(Steal::is_empty) {
            return;
        }
        thread::yield_now();
    }
}

#[test]
fn steal_half_default_ring_exactly_once() {
    Run { tasks: 400_000, capacity: 256, limits: &[StealLimit::Half; 3], drain: true }.go();
}

#[test]
fn smallest_ring_mixed_limits_exactly_once() {
    Run {
        tasks: 300_000,
        capacity: MIN_CAPACITY,
        limits: &[StealLimit::Half, StealLimit::AtMost(1), StealLimit::AtMost(3)],
        drain: true,
    }
    .go();
}

#[test]
fn tasks_left_behind_are_dropped_exactly_once() {
    Run { tasks: 300_000, capacity: 64, limits: &[StealLimit::Half, StealLimit::AtMost(2)], drain: false }.go();
}
