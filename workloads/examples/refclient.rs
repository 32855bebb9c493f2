//! The client-bias reference client (issue 26): one thread, one keep-alive
//! HTTP/1.1 connection, plain epoll, a uniform rate. Prints its latency
//! from each intended send time; `scripts/client-bias.sh` compares it with
//! `wsbench load` against the same server.
//!
//! Usage: `refclient HOST:PORT RATE_PER_S SECONDS`

use std::net::ToSocketAddrs;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [target, rate, secs] = args.as_slice() else {
        eprintln!("usage: refclient HOST:PORT RATE_PER_S SECONDS");
        return ExitCode::from(2);
    };
    let Some(addr) = target.to_socket_addrs().ok().and_then(|mut a| a.next()) else {
        eprintln!("bad target `{target}`; allowed: HOST:PORT");
        return ExitCode::from(2);
    };
    let (Ok(rate), Ok(secs)) = (rate.parse::<f64>(), secs.parse::<f64>()) else {
        eprintln!("bad rate `{rate}` or seconds `{secs}`; allowed: numbers above 0");
        return ExitCode::from(2);
    };
    if !(secs.is_finite() && secs > 0.0) {
        eprintln!("bad seconds `{secs}`; allowed: a number above 0");
        return ExitCode::from(2);
    }
    match wsbench_workloads::client::latency_floor(addr, rate, Duration::from_secs_f64(secs)) {
        Ok(f) => {
            let us = |ns: u64| ns as f64 / 1e3;
            println!(
                "samples={} p50_us={:.1} p99_us={:.1} max_us={:.1} send_lag_p50_us={:.1}",
                f.samples,
                us(f.p50_ns),
                us(f.p99_ns),
                us(f.max_ns),
                us(f.send_lag_p50_ns)
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("refclient: {e}");
            ExitCode::from(1)
        }
    }
}
