//! The closing table of issue 4: every default-suite workload on each
//! listed scheduler, one run each, printed as markdown.
//!
//! `cargo run -p wsbench-workloads --release --example table -- [WORKERS] [DURATION_MS] [SCHED,SCHED,...] [WORKLOAD,...]`
//! (defaults: 2 workers, 1000 ms, global,per-worker,steal-one,steal-half,tokio,smol, every workload).
//! Warm-up is a fifth of the duration; the seed is fixed. Throughput is
//! completed operations per second of measured time (requests for open-loop
//! workloads, iterations for tokio's benches, whose latency is the time per
//! iteration).

use std::time::Duration;

use wsbench_workloads::api::{RunOptions, RuntimeSpec, WorkloadSpec};

const DEFAULT_SCHEDS: &str = "global,per-worker,steal-one,steal-half,tokio,smol";
const SEED: u64 = 42;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let workers: usize = args.first().map_or(2, |a| a.parse().expect("WORKERS"));
    let ms: u64 = args.get(1).map_or(1_000, |a| a.parse().expect("DURATION_MS"));
    let scheds: Vec<String> = args.get(2).map_or(DEFAULT_SCHEDS, |s| s.as_str()).split(',').map(String::from).collect();
    let only: Option<Vec<String>> = args.get(3).map(|s| s.split(',').map(String::from).collect());
    let opts = RunOptions { duration: Duration::from_millis(ms), warmup: Duration::from_millis(ms / 5), seed: SEED };
    println!("| workload | scheduler | throughput/s | offered/s | p50 us | p99 us | p999 us | failed | slipped |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---|");
    for w in wsbench_workloads::workloads().iter().filter(|w| w.in_default_suite) {
        if only.as_ref().is_some_and(|o| !o.iter().any(|n| n == w.name)) {
            continue;
        }
        for sched in &scheds {
            let rt = match RuntimeSpec::parse(sched, workers) {
                Ok(rt) => rt,
                Err(e) => {
                    println!("| {} | {sched} | error: {e} | | | | | | |", w.name);
                    continue;
                }
            };
            let spec = WorkloadSpec { name: w.name.into(), params: Vec::new(), rate_per_s: None };
            match wsbench_workloads::run(&rt, &spec, &opts) {
                Ok(out) => {
                    let q = |p: f64| out.latency_ns.value_at_quantile(p) as f64 / 1e3;
                    let offered = out.offered_per_s.map_or("-".to_string(), |r| format!("{r:.0}"));
                    println!(
                        "| {} | {} | {:.0} | {} | {:.1} | {:.1} | {:.1} | {} | {} |",
                        w.name,
                        sched,
                        out.ops as f64 / out.elapsed.as_secs_f64(),
                        offered,
                        q(0.5),
                        q(0.99),
                        q(0.999),
                        out.failed.map_or("-".to_string(), |f| f.to_string()),
                        out.schedule_slipped
                    );
                }
                Err(e) => println!("| {} | {} | error: {e} | | | | | | |", w.name, sched),
            }
        }
    }
}
