//! Bytes of memory per pending task: a million tasks parked on a channel
//! (their wakers held by the channel's wait list), ours vs tokio.
//!
//! `cargo run --release -p wsbench-schedulers --example task_memory`
//!
//! Memory is the growth of the process's resident set (`/proc/self/statm`)
//! from just before the spawns to when every task has parked, divided by
//! the task count. It includes the JoinHandle kept per task and the waker
//! stored in the wait list, identical for both runtimes.
//!
//! Each runtime is measured in a child process of its own (this program
//! re-run with the runtime's name): measured one after the other in one
//! process, the second runtime's figure depended on how the first left the
//! heap (tokio read 232, 321 and 343 B/task in three runs).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

const TASKS: usize = 1_000_000;
const PAGE: usize = 4096;

/// A minimal broadcast channel: receivers park until `close`.
#[derive(Default)]
struct Channel {
    waiters: Mutex<Vec<Waker>>,
    closed: std::sync::atomic::AtomicBool,
    parked: AtomicUsize,
}

struct Recv {
    ch: Arc<Channel>,
    registered: bool,
}

impl Future for Recv {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.ch.closed.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        if !self.registered {
            self.registered = true;
            self.ch.waiters.lock().unwrap().push(cx.waker().clone());
            self.ch.parked.fetch_add(1, Ordering::Release);
        }
        Poll::Pending
    }
}

fn rss_bytes() -> usize {
    let s = std::fs::read_to_string("/proc/self/statm").expect("reading /proc/self/statm");
    let pages: usize = s.split_whitespace().nth(1).expect("statm field 2").parse().expect("statm number");
    pages * PAGE
}

fn wait_parked(ch: &Channel) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while ch.parked.load(Ordering::Acquire) < TASKS {
        assert!(Instant::now() < deadline, "tasks did not park");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn measure<H>(name: &str, spawn: impl Fn(Recv) -> H) -> f64 {
    let ch = Arc::new(Channel::default());
    let before = rss_bytes();
    let handles: Vec<H> = (0..TASKS).map(|_| spawn(Recv { ch: ch.clone(), registered: false })).collect();
    wait_parked(&ch);
    let after = rss_bytes();
    let per_task = (after.saturating_sub(before)) as f64 / TASKS as f64;
    println!("{name:<16} {per_task:>8.1} bytes/pending task  (RSS +{} MiB)", (after - before) >> 20);
    ch.closed.store(true, Ordering::Release);
    for w in ch.waiters.lock().unwrap().drain(..) {
        w.wake();
    }
    drop(handles);
    per_task
}

/// The runtimes measured: argument name and label.
const SUBJECTS: &[(&str, &str)] =
    &[("steal-half", "steal-half"), ("steal-half-128", "steal-half, task-align=128"), ("tokio", "tokio")];

fn measure_one(which: &str) -> f64 {
    let workers = 2;
    match which {
        "steal-half" | "steal-half-128" => {
            let mut b = wsbench_schedulers::Builder::new(wsbench_schedulers::SchedulerKind::StealHalf).workers(workers);
            if which == "steal-half-128" {
                b = b.knob("task-align", "128");
            }
            let rt = b.build().unwrap();
            measure(which, |f| rt.spawn(f))
        }
        "tokio" => {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).build().unwrap();
            measure(which, |f| rt.spawn(f))
        }
        other => panic!("unknown runtime `{other}`; allowed: steal-half, steal-half-128, tokio"),
    }
}

fn main() {
    if let Some(which) = std::env::args().nth(1) {
        measure_one(&which);
        return;
    }
    let exe = std::env::current_exe().expect("path of this example");
    let mut results = Vec::new();
    for (arg, label) in SUBJECTS {
        let out = std::process::Command::new(&exe).arg(arg).output().expect("running a measurement child");
        assert!(out.status.success(), "child `{arg}` failed: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        let per_task: f64 = text
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("unexpected child output: {text}"));
        println!("{label:<28} {per_task:>8.1} bytes/pending task");
        results.push(per_task);
    }
    let tokio = results[results.len() - 1];
    for ((_, label), ours) in SUBJECTS.iter().zip(&results).take(results.len() - 1) {
        println!("ratio {label} / tokio: {:.2}", ours / tokio);
    }
}
