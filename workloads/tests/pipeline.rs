//! The TCP client's `pipeline` parameter: several requests in flight per
//! connection, answered in order and counted exactly, against the trivial
//! server, a runtime's own `tcp-rpc` and `http` servers, and a server
//! that closes with requests in flight.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

use common::{assert_refused, opts, rt, run_watched, wl};
use wsbench_workloads::api::RunOutput;
use wsbench_workloads::trivial::TrivialServer;

/// Only a hang reaches it (each run is well under a second).
const WATCHDOG: Duration = Duration::from_secs(120);

fn extra(out: &RunOutput, name: &str) -> f64 {
    out.extras.iter().find(|(n, _)| n == name).map_or_else(|| panic!("no extra {name}"), |e| e.1)
}

/// A tcp-rpc server on a loopback port that runs `serve` on its first
/// connection.
fn one_connection(serve: impl FnOnce(TcpStream) + Send + 'static) -> (SocketAddr, thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    (addr, thread::spawn(move || serve(l.accept().unwrap().0)))
}

/// Writes the success response (id, status 0, padding) to each 32-byte
/// tcp-rpc request in `reqs`, in order, in one write.
fn answer(s: &mut TcpStream, reqs: &[u8]) {
    let out: Vec<u8> = reqs.chunks_exact(32).flat_map(|r| r[..8].iter().copied().chain([0u8; 8])).collect();
    s.write_all(&out).unwrap();
}

/// Every scheduled request was sent and answered well, and no connection
/// ended: a tcp-rpc response for another request than the oldest in
/// flight ends its connection, so this also says every answer came back
/// in order.
fn assert_all_answered(out: &RunOutput, n: u64, at: &str) {
    assert_eq!(extra(out, "scheduled"), n as f64, "{at}");
    assert_eq!(extra(out, "never_sent"), 0.0, "{at}");
    assert_eq!((out.sent, out.ops, out.failed), (Some(n), n, Some(0)), "{at}: {:?}", out.notes);
    assert_eq!(extra(out, "failed_connections"), 0.0, "{at}: {:?}", out.notes);
    assert_eq!(out.latency_ns.len(), n, "{at}");
}

fn tcp_load(pipeline: &str, rate: f64) -> wsbench_workloads::api::WorkloadSpec {
    let params = [("arrival", "uniform"), ("connections", "2"), ("client-threads", "1"), ("pipeline", pipeline)];
    wl("tcp-rpc", &params, Some(rate))
}

/// Against the trivial server, 50,000/s on 2 connections: with 8 in flight
/// each, every one of the 10,000 arrivals (uniform, 200 ms from phase 0)
/// is answered, in order.
#[test]
fn pipelined_requests_to_the_trivial_server_are_all_answered_in_order() {
    let server = TrivialServer::start().unwrap();
    for pipeline in ["1", "8"] {
        let out = wsbench_workloads::remote::load(
            server.addr(),
            &rt("tokio", 1),
            &tcp_load(pipeline, 50_000.0),
            &opts(200, 0),
        )
        .unwrap();
        assert_all_answered(&out, 10_000, &format!("pipeline={pipeline}"));
        let resolved = out.params.iter().find(|(k, _)| k == "pipeline").map(|(_, v)| v.as_str());
        assert_eq!(resolved, Some(pipeline));
    }
}

/// The runtime's own tcp-rpc server (tasks reading one request at a time)
/// answers pipelined requests in order too, and records each once.
#[test]
fn pipelined_tcp_rpc_on_a_runtime_answers_every_request() {
    for pipeline in ["1", "8"] {
        let w = {
            let params = [("arrival", "uniform"), ("connections", "2"), ("pipeline", pipeline), ("service-us", "5")];
            wl("tcp-rpc", &params, Some(4_000.0))
        };
        let out = run_watched(&rt("steal-half", 2), &w, &opts(100, 0), WATCHDOG);
        let at = format!("tcp-rpc pipeline={pipeline}");
        assert_all_answered(&out, 400, &at);
        assert_eq!(out.service_ns.as_ref().unwrap().len(), 400, "{at}: server-side records");
    }
    assert_overload_answered("tcp-rpc");
}

/// hyper's HTTP/1.1 server answers pipelined requests in order: every one
/// is answered with the expected body.
#[test]
fn pipelined_http1_on_a_runtime_answers_every_request() {
    for pipeline in ["1", "8"] {
        let params = [("arrival", "uniform"), ("connections", "2"), ("pipeline", pipeline), ("service-us", "5")];
        let out = run_watched(&rt("steal-half", 2), &wl("http", &params, Some(4_000.0)), &opts(100, 0), WATCHDOG);
        assert_all_answered(&out, 400, &format!("http pipeline={pipeline}"));
    }
    assert_overload_answered("http");
}

/// `workload` on a runtime asked 200,000/s for 50 ms with `pipeline=8` on
/// 2 connections (far beyond 2 workers, so connections fill): every
/// request sent is answered well and in order (at most 16 in flight when
/// sending stops, well inside the drain), every arrival is sent or never
/// sent.
fn assert_overload_answered(workload: &str) {
    let params = [("arrival", "uniform"), ("connections", "2"), ("pipeline", "8"), ("service-us", "0")];
    let out = run_watched(&rt("steal-half", 2), &wl(workload, &params, Some(200_000.0)), &opts(50, 0), WATCHDOG);
    let sent = out.sent.unwrap();
    assert_eq!(sent as f64 + extra(&out, "never_sent"), extra(&out, "scheduled"), "{workload}");
    assert_eq!(extra(&out, "scheduled"), 10_000.0, "{workload}");
    assert_eq!((out.ops, out.failed), (sent, Some(0)), "{workload}: {:?}", out.notes);
    assert_eq!(extra(&out, "failed_connections"), 0.0, "{workload}: {:?}", out.notes);
    assert!(extra(&out, "max_streams_per_connection") <= 8.0, "{workload}");
}

/// A server that answers the hello, then reads five requests and closes
/// without answering them: each of the five (and any written before the
/// client saw the close) fails, later arrivals fail at once (no connection
/// is left), and `scheduled = sent + never sent` still holds.
#[test]
fn a_server_closing_with_requests_in_flight_fails_every_one() {
    let (addr, server) = one_connection(|mut s| {
        let mut hello = [0u8; 32];
        s.read_exact(&mut hello).unwrap();
        answer(&mut s, &hello);
        let mut five = [0u8; 5 * 32];
        s.read_exact(&mut five).unwrap();
    });
    // 5,000/s uniform for 100 ms: 500 arrivals, five within the first
    // millisecond, all before any could be answered.
    let params = [("arrival", "uniform"), ("connections", "1"), ("client-threads", "1"), ("pipeline", "8")];
    let out =
        wsbench_workloads::remote::load(addr, &rt("tokio", 1), &wl("tcp-rpc", &params, Some(5_000.0)), &opts(100, 0))
            .unwrap();
    server.join().unwrap();
    assert_eq!(extra(&out, "scheduled"), 500.0);
    assert_eq!(out.sent.unwrap() as f64 + extra(&out, "never_sent"), 500.0, "{:?}", out.notes);
    assert_eq!(out.ops, 0);
    assert_eq!(out.failed, out.sent, "{:?}", out.notes);
    assert!(out.sent.unwrap() >= 5);
    assert_eq!(extra(&out, "failed_connections"), 1.0);
    let ended = out.notes.iter().find(|n| n.contains("client connections ended early")).expect("a note on why");
    assert!(ended.contains("requests in flight") || ended.contains("reset"), "{ended}");
}

/// Against the trivial server, asked 2M/s for 20 ms (40,000 arrivals, far
/// beyond one thread): connections fill to their depth, and still every
/// request sent is answered in order and every arrival is sent or counted
/// never sent.
#[test]
fn under_overload_pipelined_counts_add_up() {
    let server = TrivialServer::start().unwrap();
    let out =
        wsbench_workloads::remote::load(server.addr(), &rt("tokio", 1), &tcp_load("16", 2e6), &opts(20, 0)).unwrap();
    let sent = out.sent.unwrap();
    assert_eq!(extra(&out, "scheduled"), 40_000.0);
    assert_eq!(sent as f64 + extra(&out, "never_sent"), 40_000.0);
    assert_eq!((out.ops, out.failed), (sent, Some(0)), "{:?}", out.notes);
    assert_eq!(extra(&out, "failed_connections"), 0.0, "{:?}", out.notes);
    assert!(extra(&out, "max_streams_per_connection") <= 16.0);
}

/// A server that answers only once it holds 8 requests (then all 8, in
/// order): with `pipeline=8` on one connection the client must keep 8 in
/// flight for any answer to come, and every one of the 800 arrivals (100
/// batches) is answered.
#[test]
fn a_connection_carries_its_whole_depth_at_once() {
    let (addr, server) = one_connection(|mut s| {
        let mut hello = [0u8; 32];
        s.read_exact(&mut hello).unwrap();
        answer(&mut s, &hello);
        let mut batch = [0u8; 8 * 32];
        while s.read_exact(&mut batch).is_ok() {
            answer(&mut s, &batch);
        }
    });
    let params = [("arrival", "uniform"), ("connections", "1"), ("client-threads", "1"), ("pipeline", "8")];
    let out =
        wsbench_workloads::remote::load(addr, &rt("tokio", 1), &wl("tcp-rpc", &params, Some(10_000.0)), &opts(80, 0))
            .unwrap();
    assert_all_answered(&out, 800, "answers in batches of 8");
    assert_eq!(extra(&out, "max_streams_per_connection"), 8.0);
    server.join().unwrap();
}

#[test]
fn bad_pipeline_depths_are_refused_naming_the_value() {
    for workload in ["tcp-rpc", "mixed", "http", "accept-storm"] {
        for bad in ["0", "1025", "x"] {
            assert_refused(workload, "pipeline", bad, "1..=1024");
        }
    }
    let w = wl("http", &[("proto", "h2"), ("pipeline", "4")], None);
    let e = wsbench_workloads::validate(&rt("tokio", 2), &w).unwrap_err().to_string();
    assert!(e.contains("`4`") && e.contains("pipeline") && e.contains("h2"), "{e}");
}
