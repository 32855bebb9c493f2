//! How every server listener is bound, on every runtime alike, and what
//! the kernel says about its pending-connection queue.
//!
//! The queue of connections the kernel completed and the server has not
//! yet accepted holds `backlog` of them. When it is full, Linux drops the
//! handshake's last ACK (`TcpExtListenOverflows`); the client's side is
//! already established, and its segments are dropped too until the queue
//! has room. Meanwhile the half-open connections fill the SYN queue, and
//! new ones are answered with SYN cookies: such a connection is reset
//! outright when its client's *second* data segment arrives before the
//! first was accepted, because the kernel rebuilds the cookie from the
//! segment's sequence number (`TcpExtSyncookiesFailed`, then an RST). An
//! HTTP/2 client writes its preface and its SETTINGS separately, so a
//! connect storm against a 128-deep queue (the backlog std, mio, tokio and
//! async-io use) reset 1-6% of 2,000-10,000 HTTP/2 connections on a
//! 2-vCPU machine; HTTP/1.1's one-segment hello only waited.
//!
//! So every listener asks for [`LISTEN_BACKLOG`]; the kernel caps it at
//! `net.core.somaxconn`, which [`somaxconn`] reads, and `serve`
//! reports it with the machine's listen-queue overflows over its life.

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Socket, Type};

/// The pending-connection queue every server listener asks for. Linux
/// caps it at `net.core.somaxconn` (4096 by default since 5.4); one load
/// process keeps at most 64 connects per client thread under way, 1,024
/// at 16 threads.
pub(crate) const LISTEN_BACKLOG: u32 = 65_535;

/// Where the kernel's cap on a listener's backlog is.
const SOMAXCONN: &str = "/proc/sys/net/core/somaxconn";
/// The kernel's TCP counters (`TcpExt:` names line, then values line).
const NETSTAT: &str = "/proc/net/netstat";

/// A bound, listening, non-blocking std listener on `addr` with
/// `SO_REUSEADDR` (as std and mio set it), [`LISTEN_BACKLOG`], and with
/// `reuse_port` also `SO_REUSEPORT` (one of a group sharing a port).
pub(crate) fn bind_listener(addr: SocketAddr, reuse_port: bool) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    socket.bind(&addr.into())?;
    // i32::try_from cannot fail for 65 535; the kernel caps it further.
    socket.listen(i32::try_from(LISTEN_BACKLOG).unwrap_or(i32::MAX))?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// `net.core.somaxconn`, when this machine has one to read.
pub(crate) fn somaxconn() -> Option<u32> {
    std::fs::read_to_string(SOMAXCONN).ok()?.trim().parse().ok()
}

/// The backlog a listener bound by [`bind_listener`] gets under the cap
/// `somaxconn`: the asked one, capped.
fn backlog_under(somaxconn: u32) -> u32 {
    somaxconn.min(LISTEN_BACKLOG)
}

/// The backlog a listener bound by [`bind_listener`] gets here (unknown
/// without `net.core.somaxconn`).
#[cfg(test)]
pub(crate) fn effective_backlog() -> Option<u32> {
    somaxconn().map(backlog_under)
}

/// The machine's `TcpExtListenOverflows` (every listener, every process),
/// when `/proc/net/netstat` has it.
pub(crate) fn listen_overflows() -> Option<u64> {
    tcp_ext(&std::fs::read_to_string(NETSTAT).ok()?, "ListenOverflows")
}

/// The `TcpExt:` counter `name` of a `/proc/net/netstat` text: the line of
/// names, then the line of values in the same order.
fn tcp_ext(netstat: &str, name: &str) -> Option<u64> {
    let mut lines = netstat.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let at = names.split_whitespace().position(|n| n == name)?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// What `serve` says about its listener(s): the backlog and the machine's
/// listen-queue overflows since `overflows_at_start`; as the extras
/// `listen_backlog` and `listen_overflows` (left out when unknown).
pub(crate) fn listen_report(overflows_at_start: Option<u64>) -> (String, Vec<(String, f64)>) {
    let mut extras = Vec::new();
    let backlog = match somaxconn() {
        Some(cap) => {
            let b = backlog_under(cap);
            extras.push(("listen_backlog".to_string(), f64::from(b)));
            format!("listen backlog {b} (asked {LISTEN_BACKLOG}; net.core.somaxconn = {cap})")
        }
        None => {
            format!("listen backlog asked {LISTEN_BACKLOG} (net.core.somaxconn unreadable: the kernel's cap unknown)")
        }
    };
    let overflows = match (overflows_at_start, listen_overflows()) {
        (Some(a), Some(b)) => {
            let n = b.saturating_sub(a);
            extras.push(("listen_overflows".to_string(), n as f64));
            let hint = if n > 0 {
                ": connections waited for the queue, and SYN-cookie ones may have been reset; raise net.core.somaxconn"
            } else {
                ""
            };
            format!("{n} listen-queue overflows on this machine while serving (TcpExtListenOverflows, every listener){hint}")
        }
        _ => "listen-queue overflows unknown (no TcpExtListenOverflows in /proc/net/netstat)".to_string(),
    };
    (format!("{backlog}; {overflows}"), extras)
}

/// The backlog of the listener on TCP `port`, as `ss -ltn` reports it (a
/// listening socket's Send-Q column is its backlog); `None` without `ss`.
#[cfg(test)]
pub(crate) fn ss_backlog(port: u16) -> Option<Vec<String>> {
    let out = std::process::Command::new("ss").args(["-ltnH", &format!("sport = :{port}")]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(text.lines().filter_map(|l| l.split_whitespace().nth(2)).map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_ext_reads_the_value_under_its_name() {
        let text = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 64 1446 1447\n\
                    IpExt: InNoRoutes\nIpExt: 0\n";
        assert_eq!(tcp_ext(text, "ListenOverflows"), Some(1446));
        assert_eq!(tcp_ext(text, "ListenDrops"), Some(1447));
        assert_eq!(tcp_ext(text, "InNoRoutes"), None, "not a TcpExt counter");
        assert_eq!(tcp_ext("TcpExt: ListenOverflows\n", "ListenOverflows"), None, "no values line");
    }
}
