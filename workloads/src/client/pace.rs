//! Pacing a client thread's arrivals inside its own event loop: no other
//! thread hands it the next arrival (a cross-thread wake-up costs more than
//! the server's own latency on loopback, issue 26).
//!
//! A [`Pacer`] owns a timerfd, registered in the thread's own epoll (mio)
//! or tokio reactor (h2). Before each arrival the loop asks it how long it
//! may block: the timer is armed (nanosecond resolution, unlike epoll's
//! millisecond timeout) for [`LEAD`] before the arrival, and the loop then
//! polls without blocking until the arrival is due, so the send does not
//! pay the wake-up. Spinning is capped at [`MAX_SPINS_PER_S`] arrivals per
//! second per thread: beyond that (high rates, where the loop is busy with
//! answers anyway) the timer is armed for the arrival itself, and the
//! thread never burns a core on waiting.

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

/// The timer fires this long before an arrival; the loop polls without
/// blocking for the rest (when the spin budget allows).
pub(crate) const LEAD: Duration = Duration::from_micros(50);
/// Arrivals per second per thread that may be waited for by spinning (at
/// most `LEAD` each: at most 10 % of a core).
pub(crate) const MAX_SPINS_PER_S: u32 = 2_000;
const BUDGET_PERIOD: Duration = Duration::from_secs(1);
/// A timer armed for less than this is not worth a wake-up: polled instead.
const MIN_ARM: Duration = Duration::from_micros(1);

/// One thread's arrival timer (see the module doc).
pub(crate) struct Pacer {
    timer: TimerFd,
    /// When the armed timer fires, if armed and not yet fired.
    armed: Option<Instant>,
    /// The arrival the loop is spinning for now.
    spinning_for: Option<Instant>,
    period_start: Instant,
    spins: u32,
}

impl Pacer {
    pub(crate) fn new() -> io::Result<Pacer> {
        let timer = TimerFd::new(ClockId::CLOCK_MONOTONIC, TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC)
            .map_err(io::Error::from)?;
        Ok(Pacer { timer, armed: None, spinning_for: None, period_start: Instant::now(), spins: 0 })
    }

    /// Whether one more arrival may be waited for by spinning in this period.
    fn may_spin(&mut self, now: Instant) -> bool {
        if now.saturating_duration_since(self.period_start) >= BUDGET_PERIOD {
            (self.period_start, self.spins) = (now, 0);
        }
        self.spins < MAX_SPINS_PER_S
    }

    /// How long the loop may block before the arrival `next` (none: `tick`),
    /// arming the timer as needed: zero = poll without blocking (due, or
    /// spinning for it); `tick` otherwise (the timer wakes the loop first
    /// when the arrival is nearer).
    pub(crate) fn timeout(&mut self, next: Option<Instant>, now: Instant, tick: Duration) -> io::Result<Duration> {
        let Some(t) = next else { return Ok(tick) };
        let left = t.saturating_duration_since(now);
        if left < MIN_ARM || self.spinning_for == Some(t) {
            return Ok(Duration::ZERO);
        }
        let spin = self.may_spin(now);
        if spin && left <= LEAD {
            self.spins += 1;
            self.spinning_for = Some(t);
            return Ok(Duration::ZERO);
        }
        let wake = if spin { t - LEAD } else { t };
        if self.armed != Some(wake) {
            let after = wake.saturating_duration_since(now).max(MIN_ARM);
            self.timer
                .set(Expiration::OneShot(TimeSpec::from(after)), TimerSetTimeFlags::empty())
                .map_err(io::Error::from)?;
            self.armed = Some(wake);
        }
        Ok(tick)
    }

    /// The timer's readiness event: clears it (a non-blocking read).
    pub(crate) fn fired(&mut self) {
        // Nothing to read (a spurious event) is EAGAIN: nothing to clear.
        let _ = self.timer.wait();
        self.armed = None;
    }
}

impl AsRawFd for Pacer {
    fn as_raw_fd(&self) -> RawFd {
        self.timer.as_fd().as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_millis(5);

    #[test]
    fn far_arrivals_arm_the_timer_near_ones_spin_due_ones_poll() {
        let mut p = Pacer::new().unwrap();
        let now = Instant::now();
        assert_eq!(p.timeout(None, now, TICK).unwrap(), TICK);
        let t = now + Duration::from_millis(1);
        assert_eq!(p.timeout(Some(t), now, TICK).unwrap(), TICK);
        assert_eq!(p.armed, Some(t - LEAD));
        let near = t - LEAD / 2;
        assert_eq!(p.timeout(Some(t), near, TICK).unwrap(), Duration::ZERO);
        assert_eq!((p.spins, p.spinning_for), (1, Some(t)));
        // Still spinning for the same arrival: no second spin is charged.
        assert_eq!(p.timeout(Some(t), near, TICK).unwrap(), Duration::ZERO);
        assert_eq!(p.spins, 1);
        assert_eq!(p.timeout(Some(t), t, TICK).unwrap(), Duration::ZERO);
    }

    #[test]
    fn a_spent_spin_budget_arms_the_timer_for_the_arrival_itself() {
        let mut p = Pacer::new().unwrap();
        let now = Instant::now();
        p.period_start = now;
        p.spins = MAX_SPINS_PER_S;
        let t = now + Duration::from_micros(30);
        assert_eq!(p.timeout(Some(t), now, TICK).unwrap(), TICK);
        assert_eq!(p.armed, Some(t));
        // A new period restores the budget.
        let later = now + BUDGET_PERIOD;
        let t = later + Duration::from_micros(30);
        assert_eq!(p.timeout(Some(t), later, TICK).unwrap(), Duration::ZERO);
        assert_eq!(p.spins, 1);
    }
}
