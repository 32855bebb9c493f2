//! The arrivals a client thread released and has not sent yet.

use std::time::Instant;

use crate::arrivals::Arrivals;

/// A request waiting for a connection.
#[derive(Clone, Copy)]
pub(crate) struct Pending {
    pub id: u64,
    pub intended: Instant,
}

/// The arrivals released (due) and not yet sent, oldest first, in constant
/// memory whatever the overload: a clone of the thread's schedule, taken
/// before the first arrival, replays the same sequence one step behind
/// the release side, so the backlog is a count plus that cursor (a queue
/// of 24-byte entries grew by the offered rate under overload: 1.4 GB for
/// 60 s at 1M/s).
pub(crate) struct Backlog {
    replay: Arrivals,
    start: Instant,
    /// Released and not yet taken.
    waiting: u64,
    /// The oldest waiting one, once drawn from `replay`.
    head: Option<Pending>,
    next_id: u64,
    step: u64,
}

impl Backlog {
    /// The backlog of a schedule whose first id is `first_id`, ids stepping
    /// by `step`; `replay` is a clone of the schedule before any draw.
    pub(crate) fn new(replay: Arrivals, start: Instant, first_id: u64, step: u64) -> Backlog {
        Backlog { replay, start, waiting: 0, head: None, next_id: first_id, step }
    }

    /// The release side took its next arrival from the schedule.
    pub(crate) fn release(&mut self) {
        self.waiting += 1;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.waiting == 0
    }

    /// The oldest waiting arrival, left in place.
    pub(crate) fn front(&mut self) -> Option<Pending> {
        if self.waiting == 0 {
            return None;
        }
        if self.head.is_none() {
            let intended = self.replay.next_at(self.start);
            self.head = Some(Pending { id: self.next_id, intended });
            self.next_id += self.step;
        }
        self.head
    }

    /// Takes the oldest waiting arrival.
    pub(crate) fn pop(&mut self) -> Option<Pending> {
        let p = self.front()?;
        self.head = None;
        self.waiting -= 1;
        Some(p)
    }
}
