//! Many-thread runs with real threads: one owner pushing (with overflow) and
//! popping, several thieves stealing from it and from each other, every task
//! accounted for with per-task flags.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::SeqCst};
use std::sync::{Barrier, Mutex};
use std::thread;

use super::*;

/// What happened to each task.
struct Ledger {
    ran: Vec<AtomicU8>,
    dropped: Vec<AtomicU8>,
}

impl Ledger {
    fn new(tasks: usize) -> Ledger {
        let counters = || (0..tasks).map(|_| AtomicU8::new(0)).collect();
        Ledger { ran: counters(), dropped: counters() }
    }

    fn task(&self, id: usize) -> Task<'_> {
        Task { id, ledger: self }
    }

    fn check(&self, every_task_ran: bool) {
        for id in 0..self.ran.len() {
            let ran = self.ran[id].load(SeqCst);
            let dropped = self.dropped[id].load(SeqCst);
            assert_eq!(dropped, 1, "task {id} dropped {dropped} times");
            assert!(ran <= 1, "task {id} ran {ran} times");
            assert!(!every_task_ran || ran == 1, "task {id} never ran");
        }
    }
}

struct Task<'a> {
    id: usize,
    ledger: &'a Ledger,
}

impl Task<'_> {
    fn run(self) {
        let before = self.ledger.ran[self.id].fetch_add(1, SeqCst);
        assert_eq!(before, 0, "task {} ran twice", self.id);
    }
}

impl Drop for Task<'_> {
    fn drop(&mut self) {
        self.ledger.dropped[self.id].fetch_add(1, SeqCst);
    }
}

struct Inject<T>(Mutex<Vec<T>>);

impl<T> Overflow<T> for Inject<T> {
    fn push(&self, task: T) {
        self.0.lock().unwrap().push(task);
    }

    fn push_batch<I: Iterator<Item = T>>(&self, tasks: I) {
        self.0.lock().unwrap().extend(tasks);
    }
}

/// xorshift64: a fixed seed gives the same push/pop pattern every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }
}

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
        let inject = Inject(Mutex::default());
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
        let spilled = inject.0.into_inner().unwrap();
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
