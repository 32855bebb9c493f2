//! Pacing a client thread's arrivals inside its own event loop: no other
//! thread hands it the next arrival (a cross-thread wake-up costs more than
//! the server's own latency on loopback, issue 26).
//!
//! A [`Pacer`] owns a timerfd, registered in the thread's own epoll (mio)
//! or tokio reactor (h2). Before each arrival the loop asks it how long it
//! may block: the timer is armed (nanosecond resolution, unlike epoll's
//! millisecond timeout) for a lead before the arrival, and the loop then
//! polls without blocking until the arrival is due, so the send does not
//! pay the wake-up.
//!
//! The lead is a tenth of the wait ([`LEAD_SHARE`]) as first seen for that
//! arrival, within [`MIN_LEAD`]..[`MAX_LEAD`]: a wake-up from an idle CPU
//! is slowest when arrivals are far apart (at 200 req/s on the 2-vCPU VM a
//! sleep overshot its deadline by a median of 69 µs, at 2,000 req/s by
//! 35 µs: `scripts/client-bias.sh`), and that is also when a longer spin
//! is cheap. Spinning is capped at [`MAX_SPINS_PER_S`] arrivals per
//! second per thread: beyond that (high rates, where the loop is busy with
//! answers anyway) the timer is armed for the arrival itself, and the
//! thread never burns a core on waiting. Together the two bound spinning
//! to about a tenth of the wait plus `MAX_SPINS_PER_S × MIN_LEAD` (10 % of
//! a core).

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

/// The timer fires at least this long before an arrival; the loop polls
/// without blocking for the rest (when the spin budget allows).
pub(crate) const MIN_LEAD: Duration = Duration::from_micros(50);
/// The longest lead, for arrivals far apart.
pub(crate) const MAX_LEAD: Duration = Duration::from_micros(500);
/// The lead is the wait before an arrival (as first seen) divided by this.
pub(crate) const LEAD_SHARE: u32 = 10;
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
    /// The arrival `lead` was chosen for, and that lead.
    lead_of: Option<Instant>,
    lead: Duration,
    period_start: Instant,
    spins: u32,
}

impl Pacer {
    pub(crate) fn new() -> io::Result<Pacer> {
        let timer = TimerFd::new(ClockId::CLOCK_MONOTONIC, TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC)
            .map_err(io::Error::from)?;
        Ok(Pacer {
            timer,
            armed: None,
            spinning_for: None,
            lead_of: None,
            lead: MIN_LEAD,
            period_start: Instant::now(),
            spins: 0,
        })
    }

    /// Whether one more arrival may be waited for by spinning in this period.
    fn may_spin(&mut self, now: Instant) -> bool {
        if now.saturating_duration_since(self.period_start) >= BUDGET_PERIOD {
            (self.period_start, self.spins) = (now, 0);
        }
        self.spins < MAX_SPINS_PER_S
    }

    /// The lead for arrival `t`, chosen when the loop first asks for it
    /// (`left` before it then is about the gap since the previous send).
    fn lead_for(&mut self, t: Instant, left: Duration) -> Duration {
        if self.lead_of != Some(t) {
            self.lead_of = Some(t);
            self.lead = (left / LEAD_SHARE).clamp(MIN_LEAD, MAX_LEAD);
        }
        self.lead
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
        let lead = self.lead_for(t, left);
        let spin = self.may_spin(now);
        if spin && left <= lead {
            self.spins += 1;
            self.spinning_for = Some(t);
            return Ok(Duration::ZERO);
        }
        let wake = if spin { t - lead } else { t };
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
        // A tenth of the 1 ms wait.
        let lead = Duration::from_micros(100);
        assert_eq!(p.armed, Some(t - lead));
        // The lead stays the one chosen when the arrival was first seen.
        assert_eq!(p.timeout(Some(t), t - 2 * lead, TICK).unwrap(), TICK);
        assert_eq!(p.armed, Some(t - lead));
        let near = t - lead / 2;
        assert_eq!(p.timeout(Some(t), near, TICK).unwrap(), Duration::ZERO);
        assert_eq!((p.spins, p.spinning_for), (1, Some(t)));
        // Still spinning for the same arrival: no second spin is charged.
        assert_eq!(p.timeout(Some(t), near, TICK).unwrap(), Duration::ZERO);
        assert_eq!(p.spins, 1);
        assert_eq!(p.timeout(Some(t), t, TICK).unwrap(), Duration::ZERO);
    }

    #[test]
    fn the_lead_is_a_tenth_of_the_wait_within_its_bounds() {
        let mut p = Pacer::new().unwrap();
        let now = Instant::now();
        for (wait_us, lead) in [(100, MIN_LEAD), (2_000, Duration::from_micros(200)), (20_000, MAX_LEAD)] {
            let t = now + Duration::from_micros(wait_us);
            assert_eq!(p.timeout(Some(t), now, TICK).unwrap(), TICK, "wait {wait_us} us");
            assert_eq!(p.armed, Some(t - lead), "wait {wait_us} us");
        }
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
