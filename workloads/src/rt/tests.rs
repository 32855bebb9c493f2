//! The runtime trait, exercised on every implementation built here: each
//! test is written once, generic over [`Rt`], and run per runtime.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use wsbench_schedulers::knobs::KnobSet;
use wsbench_schedulers::SchedulerKind;

use super::ours::Ours;
use super::smol_rt::Smol;
use super::tokio_rt::{TokioCurrent, TokioMulti};
use super::{read_exact, Rt, Spawner, TaskFailed};
use crate::api::{RuntimeSpec, Sched};

fn spec(sched: &str, workers: usize) -> RuntimeSpec {
    RuntimeSpec::parse(sched, workers).unwrap()
}

fn spawn_join_and_panic<R: Rt>(rt: R) {
    let sp = rt.spawner();
    let outside = sp.spawn(async { 40 + 2 });
    let panicking = sp.spawn(async {
        if std::hint::black_box(true) {
            panic!("expected test panic");
        }
    });
    let inner = sp.clone();
    let (a, b, c) = rt.block_on(async move {
        let inside = inner.spawn_inside(async { 7u32 });
        (outside.await, panicking.await, inside.await)
    });
    assert_eq!(a, Ok(42));
    assert_eq!(b, Err(TaskFailed::Panicked));
    assert_eq!(c, Ok(7));
    // The runtime survived the panic.
    let sp2 = sp.clone();
    assert_eq!(rt.block_on(async move { sp2.spawn(async { 1 }).await }), Ok(1));
    rt.shutdown(Duration::from_secs(1));
}

fn timers_and_yield<R: Rt>(rt: R) {
    let sp = rt.spawner();
    let (slept, timed_out, in_time) = rt.block_on(async move {
        sp.yield_now().await;
        let t = std::time::Instant::now();
        sp.sleep(Duration::from_millis(2)).await;
        let slept = t.elapsed();
        // A future that never finishes must hit the deadline; one that is
        // ready at once must not.
        let timed_out = sp.timeout(Duration::from_millis(1), futures_lite::future::pending::<()>()).await;
        let in_time = sp.timeout(Duration::from_secs(60), async { 5 }).await;
        (slept, timed_out, in_time)
    });
    assert!(slept >= Duration::from_millis(2), "woke before the deadline: {slept:?}");
    assert_eq!(timed_out, None);
    assert_eq!(in_time, Some(5));
    rt.shutdown(Duration::from_secs(1));
}

fn tcp_echo<R: Rt>(rt: R) {
    let sp = rt.spawner();
    let got = rt.block_on(async move {
        let listener = sp.listen(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await.expect("bind");
        let addr = sp.local_addr(&listener).expect("local_addr");
        let server_sp = sp.clone();
        let server = sp.spawn_inside(async move {
            let mut s = server_sp.accept(&listener).await.expect("accept");
            let mut buf = [0u8; 5];
            read_exact(&server_sp, &mut s, &mut buf).await.expect("server read");
            buf.reverse();
            server_sp.write_all(&mut s, &buf).await.expect("server write");
        });
        let mut c = sp.connect(addr).await.expect("connect");
        sp.write_all(&mut c, b"hello").await.expect("client write");
        let mut back = [0u8; 5];
        read_exact(&sp, &mut c, &mut back).await.expect("client read");
        server.await.expect("server task");
        back
    });
    assert_eq!(&got, b"olleh");
    rt.shutdown(Duration::from_secs(1));
}

/// Every runtime's listeners (a lone one and one of a port-sharing group)
/// get the same backlog: the asked one capped at `net.core.somaxconn`, as
/// the kernel reports it (`ss -ltn`), not the 128 of std, mio, tokio and
/// async-io, which a connect storm overflowed (see `rt::listen`).
fn listen_backlog<R: Rt>(rt: R) {
    let Some(want) = super::listen::effective_backlog() else {
        eprintln!("no net.core.somaxconn here: the backlog is not checked");
        return;
    };
    let sp = rt.spawner();
    let ports = rt.block_on(async move {
        let any = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let lone = sp.listen(any).await.expect("bind");
        let shard = sp.listen_shard(any).await.expect("bind a shard");
        let ports = [&lone, &shard].map(|l| sp.local_addr(l).expect("local_addr").port());
        // Asked while both listen.
        ports.map(|p| (p, super::listen::ss_backlog(p)))
    });
    for (port, got) in ports {
        let Some(got) = got else {
            eprintln!("no `ss` here: the backlog is not checked");
            return;
        };
        assert_eq!(got, vec![want.to_string()], "listener on port {port}");
    }
    rt.shutdown(Duration::from_secs(1));
}

fn counters_have_every_name<R: Rt>(rt: R, expect_some: &[&str]) {
    let sp = rt.spawner();
    let c = sp.counters();
    let names: Vec<_> = c.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, super::counter_names().collect::<Vec<_>>());
    for (name, v) in &c {
        assert_eq!(v.is_some(), expect_some.contains(name), "counter {name} = {v:?}");
    }
    rt.shutdown(Duration::from_secs(1));
}

macro_rules! per_runtime {
    ($check:ident) => {
        mod $check {
            use super::*;

            #[test]
            fn tokio() {
                $check(TokioMulti::build(&spec("tokio", 2)).unwrap());
            }

            #[test]
            fn tokio_current() {
                $check(TokioCurrent::build(&spec("tokio-current", 1)).unwrap());
            }

            #[test]
            fn tokio_current_native() {
                $check(TokioCurrent::native(&spec("tokio-current", 1)).unwrap());
            }

            #[test]
            fn current_thread_native() {
                let kind = SchedulerKind::CurrentThread;
                $check(Ours::build_with(kind, &spec(kind.name(), 1), true).unwrap());
            }

            #[test]
            fn smol() {
                $check(Smol::build(&spec("smol", 2)).unwrap());
            }

            #[test]
            fn ours_every_policy() {
                for kind in SchedulerKind::ALL {
                    let workers = if kind == SchedulerKind::CurrentThread { 1 } else { 2 };
                    $check(Ours::build(kind, &spec(kind.name(), workers)).unwrap());
                }
            }
        }
    };
}

per_runtime!(spawn_join_and_panic);
per_runtime!(timers_and_yield);
per_runtime!(tcp_echo);
per_runtime!(listen_backlog);

/// tokio's stable metrics; built with `--cfg tokio_unstable` (the
/// workspace's `.cargo/config.toml`) it also reports polls, steals, stolen
/// tasks and overflows. CI also builds without it (an empty RUSTFLAGS).
const TOKIO_COUNTERS: &[&str] = if cfg!(tokio_unstable) {
    &["polls", "steals", "tasks_stolen", "overflows", "parks", "unparks", "busy_ns"]
} else {
    &["parks", "unparks", "busy_ns"]
};

#[test]
fn tokio_reports_only_what_its_metrics_mean() {
    counters_have_every_name(TokioMulti::build(&spec("tokio", 2)).unwrap(), TOKIO_COUNTERS);
    counters_have_every_name(TokioCurrent::build(&spec("tokio-current", 1)).unwrap(), TOKIO_COUNTERS);
}

/// Under `--cfg tokio_unstable`: 100 tasks spawned from outside that finish
/// in their first poll are polled exactly 100 times. A tokio worker
/// publishes its counts when it parks or at maintenance, so the last
/// worker's may land just after `block_on` returns (CI once saw 99): the
/// count is read again until it reaches 100 or 10 s pass, and must then be
/// exactly 100.
#[cfg(tokio_unstable)]
#[test]
fn tokio_unstable_polls_count_task_polls() {
    let rt = TokioMulti::build(&spec("tokio", 2)).unwrap();
    let sp = rt.spawner();
    let before = counter(&sp.counters(), "polls");
    let handles: Vec<_> = (0..100).map(|i| sp.spawn(async move { i })).collect();
    let sum: u64 = rt.block_on(async move {
        let mut s = 0;
        for h in handles {
            s += h.await.unwrap();
        }
        s
    });
    assert_eq!(sum, 4950);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut polls = counter(&sp.counters(), "polls") - before;
    while polls < 100 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        polls = counter(&sp.counters(), "polls") - before;
    }
    assert_eq!(polls, 100);
    rt.shutdown(Duration::from_secs(1));
}

fn counter(c: &super::CounterValues, name: &str) -> u64 {
    c.iter().find(|(n, _)| *n == name).and_then(|(_, v)| *v).unwrap_or_else(|| panic!("{name} not reported"))
}

#[test]
fn smol_reports_no_counters() {
    counters_have_every_name(Smol::build(&spec("smol", 2)).unwrap(), &[]);
}

#[test]
fn ours_report_every_counter() {
    // Every counter but the topology pair, which is blank when no topology
    // is known (unpinned workers and no `--topology`).
    let unknown_topology = ["steals_local_group", "steals_remote_group"];
    let all: Vec<_> = super::counter_names().filter(|n| !unknown_topology.contains(n)).collect();
    counters_have_every_name(Ours::build(SchedulerKind::StealHalf, &spec("steal-half", 2)).unwrap(), &all);
}

/// The harness reads our counters by name, and each name carries its own
/// counter: on one steal-half worker, 30 tasks spawned from outside plus
/// one that spawns 20 children from inside and awaits them are 31 remote
/// spawns, 20 local spawns and 31 inject-queue pops (the children and the
/// parent's wake-ups stay on the worker).
#[test]
fn our_counters_reach_the_harness_under_their_names() {
    let rt = Ours::build(SchedulerKind::StealHalf, &spec("steal-half", 1)).unwrap();
    let sp = rt.spawner();
    let before = sp.counters();
    let outer = sp.clone();
    let sum = rt.block_on(async move {
        let outside: Vec<_> = (0..30u64).map(|i| outer.spawn(async move { i })).collect();
        let inner = outer.clone();
        let parent = outer.spawn(async move {
            let children: Vec<_> = (0..20u64).map(|i| inner.spawn_inside(async move { i })).collect();
            let mut s = 0;
            for c in children {
                s += c.await.unwrap();
            }
            s
        });
        let mut s = parent.await.unwrap();
        for h in outside {
            s += h.await.unwrap();
        }
        s
    });
    assert_eq!(sum, 190 + 435);
    let after = sp.counters();
    rt.shutdown(Duration::from_secs(1));
    let delta = |name| counter(&after, name) - counter(&before, name);
    assert_eq!(delta("spawns_remote"), 31);
    assert_eq!(delta("spawns_local"), 20);
    assert_eq!(delta("inject_pops"), 31);
}

/// One task on one worker spawns 200 children from inside and awaits
/// them; returns the (lifo_hits, overflows) this caused.
fn local_spawns(rt: Ours) -> (u64, u64) {
    let sp = rt.spawner();
    let before = sp.counters();
    let inner = sp.clone();
    let parent = sp.spawn(async move {
        let children: Vec<_> = (0..200u64).map(|i| inner.spawn_inside(async move { i })).collect();
        let mut s = 0;
        for c in children {
            s += c.await.unwrap();
        }
        s
    });
    assert_eq!(rt.block_on(parent), Ok(19_900));
    let after = sp.counters();
    rt.shutdown(Duration::from_secs(1));
    let delta = |name| counter(&after, name) - counter(&before, name);
    (delta("lifo_hits"), delta("overflows"))
}

#[test]
fn knobs_reach_our_builder() {
    let knobs = KnobSet::parse(&[("lifo", "off"), ("queue-capacity", "64")]).unwrap();
    let s = RuntimeSpec::new(Sched::ours(SchedulerKind::StealHalf), 1, knobs).unwrap();
    let rt = Ours::build(SchedulerKind::StealHalf, &s).unwrap();
    let (lifo_hits, overflows) = local_spawns(rt);
    assert_eq!(lifo_hits, 0, "lifo=off: no task runs from the LIFO slot");
    assert!(overflows > 0, "queue-capacity=64: 200 local spawns overflow a ring of 64");
    // The defaults: LIFO on, a ring of 256 that holds all 200.
    let (lifo_hits, overflows) = local_spawns(Ours::build(SchedulerKind::StealHalf, &spec("steal-half", 1)).unwrap());
    assert!(lifo_hits > 0, "the default LIFO slot is used");
    assert_eq!(overflows, 0, "200 local spawns fit a ring of 256");
    let e = KnobSet::parse(&[("queue-capacity", "100")]).expect_err("a bad knob value is refused");
    assert!(e.to_string().contains("100"), "{e}");
}

/// One task spawns 50 children from inside, each yielding 4 times, and
/// awaits them, between `window_start` and `window_end`.
fn sched_delay_window<R: Rt>(rt: R) -> (Option<hdrhistogram::Histogram<u64>>, Option<u64>) {
    let sp = rt.spawner();
    let before = sp.window_start();
    let inner = sp.clone();
    let parent = sp.spawn(async move {
        let children: Vec<_> = (0..50u64)
            .map(|i| {
                let y = inner.clone();
                inner.spawn_inside(async move {
                    for _ in 0..4 {
                        y.yield_now().await;
                    }
                    i
                })
            })
            .collect();
        let mut s = 0;
        for c in children {
            s += c.await.unwrap();
        }
        s
    });
    assert_eq!(rt.block_on(parent), Ok(1_225));
    let polls =
        super::counters_delta(&before, &sp.window_end()).iter().find(|(n, _)| *n == "polls").and_then(|(_, v)| *v);
    let delays = sp.sched_delay_window();
    rt.shutdown(Duration::from_secs(1));
    (delays, polls)
}

/// `sched-delay=on` reaches the window the harness reads: one delay per
/// task poll of the window, exactly (every task has finished, so the
/// counts are final); off, and on the references, no histogram.
#[test]
fn the_schedule_delay_window_holds_one_delay_per_poll() {
    for kind in [SchedulerKind::StealHalf, SchedulerKind::CurrentThread, SchedulerKind::ThreadPerCore] {
        let workers = if kind == SchedulerKind::CurrentThread { 1 } else { 2 };
        let knobs = KnobSet::parse(&[("sched-delay", "on")]).unwrap();
        let s = RuntimeSpec::new(Sched::ours(kind), workers, knobs).unwrap();
        let (delays, polls) = sched_delay_window(Ours::build(kind, &s).unwrap());
        let (delays, polls) = (delays.expect("sched-delay=on: a histogram"), polls.expect("ours count polls"));
        // The parent's first poll, each child's 5, and at least one wake
        // of the parent.
        assert!(polls >= 1 + 50 * 5 + 1, "{kind}: {polls} polls");
        assert_eq!(delays.len(), polls, "{kind}: one schedule delay per poll");
        let (off, _) = sched_delay_window(Ours::build(kind, &spec(kind.name(), workers)).unwrap());
        assert!(off.is_none(), "{kind}: sched-delay off by default");
    }
    assert!(sched_delay_window(TokioMulti::build(&spec("tokio", 2)).unwrap()).0.is_none());
    assert!(sched_delay_window(Smol::build(&spec("smol", 2)).unwrap()).0.is_none());
}
