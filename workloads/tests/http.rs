//! The `http` workload: hyper on every runtime, answered and counted.

mod common;

use std::time::Duration;

use common::{opts, rt, run_watched, wl};

/// Only a hang reaches it (each run is well under a second).
const WATCHDOG: Duration = Duration::from_secs(120);

/// Every scheduler serves HTTP/1.1 through hyper: every request of the
/// schedule is answered with the expected body, and the server recorded
/// each measured request once (queue wait and service time).
#[test]
fn http_runs_on_every_scheduler() {
    for s in wsbench_workloads::schedulers() {
        let workers = if s.single_worker_only { 1 } else { 2 };
        // Uniform 1000/s over 100 ms from phase 0: exactly 100 arrivals.
        let w = wl("http", &[("arrival", "uniform"), ("connections", "8"), ("service-us", "20")], Some(1_000.0));
        let out = run_watched(&rt(s.name, workers), &w, &opts(100, 0), WATCHDOG);
        let at = format!("http on {} x{workers}", s.name);
        assert_eq!((out.sent, out.ops, out.failed), (Some(100), 100, Some(0)), "{at}: {:?}", out.notes);
        assert_eq!(out.latency_ns.len(), 100, "{at}");
        assert_eq!(out.queue_wait_ns.as_ref().unwrap().len(), 100, "{at}: server-side records");
        assert_eq!(out.service_ns.as_ref().unwrap().len(), 100, "{at}");
        // Service times are measured (not the nominal 20 us of spin, which
        // a CPU faster than at calibration finishes sooner): each lies
        // inside its request's end-to-end latency, so every quantile of
        // the latencies is at least that of the service times (up to the
        // histograms' 0.1% buckets).
        let service = out.service_ns.as_ref().unwrap();
        assert!(service.min() > 0, "{at}: a request spun for no time");
        for q in [0.0, 0.5, 0.9, 1.0] {
            let (lat, svc) = (out.latency_ns.value_at_quantile(q), service.value_at_quantile(q));
            assert!(lat as f64 >= 0.998 * svc as f64, "{at}: q{q} latency {lat} ns < service {svc} ns");
        }
        let resolved = |n: &str| out.params.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(resolved("client-threads").as_deref(), Some("1"), "{at}: auto = 1 per 1024 connections");
        assert_eq!(resolved("proto").as_deref(), Some("h1"), "{at}");
    }
}

/// Handler panics and fan-out: every 10th request's handler (or its first
/// subtask) panics; hyper answers 500, the client counts exactly those
/// as failed, and the connection carries on.
#[test]
fn http_failures_are_the_injected_panics() {
    for fanout in ["0", "3"] {
        let params = [("arrival", "uniform"), ("connections", "4"), ("panic-every", "10"), ("fanout", fanout)];
        let out = run_watched(&rt("steal-half", 2), &wl("http", &params, Some(1_000.0)), &opts(200, 0), WATCHDOG);
        assert_eq!(out.sent, Some(200), "fanout {fanout}");
        assert_eq!((out.ops, out.failed), (180, Some(20)), "fanout {fanout}: {:?}", out.notes);
        let ended = out.extras.iter().find(|(n, _)| n == "failed_connections").map(|(_, v)| *v);
        assert_eq!(ended, Some(0.0), "fanout {fanout}: a 500 does not end a keep-alive connection");
    }
}

/// A wrong body length is a failed request: the client expects
/// `response-bytes` bytes of the alphabet; it is told nothing else, so a
/// server configured for 64 and a client for 64 agree (the control) — and
/// the unit tests of the client's parser cover the mismatch itself.
#[test]
fn http_bodies_of_any_length_are_checked() {
    for bytes in ["0", "1", "100000"] {
        let params = [("arrival", "uniform"), ("connections", "2"), ("response-bytes", bytes)];
        let out = run_watched(&rt("tokio", 2), &wl("http", &params, Some(500.0)), &opts(100, 0), WATCHDOG);
        assert_eq!((out.sent, out.ops, out.failed), (Some(50), 50, Some(0)), "{bytes} bytes: {:?}", out.notes);
    }
}

/// HTTP/2 (`proto=h2`) on every scheduler: hyper's h2 server through each
/// runtime's executor and timer glue, the h2 client on its own threads.
/// Every request of the schedule is answered with the expected body, the
/// server recorded each once, and streams share a connection: arrivals
/// every 1 ms whose handlers each spin at least 3 ms on one connection
/// must overlap there (HTTP/1.1 could carry only one of them at a time).
#[test]
fn http2_runs_on_every_scheduler_with_many_streams_per_connection() {
    for s in wsbench_workloads::schedulers() {
        let workers = if s.single_worker_only { 1 } else { 2 };
        // Uniform 1000/s over 20 ms from phase 0: exactly 20 arrivals, 60 ms
        // of spin on one worker, 30x inside the 2 s drain on a busy machine
        // (100 arrivals were 300 ms, only 3-7x).
        let params = [("proto", "h2"), ("arrival", "uniform"), ("connections", "1"), ("service-us", "3000")];
        let out = run_watched(&rt(s.name, workers), &wl("http", &params, Some(1_000.0)), &opts(20, 0), WATCHDOG);
        let at = format!("h2 on {} x{workers}", s.name);
        assert_eq!((out.sent, out.ops, out.failed), (Some(20), 20, Some(0)), "{at}: {:?}", out.notes);
        assert_eq!(out.latency_ns.len(), 20, "{at}");
        assert_eq!(out.service_ns.as_ref().unwrap().len(), 20, "{at}: server-side records");
        let extra = |n: &str| out.extras.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(extra("failed_connections"), Some(0.0), "{at}");
        let streams = extra("max_streams_per_connection").unwrap_or(0.0);
        assert!(streams >= 2.0, "{at}: at most {streams} streams at once on the one connection");
        let resolved = |n: &str| out.params.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(resolved("proto").as_deref(), Some("h2"), "{at}");
    }
}

/// h2 failures are the injected panics (500 on a stream leaves the
/// connection up), and bodies of any length are checked byte by byte
/// across DATA frames and flow-control windows (100 000 bytes > the
/// 65 535-byte initial window).
#[test]
fn http2_failures_and_long_bodies() {
    let params = [("proto", "h2"), ("arrival", "uniform"), ("connections", "2"), ("panic-every", "10")];
    let out = run_watched(&rt("steal-half", 2), &wl("http", &params, Some(1_000.0)), &opts(200, 0), WATCHDOG);
    assert_eq!((out.sent, out.ops, out.failed), (Some(200), 180, Some(20)), "{:?}", out.notes);
    for bytes in ["0", "100000"] {
        let params = [("proto", "h2"), ("arrival", "uniform"), ("connections", "2"), ("response-bytes", bytes)];
        let out = run_watched(&rt("tokio", 2), &wl("http", &params, Some(500.0)), &opts(100, 0), WATCHDOG);
        assert_eq!((out.sent, out.ops, out.failed), (Some(50), 50, Some(0)), "{bytes} bytes: {:?}", out.notes);
    }
}
