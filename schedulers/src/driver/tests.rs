//! Driver tests that need no runtime: the test thread polls futures and
//! parks the driver itself (`block_on` below).

use std::future::{poll_fn, Future};
use std::io::{Read, Write};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering as StdOrdering};
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::net::{TcpListener, TcpStream};
use crate::runtime::context::enter_driver;
use crate::time::{sleep, sleep_until, timeout};

/// Sets a flag and unparks the driver (it may be woken from another thread).
struct Flag {
    woken: AtomicBool,
    handle: Handle,
}

impl Wake for Flag {
    fn wake(self: StdArc<Self>) {
        self.woken.store(true, StdOrdering::Release);
        self.handle.unpark();
    }
}

/// Polls `fut` on this thread, parking `driver` while it is pending.
fn block_on<F: Future>(driver: &mut Driver, fut: F) -> F::Output {
    let _ctx = enter_driver(driver.handle().clone());
    let flag = StdArc::new(Flag { woken: AtomicBool::new(false), handle: driver.handle().clone() });
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        while !flag.woken.swap(false, StdOrdering::Acquire) {
            driver.park(None);
        }
    }
}

fn new_driver() -> Driver {
    Driver::new(DriverConfig::default()).expect("epoll").0
}

/// A sleep already due at its first poll completes without a timer, so
/// the count is owed only when the first poll was pending: a thread
/// preempted past the deadline before that poll tries a longer lead.
#[test]
fn sleep_never_completes_early_and_is_counted() {
    let mut driver = new_driver();
    let _ctx = enter_driver(driver.handle().clone());
    let mut cx = Context::from_waker(Waker::noop());
    let mut lead = Duration::from_millis(3);
    let (deadline, mut s) = loop {
        let deadline = Instant::now() + lead;
        let mut s = Box::pin(sleep_until(deadline));
        if s.as_mut().poll(&mut cx).is_pending() {
            break (deadline, s);
        }
        assert!(Instant::now() >= deadline, "a {lead:?} sleep was ready before its deadline");
        assert!(lead < Duration::from_secs(10), "preempted past a {lead:?} lead every time");
        lead *= 4;
    };
    block_on(&mut driver, s.as_mut());
    assert!(Instant::now() >= deadline);
    let m = driver.handle().metrics();
    assert_eq!(m.timers_fired, 1);
    // One timer: its lateness is both the total and the maximum.
    assert_eq!(m.timer_lateness_us_max, m.timer_lateness_us_total);
}

/// A timer made at least 29 ms late (the driver is not parked until 30 ms
/// after its deadline, 1 ms ahead), then the peak is reset, then one more
/// timer: the maximum covers only the timers fired after the reset, while
/// the total keeps counting. If this thread was preempted past the
/// deadline between making the sleep and polling it (nothing filed), the
/// lead doubles and it tries again.
#[test]
fn the_lateness_maximum_covers_the_window_after_a_reset() {
    const HELD_UP: Duration = Duration::from_millis(30);
    let mut driver = new_driver();
    let _ctx = enter_driver(driver.handle().clone());
    let mut cx = Context::from_waker(Waker::noop());
    let mut lead = Duration::from_millis(1);
    let mut late = loop {
        let made = Instant::now();
        let mut late = Box::pin(sleep(lead));
        if late.as_mut().poll(&mut cx).is_pending() {
            break late;
        }
        assert!(made.elapsed() >= lead, "a {lead:?} sleep was ready before its deadline");
        assert!(lead < Duration::from_secs(1), "preempted past a {lead:?} lead every time");
        lead *= 2;
    };
    std::thread::sleep(HELD_UP);
    block_on(&mut driver, late.as_mut());
    let warm = driver.handle().metrics();
    assert_eq!(warm.timers_fired, 1);
    let held_up_us = u64::try_from((HELD_UP.saturating_sub(lead)).as_micros()).unwrap();
    assert!(warm.timer_lateness_us_max >= held_up_us, "{warm:?}");
    driver.handle().reset_peaks();
    assert_eq!(driver.handle().metrics().timer_lateness_us_max, 0);
    block_on(&mut driver, sleep(Duration::from_millis(2)));
    let m = driver.handle().metrics();
    assert_eq!(m.timers_fired, 2);
    // The window holds one timer: its lateness is the new total's increase.
    assert_eq!(m.timer_lateness_us_max, m.timer_lateness_us_total - warm.timer_lateness_us_total);
}

/// `timer_lock_contended` counts acquisitions that found the wheel's lock
/// held: a timer filed uncontended counts nothing; one filed by a thread
/// while the test holds the lock counts exactly one (its `try_lock` fails
/// once, then it waits for the lock).
#[test]
fn a_timer_filed_while_the_wheel_is_locked_counts_one_contention() {
    let driver = new_driver();
    let handle = driver.handle();
    let far = Instant::now() + Duration::from_secs(60);
    assert!(matches!(handle.shared.time.register(far, Waker::noop()), Registered::Pending { .. }));
    assert_eq!(handle.metrics().timer_lock_contended, 0, "uncontended");
    std::thread::scope(|s| {
        let guard = handle.shared.time.hold_lock();
        let filer = s.spawn(|| handle.shared.time.register(far, Waker::noop()));
        let start = Instant::now();
        while handle.metrics().timer_lock_contended == 0 {
            assert!(start.elapsed() < Duration::from_secs(20), "the blocked registration was not counted");
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(guard);
        assert!(matches!(filer.join().unwrap(), Registered::Pending { .. }));
    });
    assert_eq!(handle.metrics().timer_lock_contended, 1);
    assert_eq!(handle.shared.time.pending(), 2);
    assert_eq!(handle.metrics().timer_lock_contended, 1, "pending() locks uncontended");
}

#[test]
fn zero_past_and_max_sleeps_are_well_defined() {
    let mut driver = new_driver();
    block_on(&mut driver, sleep(Duration::ZERO));
    block_on(&mut driver, sleep_until(Instant::now() - Duration::from_millis(5)));
    let _ctx = enter_driver(driver.handle().clone());
    let mut far = sleep(Duration::MAX);
    let mut cx = Context::from_waker(Waker::noop());
    assert!(Pin::new(&mut far).poll(&mut cx).is_pending());
    assert_eq!(driver.handle().shared.time.pending(), 1);
    drop(far);
    assert_eq!(driver.handle().shared.time.pending(), 0, "drop cancels");
    driver.park(Some(Duration::ZERO));
    assert_eq!(driver.handle().metrics().timers_fired, 0);
}

/// Unparks a thread.
struct Unparker(std::thread::Thread);

impl Wake for Unparker {
    fn wake(self: StdArc<Self>) {
        self.0.unpark();
    }
}

/// Records the order in which timers are woken by the driver.
struct Recorder {
    id: usize,
    log: StdArc<std::sync::Mutex<Vec<usize>>>,
}

impl Wake for Recorder {
    fn wake(self: StdArc<Self>) {
        self.log.lock().unwrap().push(self.id);
    }
}

#[test]
fn timers_fire_once_in_deadline_order_and_cancelled_never() {
    const TIMERS: usize = 2_000;
    const SPREAD_MS: u64 = 40;
    let mut driver = new_driver();
    let _ctx = enter_driver(driver.handle().clone());
    let mut rng = StdRng::seed_from_u64(7);
    let log = StdArc::new(std::sync::Mutex::new(Vec::new()));
    let start = Instant::now();
    let deadlines: Vec<Instant> =
        (0..TIMERS).map(|_| start + Duration::from_micros(rng.random_range(0..SPREAD_MS * 1000))).collect();
    let mut sleeps: Vec<Option<crate::time::Sleep>> = Vec::new();
    let mut registered = vec![false; TIMERS];
    for (id, &d) in deadlines.iter().enumerate() {
        let waker = Waker::from(StdArc::new(Recorder { id, log: log.clone() }));
        let mut s = sleep_until(d);
        registered[id] = Pin::new(&mut s).poll(&mut Context::from_waker(&waker)).is_pending();
        sleeps.push(Some(s));
    }
    // Cancel every third timer that was filed.
    let cancelled: Vec<usize> = (0..TIMERS).filter(|&i| registered[i] && i % 3 == 0).collect();
    for &i in &cancelled {
        sleeps[i] = None;
    }
    let expected = registered.iter().filter(|&&r| r).count() - cancelled.len();
    while log.lock().unwrap().len() < expected {
        driver.park(None);
    }
    driver.park(Some(Duration::ZERO));
    let now = Instant::now();
    let order = log.lock().unwrap().clone();
    assert_eq!(order.len(), expected, "a timer fired twice or a cancelled one fired");
    let mut seen = vec![false; TIMERS];
    for w in order.windows(2) {
        // Deadlines a full millisecond apart fire in deadline order.
        assert!(
            deadlines[w[0]] < deadlines[w[1]] + Duration::from_millis(1),
            "{} fired before {} but is due {:?} later",
            w[0],
            w[1],
            deadlines[w[0]] - deadlines[w[1]]
        );
    }
    for &id in &order {
        assert!(!seen[id] && registered[id] && id % 3 != 0, "timer {id} fired unexpectedly");
        seen[id] = true;
        assert!(deadlines[id] <= now);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(sleeps[id].as_mut().unwrap()).poll(&mut cx).is_ready());
    }
    assert_eq!(driver.handle().metrics().timers_fired, expected as u64);
}

#[test]
fn earlier_timer_from_another_thread_unparks_a_blocked_driver() {
    let mut driver = new_driver();
    let handle = driver.handle().clone();
    let _ctx = enter_driver(handle.clone());
    let mut long = sleep(Duration::from_secs(30));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(Pin::new(&mut long).poll(&mut cx).is_pending());
    let fired = StdArc::new(AtomicBool::new(false));
    let thread = {
        let (fired, handle) = (fired.clone(), handle.clone());
        std::thread::spawn(move || {
            let _ctx = enter_driver(handle.clone());
            let waker = Waker::from(StdArc::new(Unparker(std::thread::current())));
            let mut short = sleep(Duration::from_millis(2));
            while Pin::new(&mut short).poll(&mut Context::from_waker(&waker)).is_pending() {
                std::thread::park();
            }
            fired.store(true, StdOrdering::Release);
            handle.unpark();
        })
    };
    // Blocks until the short timer (filed by the other thread, possibly
    // while we are already in epoll) fires, long before the 30 s one.
    while !fired.load(StdOrdering::Acquire) {
        driver.park(None);
    }
    thread.join().unwrap();
    assert!(Pin::new(&mut long).poll(&mut cx).is_pending(), "the 30 s timer fired");
}

#[test]
fn timeout_gives_elapsed_for_pending_and_value_for_ready() {
    let mut driver = new_driver();
    let pending = block_on(&mut driver, timeout(Duration::from_millis(2), std::future::pending::<()>()));
    assert!(pending.is_err());
    let ready = block_on(&mut driver, timeout(Duration::ZERO, async { 7 }));
    assert_eq!(ready, Ok(7));
}

#[test]
fn tcp_echo_through_the_driver() {
    let mut driver = new_driver();
    let listener = block_on(&mut driver, TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    let client = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        let msg: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        s.write_all(&msg).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut back = Vec::new();
        s.read_to_end(&mut back).unwrap();
        assert_eq!(back, msg);
    });
    block_on(&mut driver, async {
        let (stream, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            stream.write_all(&buf[..n]).await.unwrap();
        }
    });
    client.join().unwrap();
    assert!(driver.handle().metrics().io_events > 0);
}

#[test]
fn connect_errors_and_async_connect_succeeds() {
    let mut driver = new_driver();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);
    let err = block_on(&mut driver, TcpStream::connect(closed_addr)).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused, "{err}");
    let listener = block_on(&mut driver, TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    let in_use = block_on(&mut driver, TcpListener::bind(addr)).unwrap_err();
    assert_eq!(in_use.kind(), std::io::ErrorKind::AddrInUse, "{in_use}");
    let (a, b) = block_on(&mut driver, async {
        let connect = pin!(TcpStream::connect(addr));
        let accept = pin!(listener.accept());
        join(connect, accept).await
    });
    let (a, (b, peer)) = (a.unwrap(), b.unwrap());
    assert_eq!(a.local_addr().unwrap(), peer);
    a.set_nodelay(true).unwrap();
    assert!(a.nodelay().unwrap());
    block_on(&mut driver, async {
        a.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        b.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ping");
        drop(a);
        assert_eq!(b.read(&mut buf).await.unwrap(), 0, "closed stream reads 0");
    });
}

/// Polls two futures until both are done.
async fn join<A: Future + Unpin, B: Future + Unpin>(mut a: A, mut b: B) -> (A::Output, B::Output) {
    let (mut ra, mut rb) = (None, None);
    poll_fn(|cx| {
        if ra.is_none() {
            if let Poll::Ready(v) = Pin::new(&mut a).poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let Poll::Ready(v) = Pin::new(&mut b).poll(cx) {
                rb = Some(v);
            }
        }
        if ra.is_some() && rb.is_some() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    (ra.unwrap(), rb.unwrap())
}

#[test]
fn shutdown_wakes_sockets_and_timers_and_refuses_new_ones() {
    let mut driver = new_driver();
    let _ctx = enter_driver(driver.handle().clone());
    let listener = block_on(&mut driver, TcpListener::bind("127.0.0.1:0")).unwrap();
    let (woken, waker) = crate::test_util::counting_waker();
    let mut cx = Context::from_waker(&waker);
    let mut accept = Box::pin(listener.accept());
    let mut nap = sleep(Duration::from_secs(60));
    assert!(accept.as_mut().poll(&mut cx).is_pending());
    assert!(Pin::new(&mut nap).poll(&mut cx).is_pending());
    driver.shutdown();
    assert!(driver.handle().is_shutdown());
    assert_eq!(woken.get(), 2);
    match accept.as_mut().poll(&mut cx) {
        Poll::Ready(Err(e)) => assert_eq!(e.to_string(), io::SHUTDOWN_MESSAGE),
        other => panic!("accept after shutdown: {other:?}"),
    }
    assert!(Pin::new(&mut nap).poll(&mut cx).is_ready());
    assert!(Pin::new(&mut sleep(Duration::from_secs(60))).poll(&mut cx).is_ready());
    let err = block_on(&mut driver, TcpListener::bind("127.0.0.1:0")).unwrap_err();
    assert_eq!(err.to_string(), io::SHUTDOWN_MESSAGE);
}
