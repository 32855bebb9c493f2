//! loom models on the smallest ring ([`DEFAULT_CAPACITY`] is 4 under loom).
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release
//! --lib loom` in its own target dir. Every model is bounded at 2 preemptions
//! there: each race below needs at most two (a thief cut off between its head
//! and tail loads, or between claim and end of claim, plus one switch back),
//! and all nine together then take under a second on a 2-core machine. All
//! also pass with `LOOM_MAX_PREEMPTIONS=10` (about a minute, most of it the
//! first model). Each non-Relaxed ordering in this file was weakened to
//! Relaxed one at a time and at least one model failed at bound 2, except the
//! Acquire loads in `claim`, which only keep its retry lock-free.

use std::cell::RefCell;

use loom::sync::atomic::AtomicUsize;
use loom::thread;

use super::*;

/// Records spilled tasks and the size of each batch.
#[derive(Default)]
struct Sink {
    tasks: RefCell<Vec<usize>>,
    batch_sizes: RefCell<Vec<usize>>,
}

impl Overflow<usize> for Sink {
    fn push(&self, task: usize) {
        self.tasks.borrow_mut().push(task);
    }

    fn push_batch<I: Iterator<Item = usize>>(&self, tasks: I) {
        let before = self.tasks.borrow().len();
        self.tasks.borrow_mut().extend(tasks);
        let size = self.tasks.borrow().len() - before;
        self.batch_sizes.borrow_mut().push(size);
    }
}

/// Preemption bound when `LOOM_MAX_PREEMPTIONS` is unset (see the module
/// doc for why 2 is enough).
const PREEMPTIONS: usize = 2;

fn check(model: impl Fn() + Send + Sync + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(PREEMPTIONS);
    builder.check(model);
}

fn drain(local: &mut Local<usize>) -> Vec<usize> {
    std::iter::from_fn(|| local.pop()).collect()
}

/// A thief with its own empty ring: steals once, runs what it got.
fn spawn_thief(steal: Steal<usize>, limit: StealLimit) -> thread::JoinHandle<Vec<usize>> {
    thread::spawn(move || {
        // The tail read after the head must not lag behind it (a lag
        // would wrap to a huge count).
        let count = steal.tail_minus_head();
        assert!(i32::try_from(count).is_ok(), "tail behind head: {count}");
        let (mut dst, _) = local(DEFAULT_CAPACITY);
        let Some((task, moved)) = steal.steal_into(&mut dst, limit) else {
            return Vec::new();
        };
        let mut got = vec![task];
        got.extend(drain(&mut dst));
        assert_eq!(got.len(), moved);
        got
    })
}

fn assert_exactly_once(mut seen: Vec<usize>, total: usize) {
    seen.sort_unstable();
    assert_eq!(seen, (0..total).collect::<Vec<_>>());
}

fn full_ring() -> (Local<usize>, Steal<usize>) {
    let (mut owner, steal) = local(DEFAULT_CAPACITY);
    owner.push_back(0..DEFAULT_CAPACITY);
    (owner, steal)
}

/// Pushes (single and batch) and pops race a steal that starts on an
/// empty ring. Bound 2: two threads; the largest model, the one that
/// dominates at higher bounds.
#[test]
fn loom_push_and_pop_race_one_thief() {
    check(|| {
        let sink = Sink::default();
        let (mut owner, steal) = local(DEFAULT_CAPACITY);
        let thief = spawn_thief(steal, StealLimit::Half);
        owner.push_back_or_overflow(0, &sink);
        owner.push_back(1..3);
        let mut seen: Vec<usize> = owner.pop().into_iter().collect();
        owner.push_back_or_overflow(3, &sink);
        seen.extend(drain(&mut owner));
        seen.extend(thief.join().unwrap());
        assert!(sink.tasks.borrow().is_empty(), "never more than 3 queued");
        assert_exactly_once(seen, 4);
    });
}

/// The owner fills the ring and overflows while a thief steals: whole
/// batch, only the new task, or a plain push. Bound 2: two threads.
#[test]
fn loom_overflow_races_a_steal() {
    check(|| {
        let sink = Sink::default();
        let (mut owner, steal) = local(DEFAULT_CAPACITY);
        let thief = spawn_thief(steal, StealLimit::Half);
        owner.push_back(0..DEFAULT_CAPACITY);
        let overflowed = owner.push_back_or_overflow(DEFAULT_CAPACITY, &sink);
        let mut seen = drain(&mut owner);
        seen.extend(thief.join().unwrap());
        let spilled = sink.tasks.take();
        // Whole batch, only the new task during a claim, or nothing when
        // the steal freed slots first.
        let half_plus_one = DEFAULT_CAPACITY / 2 + 1;
        assert!([0, 1, half_plus_one].contains(&spilled.len()), "{spilled:?}");
        assert_eq!(overflowed, !spilled.is_empty());
        assert!(sink.batch_sizes.borrow().iter().all(|&n| n == half_plus_one));
        seen.extend(spilled);
        assert_exactly_once(seen, DEFAULT_CAPACITY + 1);
    });
}

/// The owner writes into slots a thief read, once `remaining_slots`
/// shows its claim ended: with `push_back`, or with single pushes (each
/// has its own Acquire head load to check). Bound 2: two threads.
fn reuse_slots_a_thief_freed(single_pushes: bool) {
    check(move || {
        let sink = Sink::default();
        let (mut owner, steal) = full_ring();
        let thief = spawn_thief(steal, StealLimit::Half);
        // A loom scheduling point: without it loom never ran the whole
        // steal before `remaining_slots` (room was 0 in every execution),
        // and the Acquire loads of the pushes went unchecked.
        thread::yield_now();
        let room = owner.remaining_slots();
        let tasks = DEFAULT_CAPACITY..DEFAULT_CAPACITY + room;
        if single_pushes {
            for task in tasks {
                assert!(!owner.push_back_or_overflow(task, &sink));
            }
        } else {
            owner.push_back(tasks);
        }
        let mut seen = drain(&mut owner);
        seen.extend(thief.join().unwrap());
        assert_exactly_once(seen, DEFAULT_CAPACITY + room);
    });
}

#[test]
fn loom_push_back_reuses_slots_a_thief_freed() {
    reuse_slots_a_thief_freed(false);
}

#[test]
fn loom_push_reuses_slots_a_thief_freed() {
    reuse_slots_a_thief_freed(true);
}

/// Two thieves race each other and the owner's pushes. Bound 2: three
/// threads, so the space grows fast with the bound.
#[test]
fn loom_two_thieves_race() {
    check(|| {
        let (mut owner, steal) = local(DEFAULT_CAPACITY);
        let first = spawn_thief(steal.clone(), StealLimit::Half);
        let second = spawn_thief(steal, StealLimit::AtMost(1));
        owner.push_back(0..DEFAULT_CAPACITY);
        let mut seen = first.join().unwrap();
        seen.extend(second.join().unwrap());
        seen.extend(drain(&mut owner));
        assert_exactly_once(seen, DEFAULT_CAPACITY);
    });
}

/// The owner pops until empty while a thief steals. Bound 2: two
/// threads.
#[test]
fn loom_steal_races_pop_until_empty() {
    check(|| {
        let (mut owner, steal) = local(DEFAULT_CAPACITY);
        owner.push_back(0..3);
        let thief = spawn_thief(steal, StealLimit::Half);
        let popped = drain(&mut owner);
        assert!(popped.windows(2).all(|w| w[0] < w[1]), "FIFO: {popped:?}");
        let mut seen = thief.join().unwrap();
        seen.extend(popped);
        assert_exactly_once(seen, 3);
    });
}

/// The thief in the middle is both a destination (step 7 publishes
/// into it) and a victim. Bound 2: three threads, main only joins.
#[test]
fn loom_stolen_tasks_can_be_stolen_again() {
    check(|| {
        let (mut owner, steal) = full_ring();
        let (mut middle, middle_steal) = local(DEFAULT_CAPACITY);
        let middle = thread::spawn(move || {
            let mut got = Vec::new();
            if let Some((task, _)) = steal.steal_into(&mut middle, StealLimit::Half) {
                got.push(task);
            }
            got.extend(drain(&mut middle));
            got
        });
        let last = spawn_thief(middle_steal, StealLimit::Half);
        let mut seen = middle.join().unwrap();
        seen.extend(last.join().unwrap());
        seen.extend(drain(&mut owner));
        assert_exactly_once(seen, DEFAULT_CAPACITY);
    });
}

/// `middle` starts full, so it may steal only after `last` has taken
/// half of it, and then writes into a slot `last` just read (steal step
/// 1 must see `last`'s step 6). Bound 2: three threads, main only joins.
#[test]
fn loom_thief_refills_slots_its_own_thief_freed() {
    check(|| {
        let (mut owner, steal) = full_ring();
        let (mut middle, middle_steal) = local(DEFAULT_CAPACITY);
        middle.push_back(DEFAULT_CAPACITY..2 * DEFAULT_CAPACITY);
        let last = spawn_thief(middle_steal, StealLimit::Half);
        let middle = thread::spawn(move || {
            let stolen = steal.steal_into(&mut middle, StealLimit::Half);
            let mut got: Vec<usize> = stolen.map(|(task, _)| task).into_iter().collect();
            got.extend(drain(&mut middle));
            got
        });
        let mut seen = middle.join().unwrap();
        seen.extend(last.join().unwrap());
        seen.extend(drain(&mut owner));
        assert_exactly_once(seen, 2 * DEFAULT_CAPACITY);
    });
}

/// A task that counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Relaxed);
    }
}

/// Whichever thread drops the last handle drops the tasks left in
/// either ring exactly once. Bound 2: two threads.
#[test]
fn loom_last_handle_drops_leftovers_once() {
    check(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (mut owner, steal) = local(DEFAULT_CAPACITY);
        owner.push_back((0..3).map(|_| Counted(drops.clone())));
        let thief = thread::spawn(move || {
            let (mut dst, _) = local(DEFAULT_CAPACITY);
            // The stolen task is dropped here; the rest with the rings.
            drop(steal.steal_into(&mut dst, StealLimit::Half));
        });
        drop(owner);
        thief.join().unwrap();
        assert_eq!(drops.load(Relaxed), 3);
    });
}
