//! loom models of the driver's readiness handshake (`driver/io.rs`): a
//! registration racing the driver's dispatch. Declared inside
//! `driver::io` (`#[path]`) so they see its private items; kept here with
//! every other loom model.

use std::task::Wake;

use loom::thread;

use super::*;

/// Counts wakes.
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: std::sync::Arc<Self>) {
        // Relaxed: read after `join`, which orders it.
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A driver thread running `step` (which hands back the wakers to wake)
/// racing a registration for `dir` on this thread. Returns what the
/// registration's poll saw and how often its waker was woken.
fn step_versus_registration(
    step: fn(&ScheduledIo, &mut Vec<Waker>),
    dir: Direction,
) -> (Poll<io::Result<ReadyEvent>>, usize) {
    let io = Arc::new(ScheduledIo::new());
    let count = std::sync::Arc::new(Count(AtomicUsize::new(0)));
    let waker = Waker::from(count.clone());
    let driver = {
        let io = io.clone();
        thread::spawn(move || {
            let mut out = Vec::new();
            step(&io, &mut out);
            out.into_iter().for_each(Waker::wake);
        })
    };
    let polled = io.poll_ready(&mut Context::from_waker(&waker), dir);
    driver.join().unwrap();
    (polled, count.0.load(Ordering::Relaxed))
}

/// The driver's step 1 racing a resource's step 2: the resource either
/// sees the readiness or is woken (no lost wake-up).
#[test]
fn readiness_versus_registration_loses_no_wakeup() {
    loom::model(|| {
        let step = |io: &ScheduledIo, out: &mut Vec<Waker>| {
            io.set_readiness(READABLE);
            io.take_wakers(READABLE, out);
        };
        let (polled, woken) = step_versus_registration(step, Direction::Read);
        assert!(polled.is_ready() || woken == 1, "neither ready nor woken");
    });
}

/// A clear after `WouldBlock` racing a new event: the new event's bit
/// survives unless it was the event the resource saw.
#[test]
fn clear_never_erases_a_newer_event() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        io.set_readiness(READABLE);
        let driver = {
            let io = io.clone();
            thread::spawn(move || io.set_readiness(READABLE))
        };
        let waker = Waker::noop();
        let Poll::Ready(Ok(seen)) = io.poll_ready(&mut Context::from_waker(waker), Direction::Read) else {
            panic!("readable was set before the model started");
        };
        io.clear_readiness(seen);
        driver.join().unwrap();
        let word = io.readiness.load(Ordering::Acquire);
        let both_events_seen = seen.tick == 2;
        assert!(word & READABLE != 0 || both_events_seen, "newer event erased: word {word:#x} seen {seen:?}");
    });
}

/// Shutdown racing a registration: the resource sees the shutdown or is
/// woken by it.
#[test]
fn shutdown_versus_registration_loses_no_wakeup() {
    loom::model(|| {
        let (polled, woken) = step_versus_registration(ScheduledIo::shutdown, Direction::Write);
        let failed = matches!(polled, Poll::Ready(Err(_)));
        assert!(failed || woken == 1, "shutdown lost: {polled:?}");
    });
}
