//! Known-answer tests of the CPU columns: a workload whose requests cost a
//! known amount of CPU (calibrated spinning) reports that cost per request
//! within a stated margin on ours, tokio and smol; under light load a
//! worker that spins before parking (`idle=backoff`) costs more CPU than
//! one that parks at once (`idle=park`).
//!
//! These compare CPU time, not wall time, so a machine loaded by other
//! processes stretches the runs but not the answer.

mod common;

use common::{judge, opts, rt, rt_knobs, run, with_cpu_pressure, wl};
use wsbench_workloads::api::{CpuUsage, RunOutput};

/// Every test here counts the CPU of every thread this process starts: one
/// at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn cpu_us_per_op(out: &RunOutput) -> f64 {
    let cpu: CpuUsage = out.cpu.expect("/proc is readable here");
    cpu.cpu_ns as f64 / 1e3 / out.ops as f64
}

/// `rpc-fanout` with `fanout=2`, `service=fixed`, `service-us=S` at 250
/// requests/s on one worker (under 20% busy): each request costs 2 x S of
/// calibrated spinning plus the runtime's own work (spawning 3 tasks,
/// joining 2, parking and being woken once or twice).
fn cpu_per_request(sched: &str, service_us: u32) -> f64 {
    let service = service_us.to_string();
    let w = wl(
        "rpc-fanout",
        &[("fanout", "2"), ("service", "fixed"), ("service-us", &service), ("arrival", "uniform")],
        Some(250.0),
    );
    let out = run(&rt(sched, 1), &w, &opts(600, 100)).unwrap();
    assert!(out.ops >= 100, "{sched}: {} ops", out.ops);
    let cpu = out.cpu.expect("/proc is readable here");
    assert!(cpu.ctx_switches_voluntary > 0, "{sched}: an idle worker parks: {cpu:?}");
    cpu_us_per_op(&out)
}

/// The stated margins, per runtime:
/// - at S = 100 us (200 us of spin per request) the CPU per request is in
///   [0.95 x 200, 200 + 150] us: the spin is calibrated on its fastest
///   trial, so it cannot cost much less; above, up to 150 us for the
///   runtime's own work per request at low load (measured on the 2-core
///   development VM: steal-half 37, smol 40, tokio 86);
/// - going from S = 100 to S = 300 us adds 2 x 200 = 400 us per request,
///   within -10% .. +30% (the runtime's share cancels; what is left is the
///   spin, which costs more than calibrated: the calibration keeps its
///   fastest trial, and a shared VM's CPU speed drifts).
///
/// The +30%, measured on the 2-core VM with nothing else running: a control
/// (40 ms of calibrated spin timed with the test thread's own CPU clock)
/// cost 1.00-1.18 times its calibrated time, 1.06 typically; over 6 runs of
/// this test the median addition was 411-459 us (1.03-1.15x) for each
/// runtime; one CI run, with 3 repetitions then, saw smol add 526 us
/// (1.31x) at 1.2% CPU pressure: its lows ran in a fast stretch (222, 226,
/// 262 us) and its highs in a slow one (663, 753, 759 us). The errors this
/// guards against are far larger: a worker's CPU not counted (about 0), a
/// thread counted twice (800), wall time taken for CPU time (thousands).
#[test]
fn a_known_cpu_cost_per_request_is_reported_for_ours_tokio_and_smol() {
    let _serial = serial();
    const SPIN_US: f64 = 200.0;
    const ADDED_US: f64 = 400.0;
    // Five interleaved repetitions per runtime, judged on their medians:
    // one 600 ms run in five or so lands 10-30% high on a shared VM.
    const REPS: usize = 5;
    for sched in ["steal-half", "tokio", "smol"] {
        let ((mut lows, mut highs), stolen) = with_cpu_pressure(|| {
            let (mut lows, mut highs) = (Vec::new(), Vec::new());
            for _ in 0..REPS {
                lows.push(cpu_per_request(sched, 100));
                highs.push(cpu_per_request(sched, 300));
            }
            (lows, highs)
        });
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (low, high) = (median(&mut lows), median(&mut highs));
        eprintln!("{sched}: median {low:.1} us CPU per request at 2 x 100 us, {high:.1} us at 2 x 300 us ({lows:?}, {highs:?})");
        let (lo, hi) = (0.95 * SPIN_US, SPIN_US + 150.0);
        let added = high - low;
        let check = if !(lo..=hi).contains(&low) {
            Err(format!("{low:.1} us of CPU per request, outside [{lo}, {hi}]"))
        } else if !(0.9 * ADDED_US..=1.3 * ADDED_US).contains(&added) {
            Err(format!("2 x 200 us more spin added {added:.1} us of CPU per request, not 400 -10% +30%"))
        } else {
            Ok(())
        };
        judge(sched, check, stolen);
    }
}

/// Light load (5000 no-op requests/s on 2 workers, ~2% busy): with
/// `idle=backoff` a worker that runs out of work spins and yields before
/// parking, and burns CPU doing so; with `idle=park` it parks at once. The
/// gaps between requests (~200 us on average) are far longer than the
/// backoff (a few us), so backoff rarely catches work and only adds. No-op
/// handlers keep the base cost per request small, so the addition shows.
/// The claim: the median CPU per request over 5 interleaved runs is higher
/// with backoff (measured on the loaded 2-core VM: 12.4 vs 7.7 us, 1.6x),
/// and its `sched_yield`s show as involuntary context switches (asserted:
/// at least 5x as many).
#[test]
fn idle_backoff_costs_more_cpu_than_idle_park_under_light_load() {
    let _serial = serial();
    const RUNS: usize = 5;
    let w = wl("rpc-fanout", &[("fanout", "0")], Some(5000.0));
    let mut samples: [Vec<(f64, u64)>; 2] = [Vec::new(), Vec::new()];
    let ((), stolen) = with_cpu_pressure(|| {
        for i in 0..RUNS {
            // ABBA order, so a drift in machine load favours neither.
            let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
            for k in order {
                let spec = rt_knobs("steal-half", 2, &[("idle", ["park", "backoff"][k])]).unwrap();
                let out = run(&spec, &w, &opts(300, 50)).unwrap();
                let cpu = out.cpu.expect("/proc is readable here");
                samples[k].push((cpu_us_per_op(&out), cpu.ctx_switches_involuntary));
            }
        }
    });
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let cpu: Vec<f64> = samples.iter().map(|s| median(&mut s.iter().map(|x| x.0).collect())).collect();
    let involuntary: Vec<f64> = samples.iter().map(|s| median(&mut s.iter().map(|x| x.1 as f64).collect())).collect();
    eprintln!("CPU per request: park {:.1} us, backoff {:.1} us; involuntary switches {involuntary:?}", cpu[0], cpu[1]);
    // CPU per request is CPU time, but on a machine oversubscribed by other
    // processes a parked worker's wake-ups get dearer (more migrations and
    // cache refills), which can hide the backoff's spinning: a failed check
    // under stolen CPU is reported inconclusive (strict with
    // WSBENCH_STRICT_MEASUREMENT, as in the nightly script).
    let check = if cpu[1] > cpu[0] {
        Ok(())
    } else {
        Err(format!("idle=backoff {:.1} us per request vs idle=park {:.1} us", cpu[1], cpu[0]))
    };
    judge("idle=backoff vs idle=park CPU per request", check, stolen);
    assert!(involuntary[1] >= 5.0 * involuntary[0].max(1.0), "involuntary switches park/backoff: {involuntary:?}");
}

/// `current-thread` and `tokio-current` run tokio's benchmarks inside
/// `block_on` on the calling thread, which is then the runtime's only
/// thread: its CPU must be counted. `spawn-many-local` keeps that thread
/// runnable for the whole window (every task is ready at once, nothing
/// parks), so the runtime's CPU is its share of a CPU over the window;
/// uncounted it would be ~0 (no thread of the runtime's own). 1% is far
/// below any share a runnable thread gets, even at a load of 20 on 2 cores.
#[test]
fn the_block_on_thread_of_a_single_threaded_runtime_is_counted() {
    let _serial = serial();
    for sched in ["current-thread", "tokio-current"] {
        let out = run(&rt(sched, 1), &wl("spawn-many-local", &[], None), &opts(300, 50)).unwrap();
        let cpu = out.cpu.expect("/proc is readable here");
        let floor_ns = cpu.window.as_nanos() as u64 / 100;
        assert!(cpu.cpu_ns > floor_ns, "{sched}: {} ns of CPU over a {:?} window", cpu.cpu_ns, cpu.window);
    }
}
