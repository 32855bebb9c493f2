//! The instruments' own figures on this machine, for `wsbench doctor
//! --calibrate` (issue 25): how stable the spin calibration is, whether
//! the CPU meter agrees with a thread's own CPU clock, what a park/unpark
//! round trip costs beside a `sched_yield`, how late a 1 ms sleep wakes,
//! and the loopback round trip under the load generator.
//!
//! Every function measures and returns raw figures; the verdicts and their
//! tolerances are the harness's. Nothing here asserts how a machine
//! behaves, so nothing here is a test of the machine.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cpu_time::{thread_cpu_of, CpuMeter};
use crate::spin::{measure_iters_per_ns, spin_ns, CALIBRATION_TRIALS};

/// The spin rate (iterations per ns) of a full calibration, taken once per
/// `every` for `span`, sleeping in between as an idle worker would.
pub fn spin_rates(span: Duration, every: Duration) -> Vec<f64> {
    let start = Instant::now();
    let mut rates = Vec::new();
    loop {
        let t = Instant::now();
        rates.push(measure_iters_per_ns(CALIBRATION_TRIALS));
        if start.elapsed() + every > span {
            return rates;
        }
        std::thread::sleep(every.saturating_sub(t.elapsed()));
    }
}

/// [`meter_against_thread_clock`]'s figures, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeterCheck {
    /// The nominal spin asked of [`spin_ns`].
    pub nominal_ns: u64,
    /// The spinning thread's own CPU clock around the spin.
    pub thread_clock_ns: u64,
    /// What the CPU meter charged to the runtime's threads over the window.
    pub meter_ns: u64,
}

/// Spins `nominal` of calibrated work on a fresh thread (a "runtime"
/// thread to the meter) and reads that thread's own CPU clock around the
/// spin and the meter over the window. `None` when `/proc` is unreadable.
/// The meter also counts the thread's start and exit (microseconds).
pub fn meter_against_thread_clock(nominal: Duration) -> Option<MeterCheck> {
    let nominal_ns = u64::try_from(nominal.as_nanos()).unwrap_or(u64::MAX);
    let meter = CpuMeter::new();
    meter.start();
    let spinner = std::thread::spawn(move || thread_cpu_of(|| spin_ns(nominal_ns)));
    let thread_clock = spinner.join().ok()??;
    let usage = meter.finish()?;
    Some(MeterCheck {
        nominal_ns,
        thread_clock_ns: u64::try_from(thread_clock.as_nanos()).unwrap_or(u64::MAX),
        meter_ns: usage.cpu_ns,
    })
}

/// [`park_vs_yield`]'s figures, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParkYield {
    /// Wall time of one park/unpark round trip between two threads
    /// (A unparks B, B unparks A): the mean over the round trips.
    pub round_trip_ns: f64,
    /// CPU time of the process per round trip (both threads); `None` when
    /// the process clock is unreadable.
    pub round_trip_cpu_ns: Option<f64>,
    /// Wall time of one `sched_yield` (`std::thread::yield_now`).
    pub yield_ns: f64,
}

/// Ping-pongs a turn between two threads `round_trips` times with
/// `thread::park`/`unpark` (what idle workers do), then times as many
/// `sched_yield`s on one thread (what a spinning, yielding worker does).
pub fn park_vs_yield(round_trips: u32) -> ParkYield {
    let round_trips = round_trips.max(1);
    // Whose turn it is: even = the main thread's, odd = the partner's.
    let turn = Arc::new(AtomicU32::new(0));
    let main = std::thread::current();
    let partner_turn = Arc::clone(&turn);
    let partner = std::thread::spawn(move || {
        for i in 0..round_trips {
            let mine = 2 * i + 1;
            // Acquire: pairs with the main thread's Release store of `mine`.
            while partner_turn.load(Ordering::Acquire) != mine {
                std::thread::park();
            }
            // Release: pairs with the main thread's Acquire load of `mine + 1`.
            partner_turn.store(mine + 1, Ordering::Release);
            main.unpark();
        }
    });
    let partner_thread = partner.thread().clone();
    let cpu0 = process_cpu_ns();
    let t = Instant::now();
    for i in 0..round_trips {
        // Release: pairs with the partner's Acquire load of `2i + 1`.
        turn.store(2 * i + 1, Ordering::Release);
        partner_thread.unpark();
        // Acquire: pairs with the partner's Release store of `2i + 2`.
        while turn.load(Ordering::Acquire) != 2 * i + 2 {
            std::thread::park();
        }
    }
    let wall = t.elapsed();
    let cpu1 = process_cpu_ns();
    let _ = partner.join();
    let t = Instant::now();
    for _ in 0..round_trips {
        std::thread::yield_now();
    }
    let yield_wall = t.elapsed();
    ParkYield {
        round_trip_ns: wall.as_nanos() as f64 / f64::from(round_trips),
        round_trip_cpu_ns: cpu0.zip(cpu1).map(|(a, b)| b.saturating_sub(a) as f64 / f64::from(round_trips)),
        yield_ns: yield_wall.as_nanos() as f64 / f64::from(round_trips),
    }
}

/// [`timers`]'s figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimerFigures {
    /// `clock_getres(CLOCK_MONOTONIC)` in ns; `None` when unreadable.
    pub resolution_ns: Option<u64>,
    /// How late each 1 ms `thread::sleep` woke, in ns, sorted.
    pub late_ns: Vec<u64>,
}

/// The monotonic clock's resolution and the lateness of `sleeps` sleeps
/// of 1 ms.
pub fn timers(sleeps: u32) -> TimerFigures {
    const ASKED: Duration = Duration::from_millis(1);
    let resolution_ns = nix::time::clock_getres(nix::time::ClockId::CLOCK_MONOTONIC)
        .ok()
        .and_then(|r| Some(u64::try_from(r.tv_sec()).ok()? * 1_000_000_000 + u64::try_from(r.tv_nsec()).ok()?));
    let mut late_ns: Vec<u64> = (0..sleeps.max(1))
        .map(|_| {
            let t = Instant::now();
            std::thread::sleep(ASKED);
            u64::try_from(t.elapsed().saturating_sub(ASKED).as_nanos()).unwrap_or(u64::MAX)
        })
        .collect();
    late_ns.sort_unstable();
    TimerFigures { resolution_ns, late_ns }
}

/// Bytes each way of one [`loopback_echo`] round trip.
pub const ECHO_BYTES: usize = 64;

/// Round trips of [`ECHO_BYTES`] over loopback TCP to an echo thread, with
/// blocking sockets and `TCP_NODELAY`: the floor that no load generator
/// on this machine can go below. Each round trip's wall time in ns, sorted.
pub fn loopback_echo(round_trips: u32) -> std::io::Result<Vec<u64>> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    let addr = listener.local_addr()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut s, _) = listener.accept()?;
        s.set_nodelay(true)?;
        let mut buf = [0u8; ECHO_BYTES];
        loop {
            match s.read_exact(&mut buf) {
                Ok(()) => s.write_all(&buf)?,
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    });
    let mut client = TcpStream::connect(addr)?;
    client.set_nodelay(true)?;
    let msg = [0x5Au8; ECHO_BYTES];
    let mut back = [0u8; ECHO_BYTES];
    let mut rtts = Vec::with_capacity(round_trips as usize);
    for _ in 0..round_trips.max(1) {
        let t = Instant::now();
        client.write_all(&msg)?;
        client.read_exact(&mut back)?;
        rtts.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
        if back != msg {
            return Err(std::io::Error::other("the echo thread answered other bytes than it was sent"));
        }
    }
    drop(client);
    echo.join().map_err(|_| std::io::Error::other("the echo thread panicked"))??;
    rtts.sort_unstable();
    Ok(rtts)
}

/// The `q` quantile (0..=1) of sorted values; `None` when empty.
pub fn quantile(sorted: &[u64], q: f64) -> Option<u64> {
    let last = sorted.len().checked_sub(1)?;
    sorted.get(((last as f64) * q.clamp(0.0, 1.0)).round() as usize).copied()
}

fn process_cpu_ns() -> Option<u64> {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_PROCESS_CPUTIME_ID).ok()?;
    Some(u64::try_from(t.tv_sec()).ok()? * 1_000_000_000 + u64::try_from(t.tv_nsec()).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Only shapes and exact counts: how fast or late this machine is, is a
    // figure for `doctor --calibrate`, never a test.

    #[test]
    fn every_instrument_returns_one_figure_per_trial() {
        let rates = spin_rates(Duration::ZERO, Duration::from_millis(1));
        assert_eq!(rates.len(), 1);
        assert!(rates[0].is_finite() && rates[0] > 0.0);
        let p = park_vs_yield(50);
        assert!(p.round_trip_ns > 0.0 && p.yield_ns > 0.0, "{p:?}");
        let t = timers(5);
        assert_eq!(t.late_ns.len(), 5);
        assert!(t.late_ns.windows(2).all(|w| w[0] <= w[1]));
        let rtts = loopback_echo(20).expect("loopback TCP");
        assert_eq!(rtts.len(), 20);
        assert!(rtts.windows(2).all(|w| w[0] <= w[1]) && rtts[0] > 0);
    }

    #[test]
    fn quantiles_of_sorted_values() {
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[7], 0.99), Some(7));
        let v: Vec<u64> = (1..=101).collect();
        assert_eq!(quantile(&v, 0.5), Some(51));
        assert_eq!(quantile(&v, 0.0), Some(1));
        assert_eq!(quantile(&v, 1.0), Some(101));
    }
}
