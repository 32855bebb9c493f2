//! Runs one workload once and prints what it measured.
//!
//! `cargo run -p wsbench-workloads --release --example one -- SCHED WORKERS WORKLOAD DURATION_MS [RATE] [k=v ...]`

use std::time::Duration;

use wsbench_workloads::api::{RunOptions, RunOutput, RuntimeSpec, WorkloadSpec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: one SCHED WORKERS WORKLOAD DURATION_MS [RATE|-] [k=v ...]");
        std::process::exit(2);
    }
    let rt = RuntimeSpec::parse(&args[0], args[1].parse().expect("WORKERS")).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let rate = args.get(4).filter(|r| *r != "-").map(|r| r.parse().expect("RATE"));
    let params = args
        .iter()
        .skip(5)
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("k=v");
            (k.to_string(), v.to_string())
        })
        .collect();
    let w = WorkloadSpec { name: args[2].clone(), params, rate_per_s: rate };
    let ms: u64 = args[3].parse().expect("DURATION_MS");
    let opts = RunOptions { duration: Duration::from_millis(ms), warmup: Duration::from_millis(ms / 5), seed: 1 };
    match wsbench_workloads::run(&rt, &w, &opts) {
        Ok(out) => print_output(&rt, &w, &out),
        Err(e) => {
            eprintln!("Error: {e}");
            std::process::exit(1);
        }
    }
}

fn print_output(rt: &RuntimeSpec, w: &WorkloadSpec, out: &RunOutput) {
    let q = |h: &hdrhistogram::Histogram<u64>, p: f64| h.value_at_quantile(p) as f64 / 1e3;
    let l = &out.latency_ns;
    println!(
        "{} {} x{}: ops {} failed {:?} sent {:?} elapsed {:.3}s thr {:.0}/s offered {:?} p50 {:.1}us p99 {:.1}us p999 {:.1}us max {:.1}us slipped {}",
        w.name,
        rt.sched(),
        rt.workers(),
        out.ops,
        out.failed,
        out.sent,
        out.elapsed.as_secs_f64(),
        out.ops as f64 / out.elapsed.as_secs_f64(),
        out.offered_per_s,
        q(l, 0.5),
        q(l, 0.99),
        q(l, 0.999),
        l.max() as f64 / 1e3,
        out.schedule_slipped
    );
    if let Some(u) = &out.uncorrected_ns {
        println!("  uncorrected p50 {:.1}us p99 {:.1}us max {:.1}us", q(u, 0.5), q(u, 0.99), u.max() as f64 / 1e3);
    }
    if let (Some(qw), Some(s)) = (&out.queue_wait_ns, &out.service_ns) {
        println!(
            "  queue p50 {:.1}us p99 {:.1}us; service p50 {:.1}us p99 {:.1}us",
            q(qw, 0.5),
            q(qw, 0.99),
            q(s, 0.5),
            q(s, 0.99)
        );
    }
    println!("  extras {:?}", out.extras);
    println!("  notes {:?}", out.notes);
    println!("  counters {:?}", out.counters.iter().filter(|(_, v)| v.is_some()).collect::<Vec<_>>());
}
