//! A policy written outside the crate, with the public extension API only,
//! runs on the same runtime core as ours: tasks, wakers, JoinHandle, the
//! timer wheel, the epoll reactor, the blocking pool, counters, knobs and
//! shutdown all work for it.

use std::collections::VecDeque;
use std::future::Future as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use wsbench_schedulers::knobs::{Knobs, CORE_KNOBS};
use wsbench_schedulers::policy::{Event, Notified, Origin, Policy, Wake, WorkerRef};
use wsbench_schedulers::{register, spawn, Builder, PolicyInfo, SchedulerKind, WorkerRule};

/// One FIFO behind a mutex; pushes from workers and from outside alike.
struct Fifo {
    queue: Mutex<(VecDeque<Notified>, bool)>,
}

impl Policy for Fifo {
    type Core = ();
    const STEALS: bool = false;

    fn new(workers: usize, _knobs: &Knobs) -> (Self, Vec<()>) {
        (Fifo { queue: Mutex::new((VecDeque::new(), false)) }, vec![(); workers])
    }

    fn push_local(&self, _core: &mut (), _w: &WorkerRef<'_>, task: Notified, _origin: Origin) -> bool {
        let mut q = self.queue.lock().unwrap();
        if !q.1 {
            q.0.push_back(task);
        }
        true
    }

    fn push_remote(&self, task: Notified) -> Result<Wake, Notified> {
        let mut q = self.queue.lock().unwrap();
        if q.1 {
            return Err(task);
        }
        q.0.push_back(task);
        Ok(Wake::Any)
    }

    fn next_task(&self, _core: &mut (), w: &WorkerRef<'_>) -> Option<Notified> {
        let task = self.queue.lock().unwrap().0.pop_front()?;
        w.count(Event::InjectPop, 1);
        Some(task)
    }

    fn steal(&self, _core: &mut (), _w: &WorkerRef<'_>) -> Option<Notified> {
        None
    }

    fn has_work(&self, _core: &(), _index: usize, _peers: bool) -> bool {
        !self.queue.lock().unwrap().0.is_empty()
    }

    fn drain_core(&self, _core: &mut (), _out: &mut Vec<Notified>) {}

    fn close_shared(&self, out: &mut Vec<Notified>) {
        let mut q = self.queue.lock().unwrap();
        q.1 = true;
        out.extend(q.0.drain(..));
    }
}

/// Registers `test-fifo` once per test process.
fn fifo() -> SchedulerKind {
    static KIND: OnceLock<SchedulerKind> = OnceLock::new();
    *KIND.get_or_init(|| {
        let info = PolicyInfo {
            name: "test-fifo",
            about: "test: one FIFO behind a mutex",
            workers: WorkerRule::Any,
            knobs: CORE_KNOBS,
        };
        register::<Fifo>(info).expect("test-fifo registers")
    })
}

#[test]
fn registered_policy_parses_lists_and_refuses_foreign_knobs() {
    let kind = fifo();
    assert_eq!("test-fifo".parse::<SchedulerKind>().unwrap(), kind);
    assert!(SchedulerKind::all().contains(&kind));
    assert_eq!(kind.name(), "test-fifo");
    let e = Builder::new(kind).workers(2).knob("lifo", "off").build().expect_err("lifo is not a knob of test-fifo");
    assert!(e.to_string().contains("lifo") && e.to_string().contains("test-fifo"), "{e}");
    // A core knob it lists is accepted.
    let rt = Builder::new(kind).workers(2).knob("idle", "backoff").build().unwrap();
    assert_eq!(rt.kind(), kind);
    assert_eq!(rt.workers(), 2);
}

#[test]
fn registered_policy_runs_tasks_wakes_timers_io_and_blocking() {
    let rt = Builder::new(fifo()).workers(3).build().unwrap();
    const N: usize = 200;
    let total = rt.block_on(async {
        // Spawns from a task, each child spawning a grandchild and waking
        // through a JoinHandle.
        let mut handles = Vec::new();
        for i in 0..N {
            handles.push(spawn(async move {
                let inner = spawn(async move { i * 2 });
                wsbench_schedulers::task::yield_now().await;
                inner.await.unwrap() + 1
            }));
        }
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        // Timer wheel: a sleep pending at its first poll must fire from it
        // (one already due then completes without a timer: a thread
        // preempted past the deadline tries a longer one).
        let mut nap = Duration::from_millis(20);
        loop {
            let t0 = std::time::Instant::now();
            let mut s = wsbench_schedulers::time::sleep(nap);
            let mut first = None;
            std::future::poll_fn(|cx| {
                let p = std::pin::Pin::new(&mut s).poll(cx);
                first.get_or_insert(p.is_pending());
                p
            })
            .await;
            assert!(t0.elapsed() >= nap);
            if first == Some(true) {
                break;
            }
            assert!(nap < Duration::from_secs(10), "preempted past a {nap:?} sleep every time");
            nap *= 4;
        }
        // Blocking pool.
        let b = wsbench_schedulers::task::spawn_blocking(|| 7).await.unwrap();
        sum + b
    });
    // sum over i of (2i + 1) plus 7.
    assert_eq!(total, N * (N - 1) + N + 7);

    // The reactor: a loopback echo through our TcpListener / TcpStream.
    let echoed = rt.block_on(async {
        use wsbench_schedulers::net::{TcpListener, TcpStream};
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = spawn(async move {
            let (s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 5];
            s.read_exact(&mut buf).await.unwrap();
            s.write_all(&buf).await.unwrap();
        });
        let c = TcpStream::connect(addr).await.unwrap();
        c.write_all(b"hello").await.unwrap();
        let mut buf = [0u8; 5];
        c.read_exact(&mut buf).await.unwrap();
        server.await.unwrap();
        buf
    });
    assert_eq!(&echoed, b"hello");

    let m = rt.metrics();
    let pops: u64 = m.workers.iter().map(|w| w.inject_pops).sum();
    let polls: u64 = m.workers.iter().map(|w| w.polls).sum();
    // Every poll of a task came out of the policy's queue (no LIFO slot,
    // no stealing), so pops and polls agree exactly.
    assert_eq!(pops, polls, "{m:?}");
    assert!(polls >= 2 * N as u64, "{m:?}");
    assert!(m.driver.timers_fired >= 1, "{m:?}");
}

#[test]
fn registered_policy_cancels_pending_tasks_exactly_once_at_shutdown() {
    struct Dropped(Arc<AtomicUsize>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let rt = Builder::new(fifo()).workers(2).build().unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let (started_tx, started) = std::sync::mpsc::channel();
    for _ in 0..50 {
        let guard = Dropped(drops.clone());
        let started_tx = started_tx.clone();
        drop(rt.spawn(async move {
            let _guard = guard;
            started_tx.send(()).unwrap();
            std::future::pending::<()>().await;
        }));
    }
    // Every one has started and is parked on `pending` (a hang detector,
    // not a timing assertion).
    for _ in 0..50 {
        started.recv_timeout(Duration::from_secs(60)).expect("a spawned task never started");
    }
    assert!(rt.shutdown_timeout(Duration::from_secs(5)), "workers must exit");
    assert_eq!(drops.load(Ordering::SeqCst), 50, "each pending future dropped exactly once");
}
