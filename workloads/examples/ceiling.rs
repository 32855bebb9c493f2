//! The load generator's own ceiling: the highest offered rate it can
//! schedule, with a no-op handler (`rpc-fanout fanout=0`), while the median
//! request still leaves on time (p50 send lag under `MEDIAN_LAG_LIMIT_US`) and
//! none is left unsent. The p99 lag is printed too: on a machine shared with
//! other processes it is set by the OS scheduler, not by the generator.
//!
//! `cargo run -p wsbench-workloads --release --example ceiling -- [SCHED] [WORKERS] [LOADGEN_THREADS] [DURATION_MS] [HANDOFF]`
//! (defaults: tokio 2 1 1000 spawn). Rates double from 10k/s until the
//! schedule slips, then the last good and first bad rates are bisected
//! three times.
//!
//! HANDOFF `spawn` (rpc-fanout `fanout=0`): every request is a remote
//! spawn, so the figure is the generator and the runtime's spawn path
//! together. `channel` (`skewed mode=one-worker service-us=0`): every
//! request is a channel send to one dispatcher task, the generator's own
//! cost (the worker then falls behind, but the schedule is the
//! generator's).
//!
//! `... --example ceiling -- tcp [PIPELINE] [CONNECTIONS] [RATE] [DURATION_MS]`
//! (defaults: 64 16 4000000 1000): the TCP client's ceiling instead. One
//! client thread (`wsbench load`'s `tcp-rpc` client) with CONNECTIONS
//! connections, PIPELINE requests in flight on each, is asked RATE of the
//! trivial server ([`wsbench_workloads::trivial`]), far beyond what it can
//! send; it prints the rate it sent (offered) and the rate answered within
//! the window.

use std::time::Duration;

use wsbench_workloads::api::{RunOptions, RuntimeSpec, WorkloadSpec};

const START_RATE: f64 = 10_000.0;
const BISECT_STEPS: u32 = 3;
/// Median send lag above which the generator is behind on average.
const MEDIAN_LAG_LIMIT_US: f64 = 1_000.0;

/// The workload and its own parameters of a hand-off.
fn handoff(name: &str) -> (&'static str, Vec<(&'static str, &'static str)>) {
    match name {
        "spawn" => ("rpc-fanout", vec![("fanout", "0")]),
        "channel" => ("skewed", vec![("mode", "one-worker"), ("service-us", "0")]),
        other => {
            eprintln!("HANDOFF {other:?}: expected spawn or channel");
            std::process::exit(2)
        }
    }
}

fn kept_schedule(rt: &RuntimeSpec, handoff: &str, threads: &str, rate: f64, opts: &RunOptions) -> bool {
    let (workload, own) = self::handoff(handoff);
    let mut params: Vec<(String, String)> = own.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
    params.push(("arrival".into(), "uniform".into()));
    params.push(("loadgen-threads".into(), threads.into()));
    let w = WorkloadSpec { name: workload.into(), params, rate_per_s: Some(rate) };
    let out = wsbench_workloads::run(rt, &w, opts).expect("ceiling run");
    // The rate actually offered during the measured window.
    let sent_per_s = out.offered_per_s.expect("an open-loop workload");
    let extra = |name: &str| out.extras.iter().find(|(n, _)| n == name).map_or(f64::NAN, |e| e.1);
    let (p50, p99) = (extra("loadgen_lag_p50_us"), extra("loadgen_lag_p99_us"));
    let unsent = out.notes.iter().any(|n| n.contains("never sent") && !n.contains(", 0 scheduled"));
    println!(
        "offered {rate:>10.0}/s  sent {sent_per_s:>10.0}/s  completed {:>8}  lag p50 {p50:>9.1} us  p99 {p99:>9.1} us  unsent {unsent}",
        out.ops
    );
    p50 < MEDIAN_LAG_LIMIT_US && !unsent
}

/// The TCP client's ceiling against the trivial server (see the module doc).
fn tcp_ceiling(args: &[String]) {
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.to_string());
    let (pipeline, connections) = (arg(0, "64"), arg(1, "16"));
    let rate: f64 = arg(2, "4000000").parse().expect("RATE");
    let ms: u64 = arg(3, "1000").parse().expect("DURATION_MS");
    let server = wsbench_workloads::trivial::TrivialServer::start().expect("starting the trivial server");
    let w = WorkloadSpec {
        name: "tcp-rpc".into(),
        params: vec![
            ("arrival".into(), "uniform".into()),
            ("connections".into(), connections.clone()),
            ("client-threads".into(), "1".into()),
            ("pipeline".into(), pipeline.clone()),
        ],
        rate_per_s: Some(rate),
    };
    // Only the default rate is sized by the workers; the rate is given.
    let rt = RuntimeSpec::parse("tokio", 1).expect("tokio x1");
    // No warm-up: under this overload the backlog is sent oldest first, so
    // with one the window would carry warm-up requests, whose answers are
    // not recorded; without, every answer in the window is counted.
    let opts = RunOptions { duration: Duration::from_millis(ms), warmup: Duration::ZERO, seed: 7 };
    let out = wsbench_workloads::remote::load(server.addr(), &rt, &w, &opts).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let extra = |name: &str| out.extras.iter().find(|(n, _)| n == name).map_or(f64::NAN, |e| e.1);
    let answered = extra("completed_in_window") / out.elapsed.as_secs_f64();
    println!(
        "tcp client, 1 thread, {connections} connections, pipeline {pipeline}, trivial server: asked {rate:.0}/s, \
         sent {:.0}/s, answered {answered:.0}/s, failed {}, max in flight per connection {}",
        out.offered_per_s.unwrap_or(f64::NAN),
        out.failed.unwrap_or(0),
        // Reported only when pipelining (more than one in flight).
        out.extras
            .iter()
            .find(|(n, _)| n == "max_streams_per_connection")
            .map_or_else(|| "- (one at a time)".to_string(), |e| format!("{:.0}", e.1)),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("tcp") {
        return tcp_ceiling(&args[1..]);
    }
    let sched = args.first().cloned().unwrap_or_else(|| "tokio".into());
    let workers: usize = args.get(1).map_or(2, |a| a.parse().expect("WORKERS"));
    let threads = args.get(2).cloned().unwrap_or_else(|| "1".into());
    let ms: u64 = args.get(3).map_or(1_000, |a| a.parse().expect("DURATION_MS"));
    let handoff = args.get(4).cloned().unwrap_or_else(|| "spawn".into());
    let _ = self::handoff(&handoff);
    let rt = RuntimeSpec::parse(&sched, workers).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let opts = RunOptions { duration: Duration::from_millis(ms), warmup: Duration::from_millis(ms / 5), seed: 7 };
    let (mut good, mut bad) = (0.0, START_RATE);
    while kept_schedule(&rt, &handoff, &threads, bad, &opts) {
        good = bad;
        bad *= 2.0;
    }
    if good == 0.0 {
        println!("even {START_RATE}/s was not kept");
    }
    for _ in 0..BISECT_STEPS {
        let mid = (good + bad) / 2.0;
        if kept_schedule(&rt, &handoff, &threads, mid, &opts) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    println!(
        "ceiling on {} x{} with {threads} generator thread(s), hand-off {handoff}: {good:.0}/s kept, {bad:.0}/s slipped",
        rt.sched(),
        rt.workers()
    );
}
