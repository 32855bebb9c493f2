//! Known-answer tests of the measurement itself, and of honest reporting
//! under faults and overload.

mod common;

use common::{judge, opts, rt, run, us, with_cpu_pressure, wl};

/// The tests in this file measure time: they run one at a time (cargo runs
/// a file's tests on parallel threads, which would make them compete for
/// the CPUs they measure).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    // A failed test poisons the lock; the next one may still run.
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runtimes with one worker that every measurement test runs on.
const ONE_WORKER: [&str; 5] = ["tokio", "tokio-current", "smol", "current-thread", "steal-half"];

/// Attempts per runtime for (a): a run whose load generator was itself
/// held up (the machine was busy) measured the machine, not the runtime.
const ATTEMPTS: usize = 3;

/// (a) Fixed service time S at low load: p50 latency lands within
/// [0.9 S, 1.25 S + 250 us] of S — the stated margin covers spawn and
/// wake-up costs plus calibration error of the spin — and so does the
/// service-time p50; queue wait p50 stays under 1 ms.
///
/// Corrected latency = generator lag + uncorrected latency, exactly, per
/// request. When every attempt's generator slipped (another process took
/// the CPU), the uncorrected p50 — the runtime's part — must still meet the
/// margin. A timing check that fails while other processes held the CPUs
/// (pressure stall information over [`common::STOLEN_CPU_LIMIT`]) is reported
/// inconclusive with the reason, unless [`common::STRICT_ENV`] is set.
#[test]
fn fixed_service_time_at_low_load_gives_p50_near_s() {
    let _serial = serial();
    const S_US: f64 = 2_000.0;
    let (lo, hi) = (0.9 * S_US, 1.25 * S_US + 250.0);
    let w = wl(
        "rpc-fanout",
        &[("fanout", "1"), ("service", "fixed"), ("service-us", "2000"), ("arrival", "uniform")],
        Some(50.0),
    );
    for sched in ONE_WORKER {
        let runs: Vec<_> = (0..ATTEMPTS)
            .map_while(|_| {
                let (out, stolen) = with_cpu_pressure(|| run(&rt(sched, 1), &w, &opts(1_000, 200)));
                out.map(|o| (o, stolen))
            })
            .collect();
        let clean = runs.iter().find(|(o, _)| !o.schedule_slipped);
        let (out, _) = clean.unwrap_or(&runs[0]);
        // The largest CPU wait of the attempts: any of them may be the one judged.
        let stolen = runs.iter().filter_map(|(_, s)| *s).reduce(f64::max);
        assert_eq!(out.sent, Some(out.ops + out.failed.unwrap()));
        assert_eq!(out.failed, Some(0), "{sched}: {:?}", out.notes);
        // Every request is in both histograms (corrected and uncorrected).
        let unc = out.uncorrected_ns.as_ref().unwrap();
        assert_eq!((out.latency_ns.len(), unc.len()), (out.ops, out.ops), "{sched}");
        let p50 = us(out.latency_ns.value_at_quantile(0.5));
        let unc_p50 = us(unc.value_at_quantile(0.5));
        let service_p50 = us(out.service_ns.as_ref().unwrap().value_at_quantile(0.5));
        let within = |name: &str, v: f64| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} {v} us outside [{lo}, {hi}]"))
            }
        };
        let mut check = within("uncorrected p50", unc_p50).and(within("service p50", service_p50));
        if clean.is_some() {
            let queue_p50 = us(out.queue_wait_ns.as_ref().unwrap().value_at_quantile(0.5));
            check = check.and(within("p50", p50)).and(if queue_p50 < 1_000.0 {
                Ok(())
            } else {
                Err(format!("queue wait p50 {queue_p50} us"))
            });
        } else {
            eprintln!("{sched}: the load generator slipped in all {ATTEMPTS} attempts (busy machine); checked the uncorrected p50 only");
        }
        judge(sched, check, stolen);
    }
}

/// (b) wrk2's demonstration: a 200 ms stall of the only worker, mid-run.
/// Two pooled connections at 1000/s: during the stall both wait for a
/// response, every later request is sent late. Measured from the intended
/// send time (corrected) the stall dominates the tail; measured from the
/// actual send (uncorrected) it touches only the two requests in flight,
/// so p99 does not see it.
#[test]
fn a_stall_shows_in_the_corrected_tail_not_the_uncorrected_one() {
    let _serial = serial();
    let w = wl(
        "tcp-rpc",
        &[
            ("connections", "2"),
            ("arrival", "uniform"),
            ("service", "fixed"),
            ("service-us", "10"),
            ("stall-ms", "200"),
        ],
        Some(1_000.0),
    );
    for sched in ONE_WORKER {
        let Some(out) = run(&rt(sched, 1), &w, &opts(1_000, 100)) else {
            continue;
        };
        let unc = out.uncorrected_ns.as_ref().unwrap();
        let (p99, max) = (us(out.latency_ns.value_at_quantile(0.99)), us(out.latency_ns.max()));
        let unc_p99 = us(unc.value_at_quantile(0.99));
        assert!(p99 >= 150_000.0, "{sched}: corrected p99 {p99} us does not show the 200 ms stall");
        assert!(max >= 180_000.0, "{sched}: corrected max {max} us does not show the 200 ms stall");
        assert!(unc_p99 < 50_000.0, "{sched}: uncorrected p99 {unc_p99} us shows the stall");
        assert!(out.schedule_slipped, "{sched}: clients were held up by the stall but no slip was reported");
        assert_eq!(out.sent, Some(out.ops + out.failed.unwrap()));
    }
}

/// In-process open loop: the generator never waits for the runtime, so a
/// stall shows in the corrected latency and in the queue wait.
#[test]
fn a_stall_shows_in_in_process_queue_wait() {
    let _serial = serial();
    let w = wl(
        "rpc-fanout",
        &[("fanout", "1"), ("service-us", "10"), ("arrival", "uniform"), ("stall-ms", "200")],
        Some(1_000.0),
    );
    for sched in ONE_WORKER {
        let Some(out) = run(&rt(sched, 1), &w, &opts(1_000, 100)) else {
            continue;
        };
        let q99 = us(out.queue_wait_ns.as_ref().unwrap().value_at_quantile(0.99));
        assert!(us(out.latency_ns.value_at_quantile(0.99)) >= 150_000.0, "{sched}");
        assert!(q99 >= 150_000.0, "{sched}: queue wait p99 {q99} us");
        assert_eq!(out.sent, Some(out.ops + out.failed.unwrap()));
    }
}

/// A handler that panics is a failed request; the run goes on and the
/// counts add up. Every 10th request panics (one generator thread or one
/// shared schedule: ids are 0, 1, 2, ... so exactly sent / 10 fail).
#[test]
fn panicking_handlers_are_failed_requests() {
    let _serial = serial();
    for name in ["rpc-fanout", "skewed", "timers", "timeouts", "tcp-rpc", "mixed"] {
        let mut params = vec![("panic-every", "10"), ("arrival", "uniform")];
        params.push(if name == "tcp-rpc" || name == "mixed" { ("connections", "4") } else { ("loadgen-threads", "1") });
        let w = wl(name, &params, Some(500.0));
        let out = run(&rt("tokio", 2), &w, &opts(300, 0)).expect("tokio is always built");
        assert_eq!(out.sent, Some(out.ops + out.failed.unwrap()), "{name}");
        assert!(out.ops > 0, "{name}: the run did not continue after panics");
        let (sent, failed) = (out.sent.unwrap(), out.failed.unwrap());
        let injected = sent / 10;
        if matches!(name, "timers" | "timeouts" | "mixed") {
            assert!(failed >= injected, "{name}: {failed} failed, {injected} panics injected");
        } else {
            assert_eq!(failed, injected, "{name}: {:?}", out.notes);
        }
        assert!(out.notes.iter().any(|n| n.contains("failed")), "{name}: failures not reported: {:?}", out.notes);
    }
}

/// Offered load above capacity: the generator does not slow down, latency
/// grows, achieved throughput falls below the offered rate; everything
/// sent is accounted for.
#[test]
fn saturation_is_reported_not_hidden() {
    let _serial = serial();
    let w = wl("rpc-fanout", &[("fanout", "1"), ("service", "fixed"), ("service-us", "1000")], Some(3_000.0));
    let out = run(&rt("tokio", 1), &w, &opts(300, 0)).expect("tokio is always built");
    let achieved = out.ops as f64 / out.elapsed.as_secs_f64();
    assert!(achieved < 0.6 * 3_000.0, "achieved {achieved}/s at an offered 3000/s with 1 ms of work on one worker");
    assert!(us(out.latency_ns.value_at_quantile(0.99)) > 50_000.0, "latency did not grow");
    assert_eq!(out.sent, Some(out.ops + out.failed.unwrap()));
}

/// Over TCP the clients are held back by a saturated server: the run says
/// it could not keep its schedule, and corrected latency exceeds the
/// uncorrected one.
#[test]
fn a_saturated_tcp_server_makes_the_schedule_slip_visibly() {
    let _serial = serial();
    let w = wl("tcp-rpc", &[("connections", "4"), ("service", "fixed"), ("service-us", "2000")], Some(2_000.0));
    let out = run(&rt("tokio", 1), &w, &opts(300, 0)).expect("tokio is always built");
    assert!(out.schedule_slipped, "{:?}", out.notes);
    assert!(out.notes.iter().any(|n| n.contains("could not keep its schedule")), "{:?}", out.notes);
    let achieved = out.ops as f64 / out.elapsed.as_secs_f64();
    assert!(achieved < 0.5 * 2_000.0, "achieved {achieved}/s");
    let unc = out.uncorrected_ns.as_ref().unwrap();
    assert!(out.latency_ns.value_at_quantile(0.99) > 2 * unc.value_at_quantile(0.99));
    assert_eq!(out.sent, Some(out.ops + out.failed.unwrap()));
}

/// `timeouts`, known answers. A call far shorter than its timeout (the
/// defaults: ~10 us under 100 ms) never fires: no failures,
/// `timeouts_fired` 0, and no lateness reported at all (blank, not a
/// made-up zero). A call that outlasts its timeout (a 100 ms spin under a
/// 1 ms timeout, one call at a time: 5 requests/s, uniform, 2 workers):
/// whether the overdue timeout or the finished call wins depends on
/// whether the free worker ran the timer while the other spun (tokio's did
/// in 1 of 5 requests here, smol's in 3 of 5 on this loaded machine), so
/// what is checked is the accounting: every request finished, every
/// failure is a fired timeout, and lateness is reported exactly when a
/// timeout fired.
#[test]
fn timeouts_fire_exactly_when_the_call_outlasts_them() {
    let _serial = serial();
    let extra = |out: &wsbench_workloads::api::RunOutput, name: &str| {
        out.extras.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    };
    let quiet = [("arrival", "uniform"), ("loadgen-threads", "1")];
    for sched in ONE_WORKER {
        let out = run(&rt(sched, 1), &wl("timeouts", &quiet, Some(500.0)), &opts(300, 50)).expect("built");
        assert!(out.ops > 0, "{sched}");
        assert_eq!(out.failed, Some(0), "{sched}: {:?}", out.notes);
        assert_eq!(extra(&out, "timeouts_fired"), Some(0.0), "{sched}: {:?}", out.extras);
        assert_eq!(extra(&out, "timeout_lateness_p50_us"), None, "{sched}: {:?}", out.extras);
    }
    let firing = [
        ("service", "fixed"),
        ("service-us", "100000"),
        ("timeout-ms", "1"),
        ("arrival", "uniform"),
        ("loadgen-threads", "1"),
    ];
    for sched in ["smol", "tokio", "steal-half", "global"] {
        let out = run(&rt(sched, 2), &wl("timeouts", &firing, Some(5.0)), &opts(1_000, 50)).expect("built");
        let (sent, failed) = (out.sent.expect("open loop"), out.failed.expect("open loop"));
        assert!(sent > 0, "{sched}");
        assert_eq!(out.ops + failed, sent, "{sched}: {:?}", out.notes);
        assert_eq!(extra(&out, "timeouts_fired"), Some(failed as f64), "{sched}: {:?}", out.extras);
        assert_eq!(extra(&out, "timeout_lateness_p50_us").is_some(), failed > 0, "{sched}: {:?}", out.extras);
        if let Some(late_p50) = extra(&out, "timeout_lateness_p50_us") {
            // Resumed no later than the end of the spin plus a loaded
            // machine's scheduling delay.
            assert!(late_p50 < 1e6, "{sched}: lateness p50 {late_p50} us for a 100 ms call");
        }
    }
}
