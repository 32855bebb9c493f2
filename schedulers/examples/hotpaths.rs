//! Single-threaded hot paths for deterministic instruction counts under
//! callgrind (`scripts/callgrind.sh`).
//!
//! `hotpaths CASE OPS` warms the case up, then runs `OPS` operations
//! between callgrind's START and STOP_INSTRUMENTATION client requests, so
//! with `valgrind --tool=callgrind --instr-atstart=no` only the measured
//! loop is counted (all threads, which matters for the task cases: the
//! runtime's worker runs them). Natively the requests are no-ops, so the
//! binary also runs (quickly) outside valgrind. `hotpaths list` prints the
//! cases.
//!
//! Cases (one "op" each):
//! - `wheel_insert_cancel`: insert a timer into a wheel holding
//!   [`POPULATION`] others, then cancel it;
//! - `wheel_advance_idle`: advance 1 ms with [`POPULATION`] timers far away;
//! - `wheel_advance_fire`: `OPS` timers one per ms; advance 1 ms and fire
//!   the one due, per timer (on top of [`POPULATION`] timers far away);
//! - `task_spawn_batch`: on current-thread, a task spawns [`BATCH`] tasks
//!   and awaits them all, per task (spawn + poll + complete + join);
//! - `task_spawn_await`: on current-thread, spawn one task and await it;
//! - `task_yield`: one `yield_now().await` on current-thread;
//! - `waker_clone_drop`: clone a running task's waker and drop it.

use std::future::poll_fn;
use std::hint::black_box;
use std::task::Poll;

use wsbench_schedulers::task::yield_now;
use wsbench_schedulers::{spawn, Builder, SchedulerKind};

#[allow(dead_code, unused_imports)] // reason: only part of the wheel is used; its unit tests are compiled in too
#[path = "../src/driver/wheel.rs"]
mod wheel;

use wheel::Wheel;

/// Timers already in the wheel for insert/cancel and idle advance.
const POPULATION: u64 = 10_000;
/// Deadlines of the insert/cancel population spread over 10 s.
const SPREAD_MS: u64 = 10_000;
/// Deadline of the inserted-and-cancelled timer (a request timeout).
const INSERT_AHEAD_MS: u64 = 100;
/// Deadlines of the idle population: never reached.
const FAR_TICK: u64 = 1 << 40;
/// Tasks spawned before they are awaited, in `task_spawn_batch`.
const BATCH: u64 = 100;
/// Operations run before measuring (allocator, slab and queue growth).
const WARM_UP_OPS: u64 = 1_000;

const CASES: [&str; 7] = [
    "wheel_insert_cancel",
    "wheel_advance_idle",
    "wheel_advance_fire",
    "task_spawn_batch",
    "task_spawn_await",
    "task_yield",
    "waker_clone_drop",
];

/// callgrind's client requests (valgrind/callgrind.h):
/// `VG_USERREQ_TOOL_BASE('C','T')` + 4 and + 5.
mod callgrind {
    const TOOL_BASE: u64 = ((b'C' as u64) << 24) | ((b'T' as u64) << 16);
    const START_INSTRUMENTATION: u64 = TOOL_BASE + 4;
    const STOP_INSTRUMENTATION: u64 = TOOL_BASE + 5;

    #[cfg(target_arch = "x86_64")]
    fn request(code: u64) {
        let args: [u64; 6] = [code, 0, 0, 0, 0, 0];
        // SAFETY: valgrind.h's x86-64 client-request sequence. Natively it
        // does nothing: rdi is rotated by 3 + 13 + 61 + 51 = 128 bits (back
        // to its value) and `xchg rbx, rbx` swaps a register with itself;
        // flags are clobbered, which asm! assumes by default. Under valgrind
        // the core recognises the sequence, reads the request from the
        // six-word array at rax (alive for the whole statement) and writes
        // its result to rdx, which we declare as clobbered.
        unsafe {
            std::arch::asm!(
                "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51", "xchg rbx, rbx",
                in("rax") args.as_ptr(),
                inout("rdx") 0u64 => _,
                options(nostack),
            );
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn request(_code: u64) {}

    pub fn start() {
        request(START_INSTRUMENTATION);
    }

    pub fn stop() {
        request(STOP_INSTRUMENTATION);
    }
}

fn populated() -> (Wheel<()>, u64) {
    let mut w = Wheel::new();
    // Deterministic spread without a RNG: a multiplicative hash of i.
    const SPREAD_MULTIPLIER: u64 = 2_654_435_761;
    for i in 0..POPULATION {
        w.insert(1 + (i * SPREAD_MULTIPLIER) % SPREAD_MS, ()).expect("future deadline");
    }
    (w, 0)
}

fn wheel_insert_cancel(ops: u64) {
    let (mut w, now) = populated();
    let mut round = |n: u64| {
        for i in 0..n {
            let key = w.insert(black_box(now + INSERT_AHEAD_MS + i % SPREAD_MS), ()).expect("future deadline");
            black_box(w.remove(key));
        }
    };
    round(WARM_UP_OPS);
    callgrind::start();
    round(ops);
    callgrind::stop();
}

fn wheel_advance_idle(ops: u64) {
    let mut w: Wheel<()> = Wheel::new();
    for i in 0..POPULATION {
        w.insert(FAR_TICK + i, ()).expect("future deadline");
    }
    let mut now = 0;
    let mut step = |n: u64| {
        for _ in 0..n {
            now += 1;
            black_box(w.advance(now, |_| {}));
        }
    };
    step(WARM_UP_OPS);
    callgrind::start();
    step(ops);
    callgrind::stop();
}

fn wheel_advance_fire(ops: u64) {
    let mut w: Wheel<()> = Wheel::new();
    for i in 0..POPULATION {
        w.insert(FAR_TICK + i, ()).expect("future deadline");
    }
    for tick in 1..=WARM_UP_OPS + ops {
        w.insert(tick, ()).expect("future deadline");
    }
    let mut fired = 0;
    let mut step = |from: u64, n: u64| {
        for now in from..from + n {
            fired += w.advance(now, |_| {});
        }
    };
    step(1, WARM_UP_OPS);
    callgrind::start();
    step(1 + WARM_UP_OPS, ops);
    callgrind::stop();
    assert_eq!(fired as u64, WARM_UP_OPS + ops, "every timer fires once");
}

/// Runs `body(WARM_UP_OPS)` then the measured `body(ops)` inside one task
/// on a current-thread runtime.
fn in_task<F, Fut>(ops: u64, body: F)
where
    F: Fn(u64) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let rt = Builder::new(SchedulerKind::CurrentThread).workers(1).build().expect("runtime");
    rt.block_on(rt.spawn(async move {
        body(WARM_UP_OPS).await;
        callgrind::start();
        body(ops).await;
        callgrind::stop();
    }))
    .expect("measured task failed");
}

async fn spawn_batch(ops: u64) {
    let mut handles = Vec::with_capacity(BATCH as usize);
    for _ in 0..ops.div_ceil(BATCH) {
        handles.extend((0..BATCH).map(|i| spawn(async move { black_box(i) })));
        for h in handles.drain(..) {
            black_box(h.await.expect("task"));
        }
    }
}

async fn spawn_await(ops: u64) {
    for i in 0..ops {
        black_box(spawn(async move { black_box(i) }).await.expect("task"));
    }
}

async fn yields(ops: u64) {
    for _ in 0..ops {
        yield_now().await;
    }
}

async fn waker_clone_drop(ops: u64) {
    poll_fn(|cx| {
        for _ in 0..ops {
            drop(black_box(cx.waker().clone()));
        }
        Poll::Ready(())
    })
    .await
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = format!("usage: {} CASE OPS | list   (cases: {})", args[0], CASES.join(", "));
    if args.get(1).map(String::as_str) == Some("list") {
        CASES.iter().for_each(|c| println!("{c}"));
        return;
    }
    let (Some(case), Some(ops)) = (args.get(1), args.get(2).and_then(|o| o.parse::<u64>().ok())) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    match case.as_str() {
        "wheel_insert_cancel" => wheel_insert_cancel(ops),
        "wheel_advance_idle" => wheel_advance_idle(ops),
        "wheel_advance_fire" => wheel_advance_fire(ops),
        "task_spawn_batch" => {
            assert!(ops % BATCH == 0, "task_spawn_batch: OPS must be a multiple of {BATCH}");
            in_task(ops, spawn_batch)
        }
        "task_spawn_await" => in_task(ops, spawn_await),
        "task_yield" => in_task(ops, yields),
        "waker_clone_drop" => in_task(ops, waker_clone_drop),
        other => {
            eprintln!("unknown case {other:?}; {usage}");
            std::process::exit(2);
        }
    }
}
