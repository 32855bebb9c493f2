//! Measurements of how this machine behaves, moved out of the test command
//! (issue 25): each prints its figures, appends one CSV row per figure,
//! and states a claim that holds on the gating machine of the nightly but
//! not on every machine that can build the project (a hypervisor whose
//! park/unpark costs more CPU than spinning, a CPU that runs faster than
//! when the spin was calibrated, a generator held up by other processes).
//!
//! `cargo run --release -p wsbench-workloads --example measure -- [--csv FILE] [--only NAME] [--gate]`
//!
//! Without `--gate` a claim that does not hold is printed as `no` and the
//! exit status is 0: the figures are the result. With `--gate` (the
//! nightly on its dedicated machine) such a claim exits 1. Bad arguments
//! exit 2. `scripts/measure.sh` runs it; `wsbench doctor --calibrate`
//! checks the instruments themselves (spin drift, the CPU meter against
//! the thread clock, park/unpark against `sched_yield`, timer lateness).

use std::io::Write;
use std::time::Duration;

use wsbench_workloads::api::{RunOptions, RunOutput, RuntimeSpec, WorkloadSpec};

/// One row of the CSV: a measurement, a figure of it, and whether the
/// claim it belongs to held.
struct Figure {
    measurement: &'static str,
    subject: String,
    name: &'static str,
    value: f64,
    unit: &'static str,
}

/// A measurement: its figures and the claim they were held against.
struct Outcome {
    figures: Vec<Figure>,
    claim: String,
    held: bool,
}

/// A measurement's name (for `--only` and the CSV) and its function.
type Measurement = (&'static str, fn() -> Outcome);

const MEASUREMENTS: [Measurement; 3] = [
    ("cpu-known-answer", cpu_known_answer),
    ("idle-backoff-vs-park", idle_backoff_vs_park),
    ("fixed-service-p50", fixed_service_p50),
];

const SEED: u64 = 0x5EED;
const CSV_HEADER: &str = "measurement,subject,figure,value,unit,claim_held";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut csv, mut only, mut gate) = (None, None, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--csv" => csv = Some(it.next().cloned().unwrap_or_else(|| usage("--csv needs a file"))),
            "--only" => only = Some(it.next().cloned().unwrap_or_else(|| usage("--only needs a name"))),
            "--gate" => gate = true,
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    if let Some(name) = &only {
        if !MEASUREMENTS.iter().any(|(n, _)| n == name) {
            let names: Vec<_> = MEASUREMENTS.iter().map(|(n, _)| *n).collect();
            usage(&format!("--only `{name}`: not a measurement; one of {}", names.join(", ")));
        }
    }
    let mut failed = Vec::new();
    let mut rows = Vec::new();
    for (name, measure) in MEASUREMENTS {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let out = measure();
        println!("{name}: claim: {} -- {}", out.claim, if out.held { "yes" } else { "no" });
        for f in &out.figures {
            println!("  {} {} = {:.2} {}", f.subject, f.name, f.value, f.unit);
            let row = format!("{},{},{},{:.3},{},{}", f.measurement, f.subject, f.name, f.value, f.unit, out.held);
            rows.push(row);
        }
        if !out.held {
            failed.push(name);
        }
    }
    if let Some(path) = csv {
        write_csv(&path, &rows).unwrap_or_else(|e| {
            eprintln!("Error: writing {path}: {e}");
            std::process::exit(1)
        });
    }
    if gate && !failed.is_empty() {
        eprintln!("Error: claims that did not hold on this machine: {}", failed.join(", "));
        std::process::exit(1);
    }
}

fn usage(why: &str) -> ! {
    eprintln!("Error: {why}\nusage: measure [--csv FILE] [--only NAME] [--gate]");
    std::process::exit(2)
}

/// Appends the rows, with the header first when the file is new or empty.
fn write_csv(path: &str, rows: &[String]) -> std::io::Result<()> {
    let fresh = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    if fresh {
        writeln!(f, "{CSV_HEADER}")?;
    }
    for r in rows {
        writeln!(f, "{r}")?;
    }
    Ok(())
}

fn run(sched: &str, workers: usize, knobs: &[(&str, &str)], w: &WorkloadSpec, ms: u64, warmup_ms: u64) -> RunOutput {
    let knobs = wsbench_schedulers::knobs::KnobSet::parse(knobs).expect("valid knobs");
    let sched_parsed = wsbench_workloads::api::Sched::parse(sched).expect("a listed scheduler");
    let spec = RuntimeSpec::new(sched_parsed, workers, knobs).expect("a valid runtime");
    let opts = RunOptions { duration: Duration::from_millis(ms), warmup: Duration::from_millis(warmup_ms), seed: SEED };
    wsbench_workloads::run(&spec, w, &opts).unwrap_or_else(|e| panic!("{} on {sched} x{workers}: {e}", w.name))
}

fn wl(name: &str, params: &[(&str, &str)], rate: Option<f64>) -> WorkloadSpec {
    WorkloadSpec {
        name: name.into(),
        params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        rate_per_s: rate,
    }
}

fn cpu_us_per_op(out: &RunOutput) -> f64 {
    let cpu = out.cpu.expect("/proc is readable here");
    cpu.cpu_ns as f64 / 1e3 / out.ops as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// This thread's CPU clock.
fn thread_cpu() -> Duration {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).expect("thread CPU clock");
    Duration::new(t.tv_sec() as u64, t.tv_nsec() as u32)
}

/// CPU time of `ns` of calibrated spin on this thread, by its own clock
/// (the median of `reps`).
fn spin_cpu_us(ns: u64, reps: usize) -> f64 {
    median(
        (0..reps)
            .map(|_| {
                let t = thread_cpu();
                wsbench_workloads::spin::spin_ns(ns);
                (thread_cpu() - t).as_secs_f64() * 1e6
            })
            .collect(),
    )
}

/// The CPU meter on calibrated spin: `rpc-fanout` with `fanout=2`,
/// `service=fixed`, `service-us=S` at 250 requests/s on one worker. Each
/// request costs 2 x S of spin plus the runtime's work; going from S = 100
/// to S = 300 us adds 2 x 200 us of spin. The claim (the former test's
/// margins): the CPU per request at 2 x 100 us is within [0.95 x 200,
/// 200 + 150] us and the addition within 400 us -10% +30%, for steal-half,
/// tokio and smol. Printed beside it: what 200 us of calibrated spin cost
/// on this thread's own CPU clock right before, the spin's drift from its
/// calibration, which the claim's margins must absorb.
fn cpu_known_answer() -> Outcome {
    const REPS: usize = 5;
    let mut figures = Vec::new();
    let mut held = true;
    let control_us = spin_cpu_us(200_000, 9);
    figures.push(fig("cpu-known-answer", "control", "spin_200us_thread_cpu", control_us, "us"));
    for sched in ["steal-half", "tokio", "smol"] {
        let (mut lows, mut highs) = (Vec::new(), Vec::new());
        for _ in 0..REPS {
            for (s, out) in [(100, &mut lows), (300, &mut highs)] {
                let service = s.to_string();
                let params = [("fanout", "2"), ("service", "fixed"), ("service-us", &service), ("arrival", "uniform")];
                out.push(cpu_us_per_op(&run(sched, 1, &[], &wl("rpc-fanout", &params, Some(250.0)), 600, 100)));
            }
        }
        let (low, high) = (median(lows), median(highs));
        let added = high - low;
        held &= (0.95 * 200.0..=350.0).contains(&low) && (0.9 * 400.0..=1.3 * 400.0).contains(&added);
        figures.push(fig("cpu-known-answer", sched, "cpu_per_request_at_2x100us", low, "us"));
        figures.push(fig("cpu-known-answer", sched, "added_by_2x200us_more_spin", added, "us"));
    }
    let claim = "CPU per request at 2 x 100 us in [190, 350] us and +2 x 200 us of spin adds 360..520 us".to_string();
    Outcome { figures, claim, held }
}

/// Light load (5000 no-op requests/s on 2 steal-half workers, ~2% busy):
/// `idle=backoff` spins and yields before parking, `idle=park` parks at
/// once. The claim: backoff costs more CPU per request than park (median
/// of 5 ABBA-interleaved runs), and its `sched_yield`s show as at least 5x
/// the involuntary context switches. Not so on a VM where a park/unpark
/// round trip costs more CPU than spinning (issue 25: park 17.4 vs backoff
/// 10.2 us per request), or where nothing else is runnable to yield to.
fn idle_backoff_vs_park() -> Outcome {
    const RUNS: usize = 5;
    let w = wl("rpc-fanout", &[("fanout", "0")], Some(5000.0));
    let modes = ["park", "backoff"];
    let mut cpu: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut involuntary: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for i in 0..RUNS {
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for k in order {
            let out = run("steal-half", 2, &[("idle", modes[k])], &w, 300, 50);
            cpu[k].push(cpu_us_per_op(&out));
            involuntary[k].push(out.cpu.expect("/proc is readable here").ctx_switches_involuntary as f64);
        }
    }
    let cpu = cpu.map(median);
    let involuntary = involuntary.map(median);
    let held = cpu[1] > cpu[0] && involuntary[1] >= 5.0 * involuntary[0].max(1.0);
    let mut figures = Vec::new();
    for k in 0..2 {
        figures.push(fig("idle-backoff-vs-park", modes[k], "cpu_per_request", cpu[k], "us"));
        figures.push(fig("idle-backoff-vs-park", modes[k], "involuntary_switches", involuntary[k], "count"));
    }
    let claim = "idle=backoff costs more CPU per request than idle=park, with >= 5x the involuntary switches";
    Outcome { figures, claim: claim.to_string(), held }
}

/// Fixed service time S = 2 ms at low load (50/s, uniform, one worker):
/// the p50 latency, the uncorrected p50 and the service-time p50 lie in
/// [0.9 S, 1.25 S + 250 us], and the queue-wait p50 under 1 ms, for every
/// single-worker runtime (the first of 3 attempts whose generator kept its
/// schedule; when none did, the uncorrected and service p50 only).
/// Depends on the spin's calibration and on a quiet machine.
fn fixed_service_p50() -> Outcome {
    const S_US: f64 = 2_000.0;
    const ATTEMPTS: usize = 3;
    let (lo, hi) = (0.9 * S_US, 1.25 * S_US + 250.0);
    let params = [("fanout", "1"), ("service", "fixed"), ("service-us", "2000"), ("arrival", "uniform")];
    let w = wl("rpc-fanout", &params, Some(50.0));
    let mut figures = Vec::new();
    let mut held = true;
    for sched in ["tokio", "tokio-current", "smol", "current-thread", "steal-half"] {
        let runs: Vec<RunOutput> = (0..ATTEMPTS).map(|_| run(sched, 1, &[], &w, 1_000, 200)).collect();
        let clean = runs.iter().find(|o| !o.schedule_slipped);
        let out = clean.unwrap_or(&runs[0]);
        let us = |ns: u64| ns as f64 / 1e3;
        let p50 = us(out.latency_ns.value_at_quantile(0.5));
        let unc = us(out.uncorrected_ns.as_ref().expect("open loop").value_at_quantile(0.5));
        let service = us(out.service_ns.as_ref().expect("in-process").value_at_quantile(0.5));
        let queue = us(out.queue_wait_ns.as_ref().expect("open loop").value_at_quantile(0.5));
        // As the former test: when every attempt's generator slipped, only
        // the runtime's part (uncorrected and service p50) is judged.
        let within = |v: f64| (lo..=hi).contains(&v);
        held &= within(unc) && within(service) && (clean.is_none() || (within(p50) && queue < 1_000.0));
        figures.push(fig("fixed-service-p50", sched, "p50", p50, "us"));
        figures.push(fig("fixed-service-p50", sched, "uncorrected_p50", unc, "us"));
        figures.push(fig("fixed-service-p50", sched, "service_p50", service, "us"));
        figures.push(fig("fixed-service-p50", sched, "queue_wait_p50", queue, "us"));
        figures.push(fig("fixed-service-p50", sched, "kept_schedule", f64::from(u8::from(clean.is_some())), "bool"));
    }
    let claim = format!("p50, uncorrected p50 and service p50 in [{lo}, {hi}] us, queue wait p50 < 1000 us");
    Outcome { figures, claim, held }
}

fn fig(measurement: &'static str, subject: &str, name: &'static str, value: f64, unit: &'static str) -> Figure {
    Figure { measurement, subject: subject.to_string(), name, value, unit }
}
