//! The client against small std-thread servers that misbehave on purpose:
//! each fault ends as an error or as counted failures, never a hang.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::thread;
use std::time::{Duration, Instant};

use super::proto::Http1;
use super::*;
use crate::arrivals::ArrivalKind;
use crate::cpu_time::CpuMeter;

const BODY: usize = 5;

fn load(rate: f64, duration_ms: u64) -> LoadSpec {
    LoadSpec {
        rate_per_s: rate,
        arrival: ArrivalKind::Uniform,
        threads: 1,
        cores: Vec::new(),
        seed: 7,
        warmup: Duration::ZERO,
        duration: Duration::from_millis(duration_ms),
        stall: Duration::ZERO,
        panic_every: 0,
        side: crate::side::SidePool::OFF,
    }
}

fn spec(addr: SocketAddr, connections: usize, threads: usize, load: LoadSpec) -> ClientSpec {
    ClientSpec { addr, connections, threads, pipeline: 1, load }
}

const OK_RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nabcde";

/// Serves `connections` clients: answers every request (a head ending in
/// an empty line) with `OK_RESPONSE`, and closes a connection after
/// `answers_per_conn` answers.
fn http_server(connections: usize, answers_per_conn: usize) -> (SocketAddr, thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let h = thread::spawn(move || {
        let mut handlers = Vec::new();
        for _ in 0..connections {
            let (mut s, _) = l.accept().unwrap();
            handlers.push(thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                let mut answered = 0;
                while answered < answers_per_conn {
                    let Ok(n) = s.read(&mut chunk) else { return };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        if s.write_all(OK_RESPONSE).is_err() {
                            return;
                        }
                        answered += 1;
                    }
                }
            }));
        }
        for h in handlers {
            h.join().unwrap();
        }
    });
    (addr, h)
}

#[test]
fn every_scheduled_request_is_answered_by_a_healthy_server() {
    let (addr, server) = http_server(4, usize::MAX);
    let proto = Http1::new(BODY, "t".into());
    // Uniform 2000/s over 100 ms from phase 0: exactly 200 arrivals.
    let cs = spec(addr, 4, 2, load(2000.0, 100));
    let run = run_clients(&cs, &proto, Instant::now(), &|| {}, || (), &CpuMeter::new()).unwrap();
    let sent: u64 = run.threads.iter().map(|t| t.gen.sent).sum();
    let ok: u64 = run.threads.iter().map(|t| t.histos.completed).sum();
    let failed: u64 = run.threads.iter().map(|t| t.histos.failed).sum();
    assert_eq!((sent, ok, failed), (200, 200, 0));
    assert!(run.threads.iter().all(|t| t.ended == 0 && t.first_error.is_none()));
    drop(run);
    server.join().unwrap();
}

#[test]
fn a_refusing_target_is_an_error_not_a_hang() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let proto = Http1::new(BODY, "t".into());
    let err = run_clients(&spec(addr, 3, 1, load(100.0, 50)), &proto, Instant::now(), &|| {}, || (), &CpuMeter::new())
        .err()
        .expect("nothing listens there");
    let text = err.to_string();
    assert!(text.contains(&addr.to_string()) && text.contains("refused"), "{text}");
}

#[test]
fn a_peer_that_does_not_speak_http_is_named() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let _ = s.write_all(b"SSH-2.0-OpenSSH_9.6\r\n");
        thread::sleep(Duration::from_millis(200));
    });
    let proto = Http1::new(BODY, "t".into());
    let err = run_clients(&spec(addr, 1, 1, load(100.0, 50)), &proto, Instant::now(), &|| {}, || (), &CpuMeter::new())
        .err()
        .expect("the only connection is unusable");
    assert!(err.to_string().contains("does not speak HTTP/1.1"), "{err}");
    server.join().unwrap();
}

#[test]
fn a_server_closing_mid_run_costs_counted_failures() {
    // Two connections, each closed after the hello and 10 answers: 20
    // requests succeed, the remaining 80 of the 100 scheduled fail.
    let (addr, server) = http_server(2, 11);
    let proto = Http1::new(BODY, "t".into());
    let cs = spec(addr, 2, 1, load(1000.0, 100));
    let run = run_clients(&cs, &proto, Instant::now(), &|| {}, || (), &CpuMeter::new()).unwrap();
    let t = &run.threads[0];
    assert_eq!(t.gen.sent, 100);
    assert_eq!(t.histos.completed, 20);
    assert_eq!(t.histos.failed, 80);
    assert_eq!(t.ended, 2);
    assert!(t.first_error.as_deref().unwrap().contains("closed"), "{:?}", t.first_error);
    server.join().unwrap();
}

/// Issue 26: under overload every scheduled request is sent or counted as
/// never sent. Uniform 10M/s for 20 ms from phase 0 is exactly 200,000
/// arrivals (one every 100 ns); 16 connections answered by threads cannot
/// carry that, so most wait in the backlog until `send_until` and are
/// counted never sent; every one sent is answered or failed.
#[test]
fn under_overload_every_scheduled_request_is_sent_or_never_sent() {
    let (addr, server) = http_server(16, usize::MAX);
    let proto = Http1::new(BODY, "t".into());
    let cs = spec(addr, 16, 1, load(10_000_000.0, 20));
    let run = run_clients(&cs, &proto, Instant::now(), &|| {}, || (), &CpuMeter::new()).unwrap();
    let t = &run.threads[0];
    assert_eq!(t.gen.scheduled, 200_000);
    assert_eq!(t.gen.sent + t.gen.skipped, 200_000, "sent {} never sent {}", t.gen.sent, t.gen.skipped);
    assert_eq!(t.histos.completed + t.histos.failed, t.gen.sent, "every request sent was answered");
    assert!(t.histos.completed_in_window <= t.histos.completed);
    drop(run);
    server.join().unwrap();
}

#[test]
fn the_backlog_replays_the_schedule_in_order_with_the_thread_s_ids() {
    let spec = LoadSpec { arrival: ArrivalKind::Poisson, threads: 3, ..load(1e6, 10) };
    let start = Instant::now();
    let mut release = crate::loadgen::schedule(&spec, 1);
    let mut backlog = Backlog::new(release.clone(), start, 1, 3);
    assert!(backlog.front().is_none() && backlog.pop().is_none());
    let mut expected = Vec::new();
    for k in 0..1000u64 {
        expected.push((1 + 3 * k, start + Duration::from_nanos(release.next_offset_ns())));
        backlog.release();
    }
    // Peeking does not consume; popping drains exactly what was released.
    let head = backlog.front().map(|p| (p.id, p.intended));
    assert_eq!(head, Some(expected[0]));
    let got: Vec<_> = std::iter::from_fn(|| backlog.pop()).map(|p| (p.id, p.intended)).collect();
    assert_eq!(got, expected);
    assert!(backlog.is_empty() && backlog.front().is_none());
    // Released later, after a drained backlog: the replay stays in step.
    let t = start + Duration::from_nanos(release.next_offset_ns());
    backlog.release();
    assert_eq!(backlog.pop().map(|p| (p.id, p.intended)), Some((1 + 3 * 1000, t)));
}

#[test]
fn the_loop_spins_for_answers_only_while_they_come_close_together() {
    let mut gap = AnswerGap::default();
    assert!(!gap.close(), "no answers yet: no spin");
    gap.saw(0);
    gap.saw(0);
    assert!(!gap.close(), "one reading is no gap");
    // A million answers within one call's time: the gap is far below 30 µs.
    gap.saw(1_000_000);
    assert!(gap.close());
    // Then answers a millisecond or more apart pull the average above it.
    for n in 1..=64 {
        thread::sleep(Duration::from_millis(1));
        gap.saw(1_000_000 + n);
    }
    assert!(!gap.close(), "{:?}", gap.avg_ns);
}
