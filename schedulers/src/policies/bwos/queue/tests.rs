//! Unit tests of the BWoS queue. Expected values are worked out by hand
//! from the protocols in the module doc, on small shapes.

use std::sync::atomic::{AtomicU32 as StdAtomicU32, Ordering::SeqCst};
use std::sync::Arc as StdArc;

use super::steal::Look;
use super::*;
use crate::test_util::queue::Sink;

fn filled(blocks: usize, size: usize, start_round: u32, count: u32) -> (Local<u32>, Steal<u32>) {
    let (mut local, steal) = with_shape(blocks, size, start_round);
    let sink = Sink::default();
    for task in 0..count {
        assert!(!local.push_back_or_overflow(task, &sink), "task {task} overflowed");
    }
    (local, steal)
}

fn drain<T>(local: &mut Local<T>) -> Vec<T> {
    std::iter::from_fn(|| local.pop()).collect()
}

fn empty_dst() -> Local<u32> {
    with_shape(4, 4, 0).0
}

#[test]
fn pack_round_trips_and_puts_round_high() {
    for (round, index) in [(0, 0), (1, 2), (u32::MAX, 0), (0, u32::MAX)] {
        assert_eq!(unpack(pack(round, index)), (round, index));
    }
    assert_eq!(pack(1, 0), 1 << 32);
}

#[test]
#[should_panic(expected = "power of two")]
fn rejects_block_count_not_power_of_two() {
    let _ = with_shape::<u32>(3, 4, 0);
}

#[test]
fn pops_in_fifo_order_across_blocks() {
    let (mut local, _steal) = filled(4, 4, 0, 10);
    assert_eq!(local.pop(), Some(0));
    local.push_back_or_overflow(10, &Sink::default());
    assert_eq!(drain(&mut local), (1..11).collect::<Vec<_>>());
    assert!(local.is_empty());
}

#[test]
fn len_stealable_and_free_slots_by_hand() {
    // 4 blocks of 4: fresh, every block is free to the producer.
    let (mut local, steal) = with_shape::<u32>(4, 4, 0);
    assert_eq!((local.capacity(), local.len(), local.stealable(), local.remaining_slots()), (16, 0, 0, 16));
    local.push_back(0..5);
    // Block 0 holds 0..4 (the consumer's), block 1 holds 4.
    assert_eq!((local.len(), local.stealable(), local.remaining_slots(), steal.len()), (5, 1, 11, 1));
    local.push_back(5..10);
    assert_eq!((local.len(), local.stealable(), steal.len()), (10, 6, 6));
    assert_eq!(local.pop(), Some(0));
    // Block 0 is still the consumer's: the producer may not re-enter it.
    assert_eq!((local.len(), local.remaining_slots()), (9, 6));
}

#[test]
fn a_queue_within_the_consumer_block_cannot_be_stolen() {
    let (local, steal) = filled(4, 4, 0, 4);
    assert_eq!((local.len(), steal.len()), (4, 0));
    assert!(steal.steal_into(&mut empty_dst(), u32::MAX).is_none());
}

#[test]
fn a_steal_takes_one_block_and_the_owner_skips_it() {
    // Blocks: 0 = 0..4 (consumer), 1 = 4..8, 2 = 8..10 (producer).
    let (mut local, steal) = filled(4, 4, 0, 10);
    let mut dst = empty_dst();
    assert_eq!(steal.steal_into(&mut dst, u32::MAX), Some((7, 4)));
    assert_eq!(drain(&mut dst), vec![4, 5, 6]);
    // Block 1 is used up: the next steal moves `spos` on to block 2.
    assert_eq!(steal.steal_into(&mut dst, u32::MAX), Some((9, 2)));
    assert_eq!(drain(&mut dst), vec![8]);
    assert!(steal.steal_into(&mut dst, u32::MAX).is_none());
    assert_eq!(drain(&mut local), vec![0, 1, 2, 3]);
    // Producer and consumer now share block 2, which thieves emptied.
    local.push_back_or_overflow(10, &Sink::default());
    assert_eq!(drain(&mut local), vec![10]);
}

#[test]
fn steal_respects_max_and_refuses_a_half_full_dst() {
    let (_local, steal) = filled(4, 4, 0, 12);
    let mut dst = empty_dst();
    assert_eq!(steal.steal_into(&mut dst, 1), Some((4, 1)));
    assert_eq!(steal.steal_into(&mut dst, 2), Some((6, 2)));
    assert_eq!(drain(&mut dst), vec![5]);
    let (mut full, _) = filled(4, 4, 0, 9);
    assert!(steal.steal_into(&mut full, u32::MAX).is_none(), "9 of 16 is more than half");
    full.pop();
    assert_eq!(steal.steal_into(&mut full, u32::MAX), Some((7, 1)));
}

#[test]
fn a_steal_into_a_small_dst_is_capped_by_its_room() {
    let (_local, steal) = filled(2, 16, 0, 32);
    // 2 blocks of 2: room 4 when empty, so at most 4 + 1 move.
    let (mut dst, _) = with_shape::<u32>(2, 2, 0);
    assert_eq!(steal.steal_into(&mut dst, u32::MAX), Some((20, 5)));
    assert_eq!(drain(&mut dst), vec![16, 17, 18, 19]);
}

#[test]
#[should_panic(expected = "its own queue")]
fn steal_from_own_queue_panics() {
    let (mut local, steal) = filled(4, 4, 0, 6);
    steal.steal_into(&mut local, u32::MAX);
}

#[test]
fn overflow_spills_the_consumer_block_and_the_new_task() {
    let sink = Sink::default();
    let (mut local, _steal) = filled(2, 4, 0, 8);
    assert_eq!(local.remaining_slots(), 0);
    assert!(local.push_back_or_overflow(8, &sink));
    assert_eq!(*sink.batches.borrow(), vec![vec![0, 1, 2, 3, 8]]);
    assert!(sink.singles.borrow().is_empty());
    assert!(!local.push_back_or_overflow(9, &sink));
    assert_eq!(drain(&mut local), vec![4, 5, 6, 7, 9]);
}

#[test]
fn overflow_while_a_thief_reads_the_next_block_spills_only_the_new_task() {
    let sink = Sink::default();
    // 4 blocks of 2: block 0 = 0,1; block 1 = 2,3 (the producer's).
    let (mut local, steal) = filled(4, 2, 0, 4);
    let Look::Reserved { seq, first, count } = steal.look(u32::MAX) else { panic!("nothing reserved") };
    assert_eq!((seq, first, count), (1, 0, 2));
    // The consumer passes block 1 (all of it reserved) while the thief reads.
    assert_eq!(drain(&mut local), vec![0, 1]);
    for task in 10..16 {
        assert!(!local.push_back_or_overflow(task, &sink), "blocks 2, 3 and 0 are free");
    }
    assert_eq!(local.pop(), Some(10));
    // Block 1 is next; the thief has not finished it.
    assert_eq!(local.remaining_slots(), 0);
    assert!(local.push_back_or_overflow(16, &sink));
    assert_eq!(*sink.singles.borrow(), vec![16]);
    let mut dst = empty_dst();
    assert_eq!(steal.finish(&mut dst, seq, first, count), (3, 2));
    assert_eq!(drain(&mut dst), vec![2]);
    assert_eq!(local.remaining_slots(), 2);
    assert!(!local.push_back_or_overflow(17, &sink));
    assert_eq!(drain(&mut local), vec![11, 12, 13, 14, 15, 17]);
}

#[test]
#[should_panic(expected = "overflow sink left 4 tasks unconsumed")]
fn overflow_asserts_that_the_sink_took_the_whole_batch() {
    struct TakesOne;
    impl Overflow<u32> for TakesOne {
        fn push(&self, _task: u32) {}
        fn push_batch<I: Iterator<Item = u32>>(&self, mut tasks: I) {
            tasks.next();
        }
    }
    let (mut local, _steal) = filled(2, 4, 0, 8);
    local.push_back_or_overflow(8, &TakesOne);
}

#[test]
fn rounds_wrap_from_u32_max_to_zero() {
    let sink = Sink::default();
    // 2 blocks of 2, block 0 in round u32::MAX: block 1 starts in round
    // MAX too, and block 0's next lap is round 0.
    let (mut local, steal) = filled(2, 2, u32::MAX, 4);
    let mut dst = empty_dst();
    assert_eq!(steal.steal_into(&mut dst, u32::MAX), Some((3, 2)));
    assert_eq!(drain(&mut local), vec![0, 1]);
    for task in 4..6 {
        assert!(!local.push_back_or_overflow(task, &sink));
    }
    assert_eq!(unpack(local.inner.blocks[0].committed.load(SeqCst)), (0, 2), "block 0 wrapped to round 0");
    assert_eq!(drain(&mut local), vec![4, 5]);
    for task in 6..10 {
        assert!(!local.push_back_or_overflow(task, &sink));
    }
    assert_eq!(steal.steal_into(&mut dst, u32::MAX), Some((9, 2)));
    assert_eq!(drain(&mut local), vec![6, 7]);
    assert_eq!(drain(&mut dst), vec![2, 8]);
    assert!(sink.singles.borrow().is_empty() && sink.batches.borrow().is_empty());
}

#[test]
fn a_stale_thief_position_is_caught_up_by_the_consumer() {
    // Many laps with no thief: `spos` must stay ahead of the consumer so
    // that a late thief still finds the stealable block.
    let (mut local, steal) = with_shape::<u32>(4, 2, 0);
    let sink = Sink::default();
    for task in 0..100 {
        local.push_back_or_overflow(task, &sink);
        assert_eq!(local.pop(), Some(task));
    }
    local.push_back(100..106);
    let mut dst = empty_dst();
    // Blocks: consumer 100,101 (seq 50); 102,103 (51); 104,105 (52).
    assert_eq!(steal.steal_into(&mut dst, u32::MAX), Some((103, 2)));
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

#[test]
fn every_task_dropped_exactly_once_including_on_queue_drop() {
    let total = 40;
    let drops: StdArc<Vec<StdAtomicU32>> = StdArc::new((0..total).map(|_| StdAtomicU32::new(0)).collect());
    let sink = Sink::default();
    let (mut src, steal) = with_shape(4, 4, u32::MAX - 1);
    let (mut dst, dst_steal) = with_shape(4, 4, 0);
    for id in 0..total {
        src.push_back_or_overflow(Tracked { id, drops: drops.clone() }, &sink);
    }
    drop(src.pop());
    drop(steal.steal_into(&mut dst, u32::MAX));
    drop(sink);
    drop(src);
    drop(dst_steal);
    drop(steal);
    drop(dst);
    for (id, count) in drops.iter().enumerate() {
        assert_eq!(count.load(SeqCst), 1, "task {id}");
    }
}

#[test]
fn handles_are_send_and_steal_is_sync() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<Local<Box<u8>>>();
    send::<Steal<Box<u8>>>();
    sync::<Steal<Box<u8>>>();
}
