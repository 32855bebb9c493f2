//! TCP through the public API, for every scheduling policy: current-thread
//! at 1 worker, the others at 1, 2 and 8 workers.

use std::io::{ErrorKind, Read};
use std::net::{Shutdown, SocketAddr};
use std::process::Command;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use wsbench_schedulers::net::{TcpListener, TcpStream};
use wsbench_schedulers::time::sleep;
use wsbench_schedulers::{Builder, Runtime, SchedulerKind};

/// Every (policy, workers) pair under test.
fn configs() -> Vec<(SchedulerKind, usize)> {
    let mut out = Vec::new();
    for kind in SchedulerKind::ALL {
        let workers: &[usize] = if kind == SchedulerKind::CurrentThread { &[1] } else { &[1, 2, 8] };
        out.extend(workers.iter().map(|&w| (kind, w)));
    }
    out
}

fn runtime(kind: SchedulerKind, workers: usize) -> Runtime {
    Builder::new(kind).workers(workers).build().unwrap_or_else(|e| panic!("{kind} x{workers}: {e}"))
}

const LOCALHOST: &str = "127.0.0.1:0";
const CONNECTIONS: usize = 100;
const MESSAGES: usize = 1_000;
/// Most messages are small; one in `LARGE_EVERY` is large enough to need
/// several reads and writes.
const SMALL_MAX: usize = 512;
const LARGE_MAX: usize = 16 * 1024;
const LARGE_EVERY: u32 = 100;
const ECHO_BUF: usize = 4096;

/// The byte at `index` of message `msg` on connection `conn`.
fn pattern(conn: usize, msg: usize, index: usize) -> u8 {
    (conn.wrapping_mul(31) ^ msg.wrapping_mul(7) ^ index.wrapping_mul(13)) as u8
}

async fn echo(stream: TcpStream) {
    let mut buf = vec![0u8; ECHO_BUF];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) => return,
            Ok(n) => stream.write_all(&buf[..n]).await.expect("echo write"),
            Err(e) => panic!("echo read: {e}"),
        }
    }
}

/// Sends `MESSAGES` messages of varying sizes and checks every echoed byte.
async fn client(addr: SocketAddr, conn: usize) -> usize {
    let stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).unwrap();
    let mut rng = StdRng::seed_from_u64(conn as u64);
    let mut back = vec![0u8; LARGE_MAX];
    let mut total = 0;
    for msg in 0..MESSAGES {
        let len = if rng.random_ratio(1, LARGE_EVERY) {
            rng.random_range(SMALL_MAX..=LARGE_MAX)
        } else {
            rng.random_range(1..=SMALL_MAX)
        };
        let out: Vec<u8> = (0..len).map(|i| pattern(conn, msg, i)).collect();
        stream.write_all(&out).await.expect("client write");
        stream.read_exact(&mut back[..len]).await.expect("client read");
        if let Some(i) = (0..len).find(|&i| back[i] != out[i]) {
            panic!("connection {conn} message {msg}: byte {i} is {} not {}", back[i], out[i]);
        }
        total += len;
    }
    stream.shutdown(Shutdown::Write).unwrap();
    let mut end = [0u8; 1];
    assert_eq!(stream.read(&mut end).await.unwrap(), 0, "echo server sent extra bytes");
    total
}

#[test]
fn loopback_echo_every_byte_checked() {
    for (kind, workers) in configs() {
        let label = format!("{kind} x{workers}");
        let rt = runtime(kind, workers);
        let bytes = rt.block_on(async {
            let listener = TcpListener::bind(LOCALHOST).await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = wsbench_schedulers::spawn(async move {
                let mut echoes = Vec::new();
                for _ in 0..CONNECTIONS {
                    let (stream, peer) = listener.accept().await.expect("accept");
                    assert_eq!(stream.peer_addr().unwrap(), peer);
                    echoes.push(wsbench_schedulers::spawn(echo(stream)));
                }
                for e in echoes {
                    e.await.expect("echo task");
                }
            });
            let clients: Vec<_> = (0..CONNECTIONS).map(|c| wsbench_schedulers::spawn(client(addr, c))).collect();
            let mut bytes = 0;
            for c in clients {
                bytes += c.await.expect("client task");
            }
            server.await.expect("server task");
            bytes
        });
        assert!(bytes >= CONNECTIONS * MESSAGES, "{label}: {bytes} bytes");
        assert!(rt.metrics().driver.io_events > 0, "{label}: no I/O events counted");
    }
}

#[test]
fn bad_input_is_an_io_error_and_the_runtime_goes_on() {
    for (kind, workers) in configs() {
        let label = format!("{kind} x{workers}");
        let rt = runtime(kind, workers);
        rt.block_on(async {
            let listener = TcpListener::bind(LOCALHOST).await.unwrap();
            let addr = listener.local_addr().unwrap();
            let in_use = TcpListener::bind(addr).await.unwrap_err();
            assert_eq!(in_use.kind(), ErrorKind::AddrInUse, "{label}: {in_use}");

            let closed = std::net::TcpListener::bind(LOCALHOST).unwrap();
            let closed_addr = closed.local_addr().unwrap();
            drop(closed);
            let refused = TcpStream::connect(closed_addr).await.unwrap_err();
            assert_eq!(refused.kind(), ErrorKind::ConnectionRefused, "{label}: {refused}");

            // Peer reset: the server closes with unread data, so the kernel
            // sends RST rather than FIN.
            let client = TcpStream::connect(addr).await.unwrap();
            let (server, _) = listener.accept().await.unwrap();
            client.write_all(b"ab").await.unwrap();
            let mut one = [0u8; 1];
            server.read_exact(&mut one).await.unwrap();
            drop(server);
            let mut buf = [0u8; 16];
            let reset = client.read(&mut buf).await.unwrap_err();
            assert_eq!(reset.kind(), ErrorKind::ConnectionReset, "{label}: {reset}");

            // Orderly close: reads return Ok(0), repeatedly.
            let client = TcpStream::connect(addr).await.unwrap();
            let (server, _) = listener.accept().await.unwrap();
            server.write_all(b"last").await.unwrap();
            server.shutdown(Shutdown::Write).unwrap();
            let mut got = [0u8; 4];
            client.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"last");
            assert_eq!(client.read(&mut buf).await.unwrap(), 0, "{label}");
            assert_eq!(client.read(&mut buf).await.unwrap(), 0, "{label}");
            let eof = client.read_exact(&mut buf).await.unwrap_err();
            assert_eq!(eof.kind(), ErrorKind::UnexpectedEof, "{label}");
            assert_eq!(client.read(&mut []).await.unwrap(), 0);

            // And the runtime still serves new connections.
            let again = TcpStream::connect(addr).await.unwrap();
            let (accepted, _) = listener.accept().await.unwrap();
            again.write_all(b"ok").await.unwrap();
            accepted.read_exact(&mut got[..2]).await.unwrap();
            assert_eq!(&got[..2], b"ok");
        });
    }
}

#[test]
fn shutdown_with_tasks_blocked_on_sockets_and_timers_does_not_hang() {
    for (kind, workers) in configs() {
        let label = format!("{kind} x{workers}");
        let rt = runtime(kind, workers);
        let (addr, mut peer) = rt.block_on(async {
            let listener = TcpListener::bind(LOCALHOST).await.unwrap();
            let addr = listener.local_addr().unwrap();
            let peer = std::net::TcpStream::connect(addr).unwrap();
            let (stream, _) = listener.accept().await.unwrap();
            wsbench_schedulers::spawn(async move {
                let mut buf = [0u8; 8];
                let _ = stream.read(&mut buf).await; // never gets data
            });
            wsbench_schedulers::spawn(async move {
                let _ = listener.accept().await; // nobody else connects
            });
            wsbench_schedulers::spawn(sleep(Duration::from_secs(3600)));
            (addr, peer)
        });
        rt.shutdown_timeout(Duration::from_secs(10));
        // The tasks were dropped, so their sockets are closed.
        peer.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(peer.read(&mut buf).unwrap(), 0, "{label}: accepted socket still open");
        let refused = std::net::TcpStream::connect(addr).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::ConnectionRefused, "{label}: listener still open");
    }
}

/// Set in the child process of [`accept_out_of_descriptors_is_an_error`].
const EMFILE_CHILD: &str = "WSBENCH_NET_EMFILE_CHILD";
/// Descriptor limit the child runs under (`ulimit -S -n`), or the hard
/// limit where that is lower (the child exhausts whatever it has).
const CHILD_FD_LIMIT: u64 = 256;
/// Linux's "too many open files".
const EMFILE: i32 = 24;

/// Runs itself in a child process with a low descriptor limit (so the rest
/// of this test binary keeps its descriptors) and checks it passed.
#[test]
fn accept_out_of_descriptors_is_an_error() {
    if std::env::var_os(EMFILE_CHILD).is_some() {
        emfile_child();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let limit = CHILD_FD_LIMIT.min(nofile_hard());
    let script =
        format!("ulimit -S -n {limit} && exec \"$0\" accept_out_of_descriptors_is_an_error --exact --test-threads=1");
    let out = Command::new("sh").arg("-c").arg(script).arg(exe).env(EMFILE_CHILD, "1").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// This process's hard limit on open files (`/proc/self/limits`; a soft
/// limit can be lowered to anything at or below it).
fn nofile_hard() -> u64 {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("/proc/self/limits");
    let line = limits.lines().find(|l| l.starts_with("Max open files")).expect("a Max open files line");
    // "Max open files   SOFT   HARD   files"; "unlimited" is above anything.
    line.split_whitespace().nth(4).map_or(u64::MAX, |h| h.parse().unwrap_or(u64::MAX))
}

fn emfile_child() {
    for (kind, workers) in configs() {
        let label = format!("{kind} x{workers}");
        let rt = runtime(kind, workers);
        rt.block_on(async {
            let listener = TcpListener::bind(LOCALHOST).await.unwrap();
            let addr = listener.local_addr().unwrap();
            let mut hog = Vec::new();
            let exhausted = loop {
                match std::fs::File::open("/dev/null") {
                    Ok(f) => hog.push(f),
                    Err(e) => break e,
                }
            };
            assert_eq!(exhausted.raw_os_error(), Some(EMFILE), "{label}: {exhausted}");
            hog.pop(); // one descriptor for the client
            let client = TcpStream::connect(addr).await.unwrap();
            for _ in 0..2 {
                let err = listener.accept().await.unwrap_err();
                assert_eq!(err.raw_os_error(), Some(EMFILE), "{label}: {err}");
            }
            drop(hog);
            let (server, _) = listener.accept().await.expect("the queued connection survives");
            client.write_all(b"fd").await.unwrap();
            let mut got = [0u8; 2];
            server.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"fd", "{label}");
        });
    }
}
