//! `thread-per-core`: what makes it N independent runtimes — spawns from
//! outside go round-robin, spawns from a task stay on its core, and a
//! listener per core shares one port through `SO_REUSEPORT` with the
//! kernel spreading connections. (Exactly-once, shutdown, timers and TCP
//! run in the suites that cover every policy.)

mod common;

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use common::{build, Latch};
use wsbench_schedulers::net::TcpListener;
use wsbench_schedulers::{spawn, SchedulerKind};

const CORES: usize = 4;
const HANG_LIMIT: Duration = Duration::from_secs(60);

/// 4 x CORES spawns from a plain thread: core i receives exactly 4 (the
/// cursor starts at core 0 and nothing else spawns from outside).
#[test]
fn spawns_from_outside_go_round_robin() {
    let rt = build(SchedulerKind::ThreadPerCore, CORES);
    let threads = Arc::new(Mutex::new(Vec::new()));
    let latch = Latch::new(4 * CORES);
    for _ in 0..4 * CORES {
        let (t, l) = (threads.clone(), latch.clone());
        rt.spawn(async move {
            t.lock().unwrap().push(std::thread::current().id());
            l.count_down();
        });
    }
    latch.wait(HANG_LIMIT, "round-robin spawns");
    let m = rt.metrics();
    assert_eq!(m.workers.len(), CORES);
    let per_core: Vec<u64> = m.workers.iter().map(|w| w.spawns_remote).collect();
    assert_eq!(per_core, vec![4; CORES]);
    let distinct: HashSet<ThreadId> = threads.lock().unwrap().iter().copied().collect();
    assert_eq!(distinct.len(), CORES, "each core is its own thread");
    assert!(rt.shutdown_timeout(Duration::from_secs(10)));
}

/// A task on core 2 spawns 100 tasks (the free `spawn`) and 100 more
/// through the thread-per-core handle: all 200 run on core 2's thread,
/// counted as local spawns there and nowhere else.
#[test]
fn spawns_from_a_task_stay_on_its_core() {
    let rt = build(SchedulerKind::ThreadPerCore, CORES);
    let handle = rt.handle();
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let latch = Latch::new(200);
    let (r, l) = (ran_on.clone(), latch.clone());
    let parent = rt.handle().spawn_on(2, async move {
        let me = std::thread::current().id();
        for i in 0..200 {
            let (r, l) = (r.clone(), l.clone());
            let child = async move {
                r.lock().unwrap().push(std::thread::current().id());
                l.count_down();
            };
            drop(if i % 2 == 0 { spawn(child) } else { handle.spawn(child) });
        }
        me
    });
    latch.wait(HANG_LIMIT, "local spawns");
    let parent_thread = rt.block_on(parent).unwrap();
    assert!(ran_on.lock().unwrap().iter().all(|&t| t == parent_thread));
    let local: Vec<u64> = rt.metrics().workers.iter().map(|w| w.spawns_local).collect();
    assert_eq!(local, vec![0, 0, 200, 0]);
    assert!(rt.shutdown_timeout(Duration::from_secs(10)));
}

/// One listener per core on one port (`bind_reuse_port`, each bound by a
/// task on its core), 64 client connections: every connection is accepted
/// exactly once, on the thread of the core whose listener took it, and the
/// kernel spreads them (all 64 on one of 4 listeners has probability
/// 4 x 4^-64 under its hash).
#[test]
fn reuse_port_listeners_spread_connections_over_the_cores() {
    const CLIENTS: usize = 64;
    let rt = build(SchedulerKind::ThreadPerCore, CORES);
    let h = rt.handle();
    let accepted = Arc::new(Mutex::new(vec![0usize; CORES]));
    let latch = Latch::new(CLIENTS);
    let mut addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    for core in 0..CORES {
        let (want, acc, l) = (addr, accepted.clone(), latch.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        drop(h.spawn_on(core, async move {
            let listener = TcpListener::bind_reuse_port(want).await.expect("bind with SO_REUSEPORT");
            tx.send(listener.local_addr().unwrap()).unwrap();
            let thread = std::thread::current().id();
            loop {
                let Ok((s, _)) = listener.accept().await else { return };
                assert_eq!(std::thread::current().id(), thread, "accepted off its core");
                acc.lock().unwrap()[core] += 1;
                let mut b = [0u8; 1];
                s.read(&mut b).await.unwrap();
                s.write_all(&b).await.unwrap();
                l.count_down();
            }
        }));
        addr = rx.recv_timeout(HANG_LIMIT).expect("core bound its listener");
    }
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            std::thread::spawn(move || {
                let mut s = std::net::TcpStream::connect(addr).unwrap();
                s.write_all(&[i as u8]).unwrap();
                let mut b = [0u8; 1];
                s.read_exact(&mut b).unwrap();
                assert_eq!(b[0], i as u8);
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    latch.wait(HANG_LIMIT, "accepts");
    let acc = accepted.lock().unwrap().clone();
    assert_eq!(acc.iter().sum::<usize>(), CLIENTS, "{acc:?}");
    assert!(acc.iter().filter(|&&n| n > 0).count() >= 2, "the kernel did not spread: {acc:?}");
    assert!(rt.shutdown_timeout(Duration::from_secs(10)));
}
