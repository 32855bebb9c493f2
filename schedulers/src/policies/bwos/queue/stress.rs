//! Many-thread runs with real threads: one owner pushing (with overflow)
//! and popping, thieves stealing from it and from each other, every task
//! accounted for with per-task flags. Rounds start just below `u32::MAX`
//! so the version wraps while threads race.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Barrier;
use std::thread;

use super::*;
use crate::test_util::queue::{Inject, Ledger, Rng, Task};

/// `thieves` threads with their own queues steal (at most `max` per steal)
/// from the owner and each other; `drain`: everyone runs everything.
fn run(tasks: usize, blocks: usize, block_size: usize, thieves: &[u32], drain: bool) {
    let ledger = Ledger::new(tasks);
    let inject = Inject::default();
    let done = AtomicBool::new(false);
    let barrier = Barrier::new(thieves.len() + 1);
    let start_round = u32::MAX - 2;
    let (mut owner, owner_steal) = with_shape(blocks, block_size, start_round);
    let mut queues: Vec<_> = thieves.iter().map(|_| with_shape(blocks, block_size, start_round)).collect();
    let mut steals: Vec<_> = queues.iter().map(|(_, s)| s.clone()).collect();
    steals.insert(0, owner_steal);
    thread::scope(|scope| {
        for (index, ((dst, _), &max)) in queues.drain(..).zip(thieves).enumerate() {
            let victims: Vec<_> =
                steals.iter().enumerate().filter(|&(v, _)| v != index + 1).map(|(_, s)| s.clone()).collect();
            let (done, barrier) = (&done, &barrier);
            scope.spawn(move || thief(dst, victims, max, done, barrier, drain));
        }
        barrier.wait();
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut next = 0;
        while next < tasks {
            let burst = (1 + rng.below(2 * blocks * block_size)).min(tasks - next);
            for id in next..next + burst {
                owner.push_back_or_overflow(ledger.task(id), &inject);
            }
            next += burst;
            for _ in 0..rng.below(burst + 1) {
                let Some(task) = owner.pop() else { break };
                task.run();
            }
            // Not for correctness: on a machine with fewer cores than
            // threads, thieves would otherwise rarely overlap the owner.
            thread::yield_now();
        }
        if drain {
            while let Some(task) = owner.pop() {
                task.run();
            }
        }
        done.store(true, SeqCst);
    });
    let spilled = inject.into_tasks();
    if drain {
        spilled.into_iter().for_each(Task::run);
    } else {
        drop(spilled);
    }
    drop((owner, steals));
    ledger.check(drain);
}

fn thief<'a>(
    mut dst: Local<Task<'a>>,
    victims: Vec<Steal<Task<'a>>>,
    max: u32,
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
        if let Some((task, moved)) = victims.iter().find_map(|v| v.steal_into(&mut dst, max)) {
            assert!(moved as u32 <= max.max(1), "stole {moved} with max {max}");
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
fn default_shape_exactly_once() {
    run(300_000, DEFAULT_BLOCKS, DEFAULT_BLOCK_SIZE, &[u32::MAX; 3], true);
}

#[test]
fn small_blocks_mixed_limits_exactly_once() {
    run(200_000, 4, 2, &[u32::MAX, 1, 3], true);
}

#[test]
fn tasks_left_behind_are_dropped_exactly_once() {
    run(200_000, 2, 8, &[u32::MAX, 2], false);
}
