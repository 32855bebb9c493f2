//! Unit tests of the steal-half ring.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32 as StdAtomicU32, Ordering::SeqCst};
use std::sync::Arc as StdArc;

use super::*;
use crate::test_util::queue::Sink;

/// Small enough to enumerate every fill level, big enough that half of
/// it is not 1.
const CAPACITY: usize = 16;

fn filled(capacity: usize, start: u32, count: u32) -> (Local<u32>, Steal<u32>) {
    let (mut local, steal) = with_start_index(capacity, start);
    local.push_back(0..count);
    (local, steal)
}

fn drain<T>(local: &mut Local<T>) -> Vec<T> {
    std::iter::from_fn(|| local.pop()).collect()
}

#[test]
fn pack_round_trips_and_puts_steal_head_high() {
    for (steal, real) in [(0, 0), (1, 2), (u32::MAX, 0), (0, u32::MAX), (7, u32::MAX - 1)] {
        assert_eq!(unpack(pack(steal, real)), (steal, real));
    }
    assert_eq!(pack(1, 0), 1 << 32);
    assert_eq!(pack(0, 1), 1);
}

#[test]
#[should_panic(expected = "power of two")]
fn rejects_capacity_not_power_of_two() {
    let _ = local::<u32>(3 * MIN_CAPACITY);
}

#[test]
#[should_panic(expected = "power of two")]
fn rejects_capacity_below_minimum() {
    let _ = local::<u32>(MIN_CAPACITY / 2);
}

#[test]
fn pops_in_fifo_order_with_interleaved_pushes() {
    let sink = Sink::default();
    let (mut local, _steal) = local(CAPACITY);
    assert!(local.is_empty());
    assert_eq!(local.pop(), None);
    for task in 0..5 {
        assert!(!local.push_back_or_overflow(task, &sink));
    }
    assert_eq!(local.pop(), Some(0));
    assert_eq!(local.pop(), Some(1));
    local.push_back(5..8);
    assert_eq!(local.len(), 6);
    assert_eq!(drain(&mut local), vec![2, 3, 4, 5, 6, 7]);
    assert!(sink.singles.borrow().is_empty() && sink.batches.borrow().is_empty());
}

#[test]
fn len_and_remaining_slots_track_pushes_and_pops() {
    let (mut local, steal) = filled(CAPACITY, 0, 5);
    assert_eq!((local.capacity(), local.len(), local.remaining_slots()), (16, 5, 11));
    assert_eq!((steal.len(), steal.is_empty()), (5, false));
    local.pop();
    assert_eq!((local.len(), local.remaining_slots(), steal.len()), (4, 12, 4));
}

#[test]
fn overflow_moves_half_plus_new_task_in_one_batch() {
    let sink = Sink::default();
    let (mut local, _steal) = filled(CAPACITY, 0, CAPACITY as u32);
    assert_eq!(local.remaining_slots(), 0);
    assert!(local.push_back_or_overflow(100, &sink));
    let expected: Vec<u32> = (0..8).chain([100]).collect();
    assert_eq!(*sink.batches.borrow(), vec![expected]);
    assert!(sink.singles.borrow().is_empty());
    assert_eq!(drain(&mut local), (8..16).collect::<Vec<_>>());
}

#[test]
fn overflow_during_a_claim_moves_only_the_new_task() {
    let sink = Sink::default();
    let (mut local, steal) = filled(CAPACITY, 0, CAPACITY as u32);
    let (first, count) = steal.claim(StealLimit::AtMost(2), u32::MAX).unwrap();
    assert_eq!((first, count), (0, 2));
    assert!(local.push_back_or_overflow(100, &sink));
    assert_eq!(*sink.singles.borrow(), vec![100]);
    assert!(sink.batches.borrow().is_empty());
    // The owner may pop past the claim, and the claim ends cleanly.
    assert_eq!(local.pop(), Some(2));
    // SAFETY: indices 0 and 1 are claimed above and read only here.
    let claimed = unsafe { [steal.0.take(0), steal.0.take(1)] };
    assert_eq!(claimed, [0, 1]);
    steal.end_claim(first);
    assert_eq!(unpack(steal.0.head.load(SeqCst)), (3, 3));
    assert!(!local.push_back_or_overflow(101, &sink));
    assert_eq!(local.remaining_slots(), 2);
}

#[test]
#[should_panic(expected = "unconsumed")]
fn overflow_asserts_that_the_sink_took_the_whole_batch() {
    struct TakesOne;
    impl Overflow<u32> for TakesOne {
        fn push(&self, _task: u32) {}
        fn push_batch<I: Iterator<Item = u32>>(&self, mut tasks: I) {
            tasks.next();
        }
    }
    let (mut local, _steal) = filled(MIN_CAPACITY, 0, MIN_CAPACITY as u32);
    local.push_back_or_overflow(9, &TakesOne);
}

#[test]
fn steal_half_takes_the_ceiling_of_half_for_every_fill_level() {
    for n in 1..=CAPACITY as u32 {
        let (mut src, steal) = filled(CAPACITY, 0, n);
        let (mut dst, _) = local::<u32>(CAPACITY);
        let expected = n - n / 2;
        let (last, moved) = steal.steal_into(&mut dst, StealLimit::Half).unwrap();
        assert_eq!((last, moved), (expected - 1, expected as usize), "n = {n}");
        assert_eq!(drain(&mut dst), (0..expected - 1).collect::<Vec<_>>(), "n = {n}");
        assert_eq!(drain(&mut src), (expected..n).collect::<Vec<_>>(), "n = {n}");
    }
}

#[test]
fn steal_at_most_respects_its_limit() {
    for (limit, n, expected) in [(1, 5, 1), (3, 5, 3), (3, 2, 2), (0, 5, 0), (100, 16, 16)] {
        let (mut src, steal) = filled(CAPACITY, 0, n);
        let (mut dst, _) = local::<u32>(CAPACITY);
        let got = steal.steal_into(&mut dst, StealLimit::AtMost(limit));
        assert_eq!(got.map(|(_, moved)| moved), (expected > 0).then_some(expected as usize));
        assert_eq!(src.len() + dst.len() + got.iter().count(), n as usize);
        assert_eq!(drain(&mut src).first().copied(), (expected < n).then_some(expected));
    }
}

#[test]
fn steal_from_empty_returns_none() {
    let (_src, steal) = local::<u32>(CAPACITY);
    let (mut dst, _) = local::<u32>(CAPACITY);
    assert!(steal.steal_into(&mut dst, StealLimit::Half).is_none());
    assert!(dst.is_empty());
}

#[test]
fn steal_refused_when_dst_more_than_half_full() {
    let (src, steal) = filled(CAPACITY, 0, 10);
    let half = CAPACITY as u32 / 2;
    let (mut dst, _) = filled(CAPACITY, 0, half + 1);
    assert!(steal.steal_into(&mut dst, StealLimit::Half).is_none());
    assert_eq!((src.len(), dst.len()), (10, 9));
    dst.pop();
    let (_, moved) = steal.steal_into(&mut dst, StealLimit::Half).unwrap();
    assert_eq!((moved, src.len(), dst.len()), (5, 5, 12));
}

#[test]
fn steal_refused_while_another_claim_is_held() {
    let (_src, steal) = filled(CAPACITY, 0, 10);
    let (first, _) = steal.claim(StealLimit::AtMost(1), u32::MAX).unwrap();
    let (mut dst, _) = local::<u32>(CAPACITY);
    assert!(steal.clone().steal_into(&mut dst, StealLimit::Half).is_none());
    // SAFETY: index 0 is claimed above.
    assert_eq!(unsafe { steal.0.take(first) }, 0);
    steal.end_claim(first);
    assert_eq!(steal.steal_into(&mut dst, StealLimit::Half).map(|(_, n)| n), Some(5));
}

#[test]
fn steal_is_capped_by_a_smaller_dst() {
    let big = MIN_CAPACITY * 16;
    let (mut src, steal) = filled(big, 0, big as u32);
    let (mut dst, _) = local::<u32>(MIN_CAPACITY);
    let (last, moved) = steal.steal_into(&mut dst, StealLimit::Half).unwrap();
    assert_eq!((last, moved), (MIN_CAPACITY as u32, MIN_CAPACITY + 1));
    assert_eq!(drain(&mut dst), (0..MIN_CAPACITY as u32).collect::<Vec<_>>());
    assert_eq!(src.pop(), Some(MIN_CAPACITY as u32 + 1));
}

#[test]
#[should_panic(expected = "its own queue")]
fn steal_from_own_queue_panics() {
    let (mut local, steal) = filled(CAPACITY, 0, 4);
    steal.steal_into(&mut local, StealLimit::Half);
}

#[test]
fn indices_wrap_around_u32_max() {
    let sink = Sink::default();
    let start = u32::MAX - 3;
    let (mut local, steal) = filled(CAPACITY, start, 10);
    assert_eq!(local.len(), 10);
    assert_eq!(local.pop(), Some(0));
    let (mut dst, _) = with_start_index::<u32>(CAPACITY, u32::MAX - 1);
    let (last, moved) = steal.steal_into(&mut dst, StealLimit::Half).unwrap();
    assert_eq!((last, moved), (5, 5));
    assert_eq!(drain(&mut dst), vec![1, 2, 3, 4]);
    local.push_back(10..22);
    assert_eq!(local.remaining_slots(), 0);
    assert!(local.push_back_or_overflow(99, &sink));
    assert_eq!(sink.batches.borrow()[0], (6..14).chain([99]).collect::<Vec<_>>());
    assert_eq!(drain(&mut local), (14..22).collect::<Vec<_>>());
}

#[test]
#[should_panic(expected = "free slots")]
fn push_back_panics_past_remaining_slots() {
    let (mut local, _steal) = filled(MIN_CAPACITY, 0, 1);
    local.push_back(0..MIN_CAPACITY as u32);
}

#[test]
fn push_back_publishes_what_a_panicking_iterator_yielded() {
    let (mut local, _steal) = local::<u32>(CAPACITY);
    let tasks = (0..4).inspect(|&task| assert!(task < 2, "iterator gives up"));
    let result = catch_unwind(AssertUnwindSafe(|| local.push_back(tasks)));
    assert!(result.is_err());
    assert_eq!(drain(&mut local), vec![0, 1]);
}

/// A task that counts its drops in a per-id slot.
struct Tracked {
    id: usize,
    drops: StdArc<Vec<StdAtomicU32>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, SeqCst);
    }
}

fn drop_counters(count: usize) -> StdArc<Vec<StdAtomicU32>> {
    StdArc::new((0..count).map(|_| StdAtomicU32::new(0)).collect())
}

fn tracked(drops: &StdArc<Vec<StdAtomicU32>>, ids: std::ops::Range<usize>) -> Vec<Tracked> {
    ids.map(|id| Tracked { id, drops: drops.clone() }).collect()
}

fn assert_each_dropped_once(drops: &[StdAtomicU32]) {
    for (id, count) in drops.iter().enumerate() {
        assert_eq!(count.load(SeqCst), 1, "task {id}");
    }
}

#[test]
fn every_task_dropped_exactly_once_including_on_queue_drop() {
    let total = 3 * CAPACITY;
    let drops = drop_counters(total);
    let sink = Sink::default();
    let (mut src, steal) = with_start_index(CAPACITY, u32::MAX - 2);
    let (mut dst, dst_steal) = local(CAPACITY);
    for task in tracked(&drops, 0..CAPACITY + 1) {
        src.push_back_or_overflow(task, &sink);
    }
    drop(src.pop());
    let stolen = steal.steal_into(&mut dst, StealLimit::Half);
    assert!(stolen.is_some());
    drop(stolen);
    // The four pushed stay queued; the iterator drops the rest.
    dst.push_back(tracked(&drops, CAPACITY + 1..total).into_iter().take(4));
    drop(sink);
    // Tasks are left in both rings; the order of the last drops varies.
    drop(src);
    drop(dst_steal);
    drop(steal);
    drop(dst);
    assert_each_dropped_once(&drops);
}

#[test]
fn unconsumed_overflow_batch_is_dropped_not_leaked() {
    struct DropsBatch;
    impl Overflow<Tracked> for DropsBatch {
        fn push(&self, _task: Tracked) {}
        fn push_batch<I: Iterator<Item = Tracked>>(&self, _tasks: I) {}
    }
    let drops = drop_counters(MIN_CAPACITY + 1);
    let (mut local, steal) = local(MIN_CAPACITY);
    let mut tasks = tracked(&drops, 0..MIN_CAPACITY + 1);
    let last = tasks.pop().unwrap();
    local.push_back(tasks.into_iter());
    let result = catch_unwind(AssertUnwindSafe(|| local.push_back_or_overflow(last, &DropsBatch)));
    assert!(result.is_err());
    drop(local);
    drop(steal);
    assert_each_dropped_once(&drops);
}

#[test]
fn handles_are_send_and_steal_is_sync() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<Local<Box<u8>>>();
    send::<Steal<Box<u8>>>();
    sync::<Steal<Box<u8>>>();
}
