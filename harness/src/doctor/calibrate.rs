//! `wsbench doctor --calibrate`: the instruments checked on this machine,
//! each with its figures and a verdict against a stated tolerance
//! (`ok`, `warn`, `unfit`).
//!
//! - `ok`: the instrument reads within the tolerance the project's figures
//!   assume;
//! - `warn`: it reads, but outside that tolerance: figures from here are
//!   less comparable with another machine's, and the detail says which;
//! - `unfit`: figures that depend on this instrument are not to be trusted
//!   here (for example a spin calibration that drifts more than the 10 %
//!   at which a run gets a note).
//!
//! The figures are saved for later runs (`calibration.json` in the state
//! directory: `$WSBENCH_STATE_DIR`, else `$XDG_STATE_HOME/wsbench`, else
//! `~/.local/state/wsbench`); a run's JSON environment carries the latest
//! ones taken on the same host and CPU model.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use wsbench_workloads::instruments::{self, quantile};

use crate::doctor::{self, pipelined, workload_spec, Level, Machine, CEILING_RUN};

/// How often the spin calibration is redone while it is watched (for
/// `--calibrate-span`).
pub const SPIN_EVERY: Duration = Duration::from_secs(1);
/// The known spin the CPU meter is held against.
const METER_SPIN: Duration = Duration::from_millis(50);
/// Park/unpark round trips and `sched_yield`s timed.
const ROUND_TRIPS: u32 = 20_000;
/// 1 ms sleeps timed.
const SLEEPS: u32 = 200;
/// Loopback echo round trips timed.
const ECHOES: u32 = 5_000;

/// The tolerances, stated once: the docs and every verdict quote these.
pub mod tolerance {
    /// Spin rate range over the span, as a share of its median: ok up to
    /// this...
    pub const SPIN_RANGE_OK: f64 = 0.05;
    /// ...unfit beyond this (a run notes drift beyond the same 10 %).
    pub const SPIN_RANGE_UNFIT: f64 = 0.10;
    /// The CPU meter against the thread's own clock: ok within this share...
    pub const METER_OK: f64 = 0.02;
    /// ...unfit beyond this.
    pub const METER_UNFIT: f64 = 0.10;
    /// A known spin's thread CPU against its nominal length: ok within
    /// this share, unfit beyond [`SPIN_RANGE_UNFIT`].
    pub const SPIN_ACCURACY_OK: f64 = 0.05;
    /// A park/unpark round trip: ok up to this many µs...
    pub const PARK_OK_US: f64 = 50.0;
    /// ...unfit beyond this (idle workers' wake-ups dominate latency).
    pub const PARK_UNFIT_US: f64 = 1_000.0;
    /// The p99 lateness of a 1 ms sleep: ok up to this many µs...
    pub const SLEEP_LATE_OK_US: f64 = 200.0;
    /// ...unfit beyond this (timer workloads' lateness is the machine's).
    pub const SLEEP_LATE_UNFIT_US: f64 = 2_000.0;
    /// The monotonic clock's resolution: ok up to this many ns.
    pub const CLOCK_RESOLUTION_OK_NS: u64 = 1_000;
    /// The loopback echo's p50: ok up to this many µs...
    pub const LOOPBACK_OK_US: f64 = 50.0;
    /// ...unfit beyond this.
    pub const LOOPBACK_UNFIT_US: f64 = 500.0;
    /// The load generator's p50 over the reference client's: ok up to this
    /// many µs (issue 26's target)...
    pub const BIAS_OK_US: f64 = 10.0;
    /// ...unfit beyond this.
    pub const BIAS_UNFIT_US: f64 = 50.0;
    /// Stolen CPU time over the calibration, as a share: ok below this...
    pub const STEAL_OK: f64 = 0.01;
    /// ...unfit from this on.
    pub const STEAL_UNFIT: f64 = 0.05;
}

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Within the stated tolerance.
    Ok,
    /// Outside it: figures from here are less comparable.
    Warn,
    /// Figures that depend on this instrument are not to be trusted here.
    Unfit,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Unfit => "unfit",
        }
    }

    /// `ok` up to `ok`, `unfit` beyond `unfit`, `warn` between.
    fn of(value: f64, ok: f64, unfit: f64) -> Verdict {
        if value <= ok {
            Verdict::Ok
        } else if value <= unfit {
            Verdict::Warn
        } else {
            Verdict::Unfit
        }
    }
}

/// One check: its figures (name, value, unit), what they mean, the
/// tolerance it was held against, and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// `spin-drift`, `cpu-meter`, ...
    pub check: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The measured figures; none is estimated.
    pub figures: Vec<Figure>,
    /// What was found, in words.
    pub detail: String,
    /// The tolerance, in words.
    pub tolerance: String,
}

/// One measured figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Its name (`range_pct`, `p99_us`, ...).
    pub name: String,
    /// Its value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
}

fn fig(name: &str, value: f64, unit: &str) -> Figure {
    Figure { name: name.to_string(), value, unit: unit.to_string() }
}

/// Everything `doctor --calibrate` measured, as saved and as `--json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Who wrote it (`wsbench <version>`).
    pub generator: String,
    /// When it was taken (UTC, RFC 3339).
    pub taken_at: String,
    /// The host it was taken on.
    pub host: String,
    /// The CPU model it was taken on.
    pub cpu_model: String,
    /// Every check.
    pub checks: Vec<Check>,
}

/// Seconds stolen and in total from the `cpu` line of `/proc/stat`.
pub fn parse_proc_stat(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line.split_whitespace().skip(1).map(|v| v.parse().ok()).collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]:
    // guest time is already in user, so the total stops at steal.
    let steal = *fields.get(7)?;
    Some((steal, fields.iter().take(8).sum()))
}

fn read_proc_stat() -> Option<(u64, u64)> {
    parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

fn spin_drift(span: Duration) -> Check {
    let rates = instruments::spin_rates(span, SPIN_EVERY);
    let mut sorted = rates.clone();
    sorted.sort_by(f64::total_cmp);
    let (min, max) = (sorted[0], sorted[sorted.len() - 1]);
    let median = crate::stats::median_sorted(&sorted);
    let range = (max - min) / median;
    Check {
        check: "spin-drift".to_string(),
        verdict: Verdict::of(range, tolerance::SPIN_RANGE_OK, tolerance::SPIN_RANGE_UNFIT),
        figures: vec![
            fig("calibrations", rates.len() as f64, "count"),
            fig("median", median, "iters/ns"),
            fig("min", min, "iters/ns"),
            fig("max", max, "iters/ns"),
            fig("range_pct", range * 100.0, "%"),
        ],
        detail: format!(
            "{} calibrations over {:.0} s: {min:.4}..{max:.4} iterations/ns, a range of {:.1}% of the median",
            rates.len(),
            span.as_secs_f64(),
            range * 100.0
        ),
        tolerance: format!(
            "range ok up to {:.0}%, unfit beyond {:.0}% (a run notes spin_drift beyond {:.0}%)",
            tolerance::SPIN_RANGE_OK * 100.0,
            tolerance::SPIN_RANGE_UNFIT * 100.0,
            wsbench_workloads::spin::DRIFT_NOTE * 100.0
        ),
    }
}

fn cpu_meter() -> Check {
    let tol = format!(
        "meter within {:.0}% of the thread clock ok, beyond {:.0}% unfit; the spin within {:.0}% of nominal ok, beyond {:.0}% unfit",
        tolerance::METER_OK * 100.0,
        tolerance::METER_UNFIT * 100.0,
        tolerance::SPIN_ACCURACY_OK * 100.0,
        tolerance::SPIN_RANGE_UNFIT * 100.0
    );
    let Some(m) = instruments::meter_against_thread_clock(METER_SPIN) else {
        return Check {
            check: "cpu-meter".to_string(),
            verdict: Verdict::Unfit,
            figures: Vec::new(),
            detail: "/proc/self/task/*/schedstat or the process CPU clock is unreadable: CPU per request will be blank"
                .to_string(),
            tolerance: tol,
        };
    };
    let thread = m.thread_clock_ns.max(1) as f64;
    let meter_err = (m.meter_ns as f64 - thread) / thread;
    let spin_err = (thread - m.nominal_ns as f64) / m.nominal_ns as f64;
    let verdict = Verdict::of(meter_err.abs(), tolerance::METER_OK, tolerance::METER_UNFIT).max(Verdict::of(
        spin_err.abs(),
        tolerance::SPIN_ACCURACY_OK,
        tolerance::SPIN_RANGE_UNFIT,
    ));
    let ms = |ns: u64| ns as f64 / 1e6;
    Check {
        check: "cpu-meter".to_string(),
        verdict,
        figures: vec![
            fig("nominal_ms", ms(m.nominal_ns), "ms"),
            fig("thread_clock_ms", ms(m.thread_clock_ns), "ms"),
            fig("meter_ms", ms(m.meter_ns), "ms"),
            fig("meter_error_pct", meter_err * 100.0, "%"),
            fig("spin_error_pct", spin_err * 100.0, "%"),
        ],
        detail: format!(
            "a nominal {:.1} ms spin: the thread's clock {:.2} ms ({:+.1}%), the meter {:.2} ms ({:+.1}% of the thread clock)",
            ms(m.nominal_ns),
            ms(m.thread_clock_ns),
            spin_err * 100.0,
            ms(m.meter_ns),
            meter_err * 100.0
        ),
        tolerance: tol,
    }
}

fn park_unpark() -> Check {
    let p = instruments::park_vs_yield(ROUND_TRIPS);
    let (rt_us, yield_us) = (p.round_trip_ns / 1e3, p.yield_ns / 1e3);
    let mut figures = vec![fig("round_trip_us", rt_us, "µs"), fig("yield_us", yield_us, "µs")];
    let cpu = p.round_trip_cpu_ns.map(|c| c / 1e3);
    figures.extend(cpu.map(|c| fig("round_trip_cpu_us", c, "µs")));
    figures.push(fig("round_trip_per_yield", p.round_trip_ns / p.yield_ns.max(1.0), "x"));
    Check {
        check: "park-unpark".to_string(),
        verdict: Verdict::of(rt_us, tolerance::PARK_OK_US, tolerance::PARK_UNFIT_US),
        figures,
        detail: format!(
            "a park/unpark round trip between two threads {rt_us:.1} µs wall{}, a sched_yield {yield_us:.2} µs ({:.0}x): \
             what idle-park vs idle-backoff trade here",
            cpu.map(|c| format!(", {c:.1} µs CPU")).unwrap_or_default(),
            p.round_trip_ns / p.yield_ns.max(1.0)
        ),
        tolerance: format!(
            "round trip ok up to {:.0} µs, unfit beyond {:.0} µs",
            tolerance::PARK_OK_US,
            tolerance::PARK_UNFIT_US
        ),
    }
}

fn timer() -> Check {
    let t = instruments::timers(SLEEPS);
    let us = |q: f64| quantile(&t.late_ns, q).map_or(f64::NAN, |v| v as f64 / 1e3);
    let (p50, p99, max) = (us(0.5), us(0.99), us(1.0));
    let mut verdict = Verdict::of(p99, tolerance::SLEEP_LATE_OK_US, tolerance::SLEEP_LATE_UNFIT_US);
    let mut figures = Vec::new();
    let resolution = match t.resolution_ns {
        Some(r) => {
            figures.push(fig("resolution_ns", r as f64, "ns"));
            if r > tolerance::CLOCK_RESOLUTION_OK_NS {
                verdict = verdict.max(Verdict::Warn);
            }
            format!("clock resolution {r} ns")
        }
        None => {
            verdict = verdict.max(Verdict::Warn);
            "clock resolution unreadable".to_string()
        }
    };
    figures.extend([fig("late_p50_us", p50, "µs"), fig("late_p99_us", p99, "µs"), fig("late_max_us", max, "µs")]);
    Check {
        check: "timer".to_string(),
        verdict,
        figures,
        detail: format!(
            "{resolution}; {SLEEPS} sleeps of 1 ms woke late by p50 {p50:.0} µs, p99 {p99:.0} µs, max {max:.0} µs"
        ),
        tolerance: format!(
            "resolution ok up to {} ns; p99 lateness ok up to {:.0} µs, unfit beyond {:.0} µs",
            tolerance::CLOCK_RESOLUTION_OK_NS,
            tolerance::SLEEP_LATE_OK_US,
            tolerance::SLEEP_LATE_UNFIT_US
        ),
    }
}

fn loopback() -> Check {
    let tol = format!(
        "echo p50 ok up to {:.0} µs, unfit beyond {:.0} µs",
        tolerance::LOOPBACK_OK_US,
        tolerance::LOOPBACK_UNFIT_US
    );
    match instruments::loopback_echo(ECHOES) {
        Ok(rtts) => {
            let us = |q: f64| quantile(&rtts, q).map_or(f64::NAN, |v| v as f64 / 1e3);
            let (p50, p99) = (us(0.5), us(0.99));
            Check {
                check: "loopback-floor".to_string(),
                verdict: Verdict::of(p50, tolerance::LOOPBACK_OK_US, tolerance::LOOPBACK_UNFIT_US),
                figures: vec![fig("echo_p50_us", p50, "µs"), fig("echo_p99_us", p99, "µs")],
                detail: format!(
                    "{ECHOES} round trips of {} bytes over loopback TCP to an echo thread: p50 {p50:.1} µs, p99 {p99:.1} µs \
                     (no load generator can measure below this floor)",
                    instruments::ECHO_BYTES
                ),
                tolerance: tol,
            }
        }
        Err(e) => Check {
            check: "loopback-floor".to_string(),
            verdict: Verdict::Unfit,
            figures: Vec::new(),
            detail: format!("loopback TCP echo failed: {e}"),
            tolerance: tol,
        },
    }
}

/// The rate of the client-bias check (issue 26's benchmark target).
const BIAS_RATE: f64 = 200.0;
/// How long each client measures in the client-bias check.
const BIAS_SPAN: Duration = Duration::from_secs(2);

/// `wsbench load`'s p50 against the reference client's on one in-process
/// `http` server (steal-half, 1 worker) at [`BIAS_RATE`]: what the load
/// generator adds to every latency it reports.
fn loadgen_bias() -> Check {
    let tol = format!(
        "load p50 - reference p50 ok up to {:.0} µs, unfit beyond {:.0} µs",
        tolerance::BIAS_OK_US,
        tolerance::BIAS_UNFIT_US
    );
    let failed = |why: String| Check {
        check: "loadgen-bias".to_string(),
        verdict: Verdict::Unfit,
        figures: Vec::new(),
        detail: format!("the client-bias check could not run: {why}"),
        tolerance: tol.clone(),
    };
    match measure_bias() {
        Ok((reference, load)) => {
            let bias = load.0 - reference.0;
            Check {
                check: "loadgen-bias".to_string(),
                verdict: Verdict::of(bias, tolerance::BIAS_OK_US, tolerance::BIAS_UNFIT_US),
                figures: vec![
                    fig("reference_p50_us", reference.0, "µs"),
                    fig("reference_p99_us", reference.1, "µs"),
                    fig("load_p50_us", load.0, "µs"),
                    fig("load_p99_us", load.1, "µs"),
                    fig("bias_p50_us", bias, "µs"),
                ],
                detail: format!(
                    "at {BIAS_RATE:.0} req/s on one connection to an in-process http server (steal-half x1): \
                     wsbench load p50 {:.1} µs, p99 {:.1} µs (from each intended time); the reference client \
                     (one thread, plain epoll, timed from its own send) p50 {:.1} µs, p99 {:.1} µs: \
                     the load generator adds {bias:+.1} µs",
                    load.0, load.1, reference.0, reference.1
                ),
                tolerance: tol,
            }
        }
        Err(e) => failed(format!("{e:#}")),
    }
}

/// `((reference p50, p99), (load p50, p99))` in µs.
fn measure_bias() -> Result<((f64, f64), (f64, f64))> {
    use wsbench_workloads::api::RunOptions;
    with_http_server(|addr, rt| {
        let reference =
            wsbench_workloads::client::latency_floor(addr, BIAS_RATE, BIAS_SPAN).context("the reference client")?;
        let us = |ns: u64| ns as f64 / 1e3;
        let params = [("connections", "1"), ("client-threads", "1"), ("arrival", "uniform")];
        let opts = RunOptions { duration: BIAS_SPAN, warmup: Duration::from_millis(200), seed: 1 };
        let out = wsbench_workloads::remote::load(addr, rt, &workload_spec("http", &params, Some(BIAS_RATE)), &opts)
            .context("wsbench load")?;
        anyhow::ensure!(!out.latency_ns.is_empty(), "wsbench load recorded no latency");
        let q = |p: f64| us(out.latency_ns.value_at_quantile(p));
        Ok(((us(reference.p50_ns), us(reference.p99_ns)), (q(0.5), q(0.99))))
    })
}

/// Runs `f` against an in-process `http` server (steal-half, 1 worker) on
/// a loopback port, and stops the server after it.
fn with_http_server<T>(
    f: impl FnOnce(std::net::SocketAddr, &wsbench_workloads::api::RuntimeSpec) -> Result<T>,
) -> Result<T> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use wsbench_workloads::api::RuntimeSpec;
    let rt = RuntimeSpec::parse("steal-half", 1).context("the server's runtime")?;
    let stop = AtomicBool::new(false);
    let (bound_tx, bound_rx) = std::sync::mpsc::channel();
    let server_rt = rt.clone();
    let stop = &stop;
    std::thread::scope(|scope| -> Result<_> {
        let server = scope.spawn(move || {
            let mut on_bound = move |a| {
                let _ = bound_tx.send(a);
            };
            // Relaxed: a flag read in a poll loop; nothing is published with it.
            let stopped = || stop.load(Ordering::Relaxed);
            let until = wsbench_workloads::remote::Until {
                stop: &stopped,
                limit: Some(Duration::from_secs(120)),
                on_bound: &mut on_bound,
            };
            wsbench_workloads::remote::serve(
                &server_rt,
                &workload_spec("http", &[], None),
                "127.0.0.1:0".parse().expect("address"),
                until,
            )
        });
        let measured = (|| -> Result<_> {
            let addr = bound_rx.recv_timeout(Duration::from_secs(30)).context("the server did not start listening")?;
            f(addr, &rt)
        })();
        // Relaxed: see above.
        stop.store(true, Ordering::Relaxed);
        let served = server.join().map_err(|_| anyhow::anyhow!("the server thread panicked"))?;
        let figures = measured?;
        served.context("the server")?;
        Ok(figures)
    })
}

/// The rate the load-generator ceiling check asks of one client thread:
/// far beyond what one thread can pace, so what it reaches is its ceiling.
const CEILING_ASKED_PER_S: f64 = 1_000_000.0;
/// Connections of the ceiling check (as in `scripts/wrk-check.sh`).
const CEILING_CONNECTIONS: &str = "16";

/// What one client thread, and one in-process generator thread, reached
/// when asked far more than it can pace: the figures the pre-sweep
/// warning holds a `--rate` against.
pub const CEILING_CHECK: &str = "loadgen-ceiling";
/// The figure of [`CEILING_CHECK`] that holds the TCP client's rate.
pub const CEILING_FIGURE: &str = "offered_per_s_per_client_thread";
/// The figure of [`CEILING_CHECK`] that holds the in-process generator's
/// rate (`rpc-fanout fanout=0`, 1 worker, one generator thread).
pub const IN_PROCESS_CEILING_FIGURE: &str = "offered_per_s_per_generator_thread";
/// The figure of [`CEILING_CHECK`] that holds the in-process generator's
/// own rate: its requests go through a channel to one dispatcher task, so
/// no task is allocated on the generator's thread (`skewed
/// mode=one-worker service-us=0`, 1 worker, one generator thread).
pub const GENERATOR_ALONE_FIGURE: &str = "offered_per_s_generator_alone";
/// The rate the in-process ceiling asks of its one generator thread.
const IN_PROCESS_ASKED_PER_S: f64 = 4_000_000.0;
/// The rate the generator-alone figure asks: above every remote-spawn
/// ceiling measured so far, and small enough that the channel's backlog
/// (what the one worker has not consumed) stays a few hundred MB at most.
const GENERATOR_ALONE_ASKED_PER_S: f64 = 2_000_000.0;

/// The two in-process figures: the generator with a remote spawn per
/// request, and the generator alone.
struct InProcess {
    remote_spawn: f64,
    alone: f64,
}

/// One in-process generator thread asked for `rate` of `workload` on
/// steal-half with one worker: the rate it really handed requests over.
fn in_process_offered(workload: &str, params: &[(&str, &str)], rate: f64) -> Result<f64> {
    let rt = wsbench_workloads::api::RuntimeSpec::parse("steal-half", 1).context("the runtime")?;
    let spec = workload_spec(workload, params, Some(rate));
    let out = wsbench_workloads::run(&rt, &spec, &CEILING_RUN).with_context(|| workload.to_string())?;
    out.offered_per_s.context("the generator measured no offered rate")
}

/// The in-process ceilings:
/// - `rpc-fanout fanout=0` (a no-op handler), asked [`IN_PROCESS_ASKED_PER_S`]:
///   each hand-off is a remote spawn, so this is the generator and the
///   spawn path together (on glibc, the task's allocation on the generator's
///   thread and its free on the worker contend for one malloc arena);
/// - `skewed mode=one-worker service-us=0`, asked
///   [`GENERATOR_ALONE_ASKED_PER_S`]: each hand-off is a channel send, the
///   generator's own cost; when it keeps the whole asked rate its ceiling
///   is higher still.
fn in_process_ceiling() -> Result<InProcess> {
    let common = [("loadgen-threads", "1"), ("arrival", "uniform")];
    let spawn = [[("fanout", "0")].as_slice(), &common].concat();
    let remote_spawn = in_process_offered("rpc-fanout", &spawn, IN_PROCESS_ASKED_PER_S)?;
    let channel = [[("mode", "one-worker"), ("service-us", "0")].as_slice(), &common].concat();
    let alone = in_process_offered("skewed", &channel, GENERATOR_ALONE_ASKED_PER_S)?;
    Ok(InProcess { remote_spawn, alone })
}

/// `wsbench load`, one client thread on 16 connections, asked
/// [`CEILING_ASKED_PER_S`] of the in-process `http` server: the rate it
/// really offered. This is a lower bound of the client's own ceiling (the
/// one-worker server on the same cores may be the limit), so a rate beyond
/// it is a warning, not a refusal.
fn loadgen_ceiling() -> Check {
    let tol = "informational: a --rate above client-threads (loadgen-threads) x the client's (generator's) figure \
               gets a warning before the sweep"
        .to_string();
    let measured = with_http_server(|addr, rt| {
        let params = [("connections", CEILING_CONNECTIONS), ("client-threads", "1"), ("arrival", "uniform")];
        let out = wsbench_workloads::remote::load(
            addr,
            rt,
            &workload_spec("http", &params, Some(CEILING_ASKED_PER_S)),
            &CEILING_RUN,
        )
        .context("wsbench load")?;
        // Requests handed to the connections per second of the window (the
        // oldest first, so at this overload none is of the window itself).
        out.offered_per_s.context("the load generator measured no offered rate")
    });
    let in_process = in_process_ceiling();
    let pipelined = pipelined::ceiling();
    match measured {
        Ok(offered) => Check {
            check: CEILING_CHECK.to_string(),
            verdict: Verdict::Ok,
            figures: std::iter::once(fig(CEILING_FIGURE, offered, "/s"))
                .chain(in_process.as_ref().ok().into_iter().flat_map(|r| {
                    [fig(IN_PROCESS_CEILING_FIGURE, r.remote_spawn, "/s"), fig(GENERATOR_ALONE_FIGURE, r.alone, "/s")]
                }))
                .chain(pipelined.as_ref().ok().map(|r| fig(pipelined::FIGURE, *r, "/s")))
                .collect(),
            detail: format!(
                "asked {:.0}/s of one client thread on {CEILING_CONNECTIONS} connections to an in-process http \
                 server (steal-half x1): it sent {offered:.0}/s; {}; {}",
                CEILING_ASKED_PER_S,
                pipelined::detail(&pipelined),
                match &in_process {
                    Ok(r) => format!(
                        "asked {IN_PROCESS_ASKED_PER_S:.0}/s of one in-process generator thread (rpc-fanout fanout=0, \
                         steal-half x1, every request a remote spawn): it handed over {:.0}/s; asked \
                         {GENERATOR_ALONE_ASKED_PER_S:.0}/s of it alone (skewed mode=one-worker service-us=0, every \
                         request a channel send): it handed over {:.0}/s{}",
                        r.remote_spawn,
                        r.alone,
                        if r.alone >= GENERATOR_ALONE_ASKED_PER_S * 0.99 {
                            " (within 1% of all it was asked: its ceiling is higher)"
                        } else {
                            ""
                        }
                    ),
                    Err(e) => format!("the in-process generator's ceiling could not be measured: {e:#}"),
                }
            ),
            tolerance: tol,
        },
        Err(e) => Check {
            check: CEILING_CHECK.to_string(),
            verdict: Verdict::Warn,
            figures: Vec::new(),
            detail: format!("the load-generator ceiling could not be measured: {e:#}"),
            tolerance: tol,
        },
    }
}

/// Before a sweep: a warning for each (workload, client threads, rate)
/// whose asked rate is beyond what that many client threads reached in
/// `calibration`'s [`CEILING_CHECK`] (this machine's latest). Cells
/// without client threads (benchmarks, the in-process generators) and a
/// missing calibration give none: nothing is guessed.
/// Prints [`pacing_warnings`] on stderr, before a sweep (`run`, `load`).
pub fn warn_pacing(cells: &[crate::config::Cell], calibration: Option<&Calibration>) {
    for w in pacing_warnings(cells, calibration) {
        eprintln!("warning: {w}");
    }
}

/// The generators a cell's rate is paced by: the TCP client's threads, or
/// the in-process generator's, with the ceiling figure of each.
const PACERS: [(&str, &str, &str); 2] = [
    ("client-threads", CEILING_FIGURE, "client thread"),
    ("loadgen-threads", IN_PROCESS_CEILING_FIGURE, "in-process generator thread"),
];

fn pacing_warnings(cells: &[crate::config::Cell], calibration: Option<&Calibration>) -> Vec<String> {
    let Some((check, taken)) =
        calibration.and_then(|c| Some((c.checks.iter().find(|k| k.check == CEILING_CHECK)?, c.taken_at.clone())))
    else {
        return Vec::new();
    };
    let figure = |name: &str| {
        let f = check.figures.iter().find(|f| f.name == name)?;
        (f.value.is_finite() && f.value > 0.0).then_some(f.value)
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for cell in cells {
        let Some(rate) = cell.spec.rate_per_s else { continue };
        let Ok(params) = wsbench_workloads::resolved_params(&cell.runtime, &cell.spec) else { continue };
        let paced = PACERS.iter().find_map(|(param, name, what)| {
            let threads = params.iter().find(|(k, _)| k == param).and_then(|(_, v)| v.parse::<u64>().ok())?;
            let (name, what) = if *param == "client-threads" {
                pipelined::client_pacer(&params, (name, what))
            } else {
                (*name, *what)
            };
            Some((threads, figure(name)?, *param, what))
        });
        let Some((threads, per_thread, param, what)) = paced else { continue };
        let reach = per_thread * threads as f64;
        if rate > reach && seen.insert((cell.spec.name.clone(), threads, rate.to_bits())) {
            out.push(format!(
                "--rate {} for {} asks more than its {threads} {what}(s) reached here: `doctor --calibrate` \
                 ({taken}) measured one {what} sending {}/s, so about {}/s for {threads}; the row will likely \
                 fall behind (marked `behind`, left out of capacity); more --param {param}=N raise it",
                crate::output::units::format_count(rate),
                cell.spec.name,
                crate::output::units::format_count(per_thread),
                crate::output::units::format_count(reach),
            ));
        }
    }
    out
}

fn steal(before: Option<(u64, u64)>, after: Option<(u64, u64)>, span: Duration) -> Check {
    let tol =
        format!("ok below {:.0}%, unfit from {:.0}%", tolerance::STEAL_OK * 100.0, tolerance::STEAL_UNFIT * 100.0);
    match before.zip(after) {
        Some(((s0, t0), (s1, t1))) if t1 > t0 => {
            let share = s1.saturating_sub(s0) as f64 / (t1 - t0) as f64;
            let verdict = if share < tolerance::STEAL_OK {
                Verdict::Ok
            } else if share < tolerance::STEAL_UNFIT {
                Verdict::Warn
            } else {
                Verdict::Unfit
            };
            Check {
                check: "steal".to_string(),
                verdict,
                figures: vec![fig("steal_pct", share * 100.0, "%")],
                detail: format!(
                    "{:.2}% of the CPU time over the calibration ({:.0} s) was stolen by the hypervisor",
                    share * 100.0,
                    span.as_secs_f64()
                ),
                tolerance: tol,
            }
        }
        _ => Check {
            check: "steal".to_string(),
            verdict: Verdict::Warn,
            figures: Vec::new(),
            detail: "/proc/stat has no readable steal column: stolen time is unknown".to_string(),
            tolerance: tol,
        },
    }
}

/// The machine's settings that move the instruments, from `doctor`'s own
/// findings: a warning there is a `warn` here.
fn machine(findings: &[doctor::Finding]) -> Vec<Check> {
    ["governor", "cpuidle", "smt", "clocksource"]
        .iter()
        .filter_map(|name| findings.iter().find(|f| f.check == *name))
        .map(|f| Check {
            check: f.check.to_string(),
            verdict: if f.level == Level::Warn { Verdict::Warn } else { Verdict::Ok },
            figures: Vec::new(),
            detail: if f.fix.is_empty() { f.detail.clone() } else { format!("{} (fix: {})", f.detail, f.fix) },
            tolerance: "a doctor warning is a warn".to_string(),
        })
        .collect()
}

/// Where and when a calibration is taken: UTC time (RFC 3339), host, CPU model.
pub struct Taken {
    /// UTC time, RFC 3339.
    pub at: String,
    /// Host name.
    pub host: String,
    /// CPU model.
    pub cpu_model: String,
}

/// Runs every check; the spin is watched for `span`.
pub fn measure(span: Duration, taken: Taken) -> Calibration {
    let started = Instant::now();
    let stat0 = read_proc_stat();
    let mut checks =
        vec![spin_drift(span), cpu_meter(), park_unpark(), timer(), loopback(), loadgen_bias(), loadgen_ceiling()];
    let stat1 = read_proc_stat();
    checks.push(steal(stat0, stat1, started.elapsed()));
    let findings = doctor::inspect(&Machine::this(), crate::config::allowed_cpus(), 1, Duration::ZERO);
    checks.extend(machine(&findings));
    Calibration {
        generator: format!("wsbench {}", env!("CARGO_PKG_VERSION")),
        taken_at: taken.at,
        host: taken.host,
        cpu_model: taken.cpu_model,
        checks,
    }
}

/// The checks as text: one line each, the tolerance below it.
pub fn render(c: &Calibration) -> String {
    let mut out = String::new();
    for check in &c.checks {
        let _ = writeln!(out, "[{:<5}] {:<14} {}", check.verdict.as_str(), check.check, check.detail);
        let _ = writeln!(out, "        {:<14} tolerance: {}", "", check.tolerance);
    }
    let count = |v: Verdict| c.checks.iter().filter(|x| x.verdict == v).count();
    let _ = writeln!(
        out,
        "{} ok, {} warn, {} unfit (taken {} on {})",
        count(Verdict::Ok),
        count(Verdict::Warn),
        count(Verdict::Unfit),
        c.taken_at,
        c.host
    );
    out
}

/// Where the latest calibration is kept; `None` when no directory can be
/// named (no `$HOME`).
pub fn state_path() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let dir = var("WSBENCH_STATE_DIR")
        .or_else(|| var("XDG_STATE_HOME").map(|d| d.join("wsbench")))
        .or_else(|| var("HOME").map(|h| h.join(".local/state/wsbench")))?;
    Some(dir.join("calibration.json"))
}

/// Encodes a calibration as pretty JSON with a final newline.
pub fn to_json(c: &Calibration) -> Result<Vec<u8>> {
    crate::output::export::marks::json(c).context("cannot encode the calibration as JSON")
}

/// Saves `c` as the latest calibration of this machine; returns where.
pub fn save(c: &Calibration, path: &Path) -> Result<()> {
    let dir = crate::output::export::parent_dir(path);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create the state directory `{}`", dir.display()))?;
    crate::output::export::write_output(path, &to_json(c)?)
}

/// The latest saved calibration, if it was taken on this host and CPU
/// model; a missing, unreadable or foreign file is `None` (a run never
/// fails for want of a calibration).
pub fn latest(host: &str, cpu_model: &str) -> Option<Calibration> {
    let path = state_path()?;
    let meta = std::fs::metadata(&path).ok()?;
    const CAP: u64 = 1 << 20;
    if !meta.is_file() || meta.len() > CAP {
        return None;
    }
    let c: Calibration =
        serde_json::from_slice(&crate::data::input::read_input(&path, "the saved calibration").ok()?).ok()?;
    (c.host == host && c.cpu_model == cpu_model && c.generator.starts_with("wsbench ")).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_stated_bounds() {
        assert_eq!(Verdict::of(0.05, 0.05, 0.10), Verdict::Ok);
        assert_eq!(Verdict::of(0.0501, 0.05, 0.10), Verdict::Warn);
        assert_eq!(Verdict::of(0.10, 0.05, 0.10), Verdict::Warn);
        assert_eq!(Verdict::of(0.1001, 0.05, 0.10), Verdict::Unfit);
        assert!(Verdict::Unfit > Verdict::Warn && Verdict::Warn > Verdict::Ok);
    }

    #[test]
    fn proc_stat_steal_and_total() {
        let text = "cpu  100 5 50 800 10 2 3 30 7 0\ncpu0 50 2 25 400 5 1 1 15 3 0\nintr 1\n";
        assert_eq!(parse_proc_stat(text), Some((30, 1000)));
        assert_eq!(parse_proc_stat("cpu  1 2 3\n"), None, "no steal column");
        assert_eq!(parse_proc_stat("intr 1\n"), None);
    }

    #[test]
    fn steal_from_two_readings() {
        let c = steal(Some((10, 1000)), Some((30, 2000)), Duration::from_secs(1));
        assert_eq!(c.verdict, Verdict::Warn, "{c:?}");
        assert_eq!(c.figures[0].value, 2.0);
        let none = steal(None, Some((0, 1)), Duration::from_secs(1));
        assert_eq!(none.verdict, Verdict::Warn);
        assert!(none.figures.is_empty(), "unknown is blank, never 0");
    }

    #[test]
    fn machine_findings_map_to_verdicts() {
        let f = |check: &'static str, level| doctor::Finding {
            check,
            level,
            detail: "d".to_string(),
            fix: if level == Level::Warn { "fix it".to_string() } else { String::new() },
        };
        let checks = machine(&[f("governor", Level::Warn), f("smt", Level::Info), f("load", Level::Warn)]);
        assert_eq!(checks.len(), 2, "load is not an instrument");
        assert_eq!((checks[0].check.as_str(), checks[0].verdict), ("governor", Verdict::Warn));
        assert!(checks[0].detail.contains("fix: fix it"));
        assert_eq!((checks[1].check.as_str(), checks[1].verdict), ("smt", Verdict::Ok));
    }
}
