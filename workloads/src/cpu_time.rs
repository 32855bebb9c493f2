//! CPU time of the runtime under test over a run's measured window.
//!
//! The runtime under test is every thread of the process except the ones
//! that are not its own: threads that existed before the run built its
//! runtime (the harness, the thread that called [`crate::run`], unless that
//! thread drives the runtime from `block_on`:
//! [`CpuMeter::include_calling_thread`]) and the load generator's threads,
//! which register themselves ([`CpuMeter::guest`]).
//! So reference runtimes need no hooks: tokio's and smol's workers, reactor
//! and blocking threads are all counted, as ours are.
//!
//! 1. [`CpuMeter::new`], before the runtime is built: the baseline threads;
//! 2. [`CpuMeter::start`] when measuring begins: the process CPU clock
//!    (`CLOCK_PROCESS_CPUTIME_ID`, which also keeps the time of threads that
//!    have exited), the CPU time of every excluded thread
//!    (`/proc/self/task/<tid>/schedstat`, nanoseconds) and the context
//!    switches of every thread (`/proc/self/task/<tid>/status`);
//! 3. a guest thread records its own CPU time when it registers after the
//!    start and when it leaves, so one that exits before the window ends is
//!    still subtracted exactly;
//! 4. [`CpuMeter::finish`]: runtime CPU = Δ process CPU − Σ Δ excluded
//!    threads; context switches = Σ Δ over the runtime's threads alive at
//!    the end (a runtime thread that exits inside the window takes its
//!    switches with it; its CPU time is kept).
//!
//! Anything unreadable makes the result `None`, never a guess.

use std::collections::HashMap;
use std::fs;
use std::sync::Mutex;
use std::time::Instant;

use crate::api::CpuUsage;

/// A thread id.
type Tid = u32;

/// The process CPU clock (`CLOCK_PROCESS_CPUTIME_ID`) in nanoseconds.
/// Through libc (nix), not rustix: rustix reads the vDSO itself, which
/// valgrind does not map, so the whole binary crashed under callgrind and
/// memcheck (rustix issue 1559).
fn process_cpu_ns() -> Option<u64> {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_PROCESS_CPUTIME_ID).ok()?;
    Some(u64::try_from(t.tv_sec()).ok()? * 1_000_000_000 + u64::try_from(t.tv_nsec()).ok()?)
}

/// The calling thread's id, from `/proc/thread-self` (`<pid>/task/<tid>`).
fn current_tid() -> Option<Tid> {
    let link = fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// Parses the first field of a `schedstat` file: time on a CPU in ns.
pub(crate) fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// Parses the voluntary and involuntary context switches of a `status` file.
pub(crate) fn parse_switches(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        text.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim_start_matches(':').trim().parse().ok())
    };
    Some((field("voluntary_ctxt_switches")?, field("nonvoluntary_ctxt_switches")?))
}

fn thread_cpu_ns(tid: Tid) -> Option<u64> {
    parse_schedstat(&fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?)
}

fn thread_switches(tid: Tid) -> Option<(u64, u64)> {
    parse_switches(&fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?)
}

fn live_threads() -> Option<Vec<Tid>> {
    let entries = fs::read_dir("/proc/self/task").ok()?;
    Some(entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
}

/// A load-generator thread.
#[derive(Debug, Clone, Copy)]
struct Guest {
    tid: Tid,
    /// CPU time at the window's start (or when it registered, if later).
    at_start: Option<u64>,
    /// CPU time when it left.
    at_exit: Option<u64>,
}

/// What [`CpuMeter::start`] saw.
#[derive(Debug)]
struct Start {
    at: Instant,
    process_ns: u64,
    /// CPU time of every baseline thread.
    baseline_ns: HashMap<Tid, u64>,
    /// Context switches of every thread.
    switches: HashMap<Tid, (u64, u64)>,
    /// The cgroup's throttling counters ([`crate::throttle`]).
    throttle: Option<crate::throttle::Throttle>,
}

/// Measures one run's window; see the module doc.
#[derive(Debug)]
pub(crate) struct CpuMeter {
    /// Threads alive before the runtime was built; `None` if unreadable.
    baseline: Option<Vec<Tid>>,
    guests: Mutex<Vec<Guest>>,
    start: Mutex<Option<Start>>,
}

/// Registration of a guest thread; records its CPU time when dropped.
pub(crate) struct GuestGuard<'a> {
    meter: &'a CpuMeter,
    tid: Option<Tid>,
}

impl Drop for GuestGuard<'_> {
    fn drop(&mut self) {
        let Some(tid) = self.tid else { return };
        let now = thread_cpu_ns(tid);
        if let Some(g) = lock(&self.meter.guests).iter_mut().find(|g| g.tid == tid) {
            g.at_exit = now;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The data stays consistent through a panic (plain values replaced whole).
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl CpuMeter {
    /// Call before building the runtime.
    pub(crate) fn new() -> CpuMeter {
        CpuMeter { baseline: live_threads(), guests: Mutex::new(Vec::new()), start: Mutex::new(None) }
    }

    /// Counts the calling thread as the runtime's: it drives the runtime
    /// (`current-thread` and `tokio-current` run tokio's benchmarks inside
    /// `block_on` on it). Call before [`CpuMeter::start`].
    pub(crate) fn include_calling_thread(&mut self) {
        let me = current_tid();
        match (&mut self.baseline, me) {
            (Some(baseline), Some(me)) => baseline.retain(|&t| t != me),
            // Unknown which thread to count: no number rather than a wrong one.
            _ => self.baseline = None,
        }
    }

    /// Registers the calling thread as a load-generator thread for as long
    /// as the guard lives.
    pub(crate) fn guest(&self) -> GuestGuard<'_> {
        let tid = current_tid();
        if let Some(tid) = tid {
            let started = lock(&self.start).is_some();
            let at_start = if started { thread_cpu_ns(tid) } else { None };
            lock(&self.guests).push(Guest { tid, at_start, at_exit: None });
        }
        GuestGuard { meter: self, tid }
    }

    /// Marks the start of the measured window.
    pub(crate) fn start(&self) {
        let Some(baseline) = &self.baseline else { return };
        let mut guests = lock(&self.guests);
        for g in guests.iter_mut() {
            g.at_start = thread_cpu_ns(g.tid);
        }
        let switches =
            live_threads().unwrap_or_default().into_iter().filter_map(|t| Some((t, thread_switches(t)?))).collect();
        let baseline_ns = baseline.iter().filter_map(|&t| Some((t, thread_cpu_ns(t)?))).collect();
        let throttle = crate::throttle::read();
        *lock(&self.start) = process_cpu_ns().map(|process_ns| Start {
            at: Instant::now(),
            process_ns,
            baseline_ns,
            switches,
            throttle,
        });
    }

    /// Ends the window: the runtime's CPU use over it, or `None` when
    /// [`CpuMeter::start`] was not called or `/proc` could not be read.
    pub(crate) fn finish(&self) -> Option<CpuUsage> {
        let process_ns = process_cpu_ns();
        let throttle_end = crate::throttle::read();
        let start = lock(&self.start).take()?;
        let process_ns = process_ns?;
        let window = start.at.elapsed();
        let baseline = self.baseline.as_ref()?;
        let mut excluded_ns = 0u64;
        for (&tid, &before) in &start.baseline_ns {
            // A baseline thread that exited inside the window leaves its
            // time in the process clock; it would be charged to the runtime.
            excluded_ns += thread_cpu_ns(tid)?.saturating_sub(before);
        }
        let guests = lock(&self.guests).clone();
        for g in &guests {
            let end = match g.at_exit {
                Some(v) => v,
                None => thread_cpu_ns(g.tid)?,
            };
            excluded_ns += end.saturating_sub(g.at_start?);
        }
        let (mut voluntary, mut involuntary) = (0u64, 0u64);
        for tid in live_threads()? {
            if baseline.contains(&tid) || guests.iter().any(|g| g.tid == tid) {
                continue;
            }
            let Some((v, i)) = thread_switches(tid) else { continue };
            let (v0, i0) = start.switches.get(&tid).copied().unwrap_or((0, 0));
            voluntary += v.saturating_sub(v0);
            involuntary += i.saturating_sub(i0);
        }
        Some(CpuUsage {
            cpu_ns: process_ns.saturating_sub(start.process_ns).saturating_sub(excluded_ns),
            window,
            ctx_switches_voluntary: voluntary,
            ctx_switches_involuntary: involuntary,
            throttle: crate::throttle::delta(start.throttle, throttle_end),
        })
    }
}

/// How long `f` keeps the calling thread on a CPU, by the thread's own
/// clock (`/proc/self/task/<tid>/schedstat`); `None` when unreadable.
pub(crate) fn thread_cpu_of(f: impl FnOnce()) -> Option<std::time::Duration> {
    let tid = current_tid()?;
    let before = thread_cpu_ns(tid)?;
    f();
    Some(std::time::Duration::from_nanos(thread_cpu_ns(tid)?.saturating_sub(before)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_parse() {
        assert_eq!(parse_schedstat("100222883 633302171 72\n"), Some(100_222_883));
        assert_eq!(parse_schedstat(""), None);
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(parse_switches(status), Some((12, 3)));
        assert_eq!(parse_switches("Name:\tx\n"), None);
    }

    /// Set in the copy of this test binary that runs the meter test alone.
    const ALONE_ENV: &str = "WSBENCH_CPU_METER_TEST_ALONE";

    /// The meter counts every thread born after it that is not a guest, so
    /// other tests running beside it on libtest's threads would be counted:
    /// the measuring test runs in a fresh copy of this binary, alone.
    #[test]
    fn a_spinning_runtime_thread_is_counted_and_baseline_and_guest_threads_are_not() {
        // libtest names a test by its path without the crate's name.
        let here = module_path!().split_once("::").map_or(module_path!(), |(_, rest)| rest);
        let name = format!("{here}::meter_alone");
        let exe = std::env::current_exe().expect("test binary");
        let out = std::process::Command::new(exe)
            .args([name.as_str(), "--exact", "--test-threads=1", "--nocapture"])
            .env(ALONE_ENV, "1")
            .output()
            .expect("rerun the test binary");
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && text.contains("1 passed"), "{text}");
    }

    #[test]
    fn meter_alone() {
        if std::env::var_os(ALONE_ENV).is_none() {
            return; // run only by the test above, in its own process
        }
        use std::time::Duration;
        const SPIN: Duration = Duration::from_millis(60);
        // Burns `d` of the calling thread's CPU time (not wall time: the
        // machine may be shared).
        let busy = |d: Duration| {
            let tid = current_tid().expect("tid");
            let start = thread_cpu_ns(tid).expect("schedstat");
            while thread_cpu_ns(tid).expect("schedstat") - start < d.as_nanos() as u64 {
                for _ in 0..1000 {
                    std::hint::spin_loop();
                }
            }
        };
        let meter = CpuMeter::new();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let (truth_tx, truth_rx) = std::sync::mpsc::channel::<Duration>();
        // A "runtime" thread, born after the baseline: it spins and sleeps
        // once inside the window (a voluntary switch), reports its own CPU
        // clock, and stays alive until the window is closed.
        let runtime = std::thread::spawn(move || {
            go_rx.recv().unwrap();
            let spent = thread_cpu_of(|| {
                busy(SPIN);
                std::thread::sleep(Duration::from_millis(1));
            })
            .expect("schedstat");
            truth_tx.send(spent).unwrap();
            go_rx.recv().unwrap();
        });
        meter.start();
        go_tx.send(()).unwrap();
        // This (baseline) thread and a guest thread spin too: excluded.
        busy(SPIN);
        std::thread::scope(|s| {
            s.spawn(|| {
                let _g = meter.guest();
                busy(SPIN);
            });
        });
        let truth = truth_rx.recv().unwrap();
        let usage = meter.finish().expect("proc is readable");
        let measured = Duration::from_nanos(usage.cpu_ns);
        // The runtime thread's own clock vs the meter: they differ only by
        // what the thread did outside `thread_cpu_of` (waking from a recv and
        // a send, microseconds) and the test process's other threads (none busy).
        let diff = measured.abs_diff(truth);
        assert!(diff < Duration::from_millis(5), "measured {measured:?}, the thread's own clock {truth:?}");
        assert!(truth >= SPIN, "the runtime thread spun: {truth:?}");
        assert!(usage.ctx_switches_voluntary >= 1, "it slept once: {usage:?}");
        go_tx.send(()).unwrap();
        runtime.join().unwrap();
    }
}
