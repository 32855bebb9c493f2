//! Issue 3's measurements: timer lateness of 10,000 concurrent 10 ms sleeps,
//! and loopback echo round trips, for every policy and for tokio, at 2
//! workers (current-thread and tokio current_thread at 1).
//!
//! `cargo run --release -p wsbench-schedulers --example timers_echo [ROUNDS]`
//!
//! Rounds alternate the runtimes (interleaved) and the medians over rounds
//! of each statistic are printed, with the ratio to tokio.

use std::time::{Duration, Instant};

use wsbench_schedulers::{Builder, SchedulerKind};

const SLEEPERS: usize = 10_000;
const SLEEP: Duration = Duration::from_millis(10);
const ECHOES: usize = 5_000;
const MSG: usize = 64;
const WORKERS: usize = 2;

fn pct(v: &mut [u64], p: f64) -> u64 {
    v.sort_unstable();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// (lateness p50, p99, echo rtt p50, p99) in microseconds.
type Stats = [u64; 4];

fn ours(kind: SchedulerKind, workers: usize) -> Stats {
    use wsbench_schedulers::net::{TcpListener, TcpStream};
    let rt = Builder::new(kind).workers(workers).build().unwrap();
    rt.block_on(async {
        let start = Instant::now() + Duration::from_millis(5);
        let hs: Vec<_> = (0..SLEEPERS)
            .map(|_| {
                wsbench_schedulers::spawn(async move {
                    let deadline = start + SLEEP;
                    wsbench_schedulers::time::sleep_until(deadline).await;
                    Instant::now().saturating_duration_since(deadline).as_micros() as u64
                })
            })
            .collect();
        let mut late = Vec::with_capacity(SLEEPERS);
        for h in hs {
            late.push(h.await.unwrap());
        }
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = wsbench_schedulers::spawn(async move {
            let (s, _) = listener.accept().await.unwrap();
            s.set_nodelay(true).unwrap();
            let mut buf = [0u8; MSG];
            for _ in 0..ECHOES {
                s.read_exact(&mut buf).await.unwrap();
                s.write_all(&buf).await.unwrap();
            }
        });
        // The client is a task too, so both ends run on the runtime's
        // workers (for every runtime alike).
        let client = wsbench_schedulers::spawn(async move {
            let c = TcpStream::connect(addr).await.unwrap();
            c.set_nodelay(true).unwrap();
            let mut rtt = Vec::with_capacity(ECHOES);
            let mut buf = [7u8; MSG];
            for _ in 0..ECHOES {
                let t = Instant::now();
                c.write_all(&buf).await.unwrap();
                c.read_exact(&mut buf).await.unwrap();
                rtt.push(t.elapsed().as_micros() as u64);
            }
            rtt
        });
        let mut rtt = client.await.unwrap();
        server.await.unwrap();
        [pct(&mut late, 0.5), pct(&mut late, 0.99), pct(&mut rtt, 0.5), pct(&mut rtt, 0.99)]
    })
}

fn tokio_rt(workers: usize) -> Stats {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = if workers == 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().unwrap()
    };
    rt.block_on(async {
        let start = tokio::time::Instant::now() + Duration::from_millis(5);
        let hs: Vec<_> = (0..SLEEPERS)
            .map(|_| {
                tokio::spawn(async move {
                    let deadline = start + SLEEP;
                    tokio::time::sleep_until(deadline).await;
                    tokio::time::Instant::now().saturating_duration_since(deadline).as_micros() as u64
                })
            })
            .collect();
        let mut late = Vec::with_capacity(SLEEPERS);
        for h in hs {
            late.push(h.await.unwrap());
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            s.set_nodelay(true).unwrap();
            let mut buf = [0u8; MSG];
            for _ in 0..ECHOES {
                s.read_exact(&mut buf).await.unwrap();
                s.write_all(&buf).await.unwrap();
            }
        });
        let client = tokio::spawn(async move {
            let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
            c.set_nodelay(true).unwrap();
            let mut rtt = Vec::with_capacity(ECHOES);
            let mut buf = [7u8; MSG];
            for _ in 0..ECHOES {
                let t = Instant::now();
                c.write_all(&buf).await.unwrap();
                c.read_exact(&mut buf).await.unwrap();
                rtt.push(t.elapsed().as_micros() as u64);
            }
            rtt
        });
        let mut rtt = client.await.unwrap();
        server.await.unwrap();
        [pct(&mut late, 0.5), pct(&mut late, 0.99), pct(&mut rtt, 0.5), pct(&mut rtt, 0.99)]
    })
}

fn main() {
    let rounds: usize = std::env::args().nth(1).map_or(5, |s| s.parse().expect("ROUNDS: a positive integer"));
    let mut names: Vec<(String, Box<dyn Fn() -> Stats>)> = Vec::new();
    for k in SchedulerKind::ALL {
        let w = if k == SchedulerKind::CurrentThread { 1 } else { WORKERS };
        names.push((format!("{k} x{w}"), Box::new(move || ours(k, w))));
    }
    names.push((format!("tokio x{WORKERS}"), Box::new(|| tokio_rt(WORKERS))));
    names.push(("tokio-current x1".to_string(), Box::new(|| tokio_rt(1))));
    let mut results: Vec<Vec<Stats>> = vec![Vec::new(); names.len()];
    for _ in 0..rounds {
        for (i, (_, f)) in names.iter().enumerate() {
            results[i].push(f());
        }
    }
    let med = |i: usize, j: usize| median(results[i].iter().map(|s| s[j]).collect());
    let tokio_i = names.len() - 2;
    println!(
        "{rounds} interleaved rounds; medians over rounds; {SLEEPERS} sleeps of {SLEEP:?}; {ECHOES} echoes of {MSG} B"
    );
    println!(
        "{:<18} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "runtime", "late p50", "late p99", "rtt p50", "rtt p99", "rtt p50/tokio"
    );
    for (i, (name, _)) in names.iter().enumerate() {
        println!(
            "{:<18} {:>8}us {:>8}us {:>8}us {:>8}us {:>12.2}",
            name,
            med(i, 0),
            med(i, 1),
            med(i, 2),
            med(i, 3),
            med(i, 2) as f64 / med(tokio_i, 2).max(1) as f64
        );
    }
}
