//! loom models of the BWoS queue on its loom shape: 2 blocks of 2 entries
//! ([`DEFAULT_BLOCKS`], [`DEFAULT_BLOCK_SIZE`] under loom), at preemption
//! bound 2 by default and 3 in CI (`.ci/run`; all five together take about
//! 3 s at bound 3 on the 2-core development machine). Each race below needs
//! at most two preemptions: a thief cut off between its loads of `reserved` and
//! `committed` or between its reservation and its `stolen` increment, and
//! one switch back. loom also checks every entry access for a data race, so
//! the hand-off models fail if an ordering that publishes an entry (or the
//! end of a thief's reads) is too weak.

use loom::sync::atomic::AtomicUsize;
use loom::thread;

use super::*;

/// Preemption bound when `LOOM_MAX_PREEMPTIONS` is unset.
const PREEMPTIONS: usize = 2;

fn check(model: impl Fn() + Send + Sync + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(PREEMPTIONS);
    builder.check(model);
}

/// Collects spilled tasks.
#[derive(Default)]
struct Sink(std::cell::RefCell<Vec<usize>>);

impl Overflow<usize> for Sink {
    fn push(&self, task: usize) {
        self.0.borrow_mut().push(task);
    }

    fn push_batch<I: Iterator<Item = usize>>(&self, tasks: I) {
        self.0.borrow_mut().extend(tasks);
    }
}

fn drain(local: &mut Local<usize>) -> Vec<usize> {
    std::iter::from_fn(|| local.pop()).collect()
}

/// A thief with its own empty queue: steals once, runs what it got.
fn spawn_thief(steal: Steal<usize>) -> thread::JoinHandle<Vec<usize>> {
    thread::spawn(move || {
        let (mut dst, _) = local();
        let Some((task, moved)) = steal.steal_into(&mut dst, u32::MAX) else {
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

/// The block hand-off: the owner fills the consumer block and the next
/// one, then pops through both — taking over block 1 — while a thief
/// reserves in block 1. Whatever the interleaving, the take-over swap and
/// the reservation CAS split block 1 between them. Bound 2: two threads.
#[test]
fn loom_owner_takes_over_the_block_a_thief_steals_from() {
    check(|| {
        let sink = Sink::default();
        let (mut owner, steal) = local();
        let thief = spawn_thief(steal);
        for task in 0..4 {
            assert!(!owner.push_back_or_overflow(task, &sink));
        }
        let mut seen = drain(&mut owner);
        seen.extend(thief.join().unwrap());
        assert_exactly_once(seen, 4);
    });
}

/// The producer re-enters block 1 only after the thief's `stolen`
/// increment: the thief reads entries 2 and 3 while the owner pops and
/// pushes 4..6, which needs block 1 again. A write into an entry the
/// thief still reads is a data race loom reports. Bound 2: two threads.
#[test]
fn loom_producer_reuses_a_block_only_after_the_thief_read_it() {
    check(|| {
        let sink = Sink::default();
        let (mut owner, steal) = local();
        for task in 0..4 {
            owner.push_back_or_overflow(task, &sink);
        }
        let thief = spawn_thief(steal);
        let mut seen = drain(&mut owner);
        for task in 4..7 {
            owner.push_back_or_overflow(task, &sink);
        }
        seen.extend(drain(&mut owner));
        seen.extend(thief.join().unwrap());
        seen.extend(sink.0.take());
        assert_exactly_once(seen, 7);
    });
}

/// The version wrap: block 0 starts in round `u32::MAX`, so the owner's
/// second lap over it is round 0, while a thief looks at block 1 (round
/// `u32::MAX`) or, having fallen behind, at a block whose round moved on.
/// Bound 2: two threads.
#[test]
fn loom_rounds_wrap_while_a_thief_steals() {
    check(|| {
        let sink = Sink::default();
        let (mut owner, steal) = with_shape(DEFAULT_BLOCKS, DEFAULT_BLOCK_SIZE, u32::MAX);
        let thief = spawn_thief(steal);
        for task in 0..4 {
            owner.push_back_or_overflow(task, &sink);
        }
        let mut seen = drain(&mut owner);
        for task in 4..6 {
            owner.push_back_or_overflow(task, &sink);
        }
        seen.extend(drain(&mut owner));
        seen.extend(thief.join().unwrap());
        seen.extend(sink.0.take());
        assert_exactly_once(seen, 6);
    });
}

/// Two thieves race each other for block 1 while the owner pops. Bound 2:
/// three threads.
#[test]
fn loom_two_thieves_race() {
    check(|| {
        let sink = Sink::default();
        let (mut owner, steal) = local();
        for task in 0..4 {
            owner.push_back_or_overflow(task, &sink);
        }
        let first = spawn_thief(steal.clone());
        let second = spawn_thief(steal);
        let mut seen = drain(&mut owner);
        seen.extend(first.join().unwrap());
        seen.extend(second.join().unwrap());
        assert_exactly_once(seen, 4);
    });
}

/// A task that counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Relaxed);
    }
}

/// Dropping the owner's end drops what it holds exactly once, while a
/// thief holds a reservation or not. Bound 2: two threads.
#[test]
fn loom_owner_drop_races_a_steal() {
    check(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let sink_drops = Arc::new(AtomicUsize::new(0));
        let (mut owner, steal) = local();
        struct DropSink(Arc<AtomicUsize>);
        impl Overflow<Counted> for DropSink {
            fn push(&self, _task: Counted) {
                self.0.fetch_add(1, Relaxed);
            }
            fn push_batch<I: Iterator<Item = Counted>>(&self, tasks: I) {
                self.0.fetch_add(tasks.count(), Relaxed);
            }
        }
        let sink = DropSink(sink_drops.clone());
        for _ in 0..4 {
            owner.push_back_or_overflow(Counted(drops.clone()), &sink);
        }
        let thief = thread::spawn(move || {
            let (mut dst, _) = local();
            drop(steal.steal_into(&mut dst, u32::MAX));
        });
        drop(owner);
        thief.join().unwrap();
        assert_eq!(drops.load(Relaxed), 4);
        assert_eq!(sink_drops.load(Relaxed), 0);
    });
}
