//! Timers: [`sleep`], [`sleep_until`], [`timeout`], [`interval`].
//!
//! A runtime's timers live in its driver's hierarchical wheel (1 ms
//! resolution), or under `--knob timer=per-worker` in the wheel of the
//! worker that polled them first (see `driver/local.rs`). A deadline is rounded up to the next millisecond, so a timer
//! never completes early; it completes once the runtime's driver has seen
//! the clock pass that millisecond.
//!
//! Edge cases are well defined: a zero duration or a deadline in the past is
//! ready at the first poll; `Duration::MAX` (or any deadline that `Instant`
//! cannot represent) means "about 30 years from now" — never an overflow
//! panic. After the runtime shuts down, every sleep completes at once.
//!
//! A timer uses the runtime of the thread that first polls it (it may be
//! created outside one). Polling one outside every runtime panics, saying
//! so.

use std::future::{poll_fn, Future, IntoFuture};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use crate::coop;
use crate::driver::{self, Timer};
use crate::runtime::context;

/// What an unrepresentable deadline is clamped to: about 30 years ahead.
const FAR_FUTURE: Duration = Duration::from_secs(60 * 60 * 24 * 365 * 30);

/// `now + duration`, or [`FAR_FUTURE`] from now if `Instant` cannot hold
/// that (and `now` itself only if it cannot hold either, which no supported
/// platform's clock reaches).
fn deadline_after(now: Instant, duration: Duration) -> Instant {
    now.checked_add(duration).or_else(|| now.checked_add(FAR_FUTURE)).unwrap_or(now)
}

/// Waits until `duration` has elapsed.
pub fn sleep(duration: Duration) -> Sleep {
    let mut s = Sleep::new(deadline_after(Instant::now(), duration));
    // The deadline is in the future now; if it has passed by the first poll,
    // the wheel's clock (advanced at every driver turn) says so.
    s.check_clock = duration.is_zero();
    s
}

/// Waits until `deadline`.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(deadline)
}

#[derive(Debug)]
enum State {
    /// Not filed yet.
    Idle,
    /// Filed in a wheel.
    Registered(Timer),
    /// Completed.
    Done,
}

/// The future of [`sleep`] / [`sleep_until`]. Dropping it before it
/// completes cancels the timer (O(1)); it never wakes anything after that.
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Sleep {
    deadline: Instant,
    state: State,
    /// The driver the timer is filed with (set at the first poll).
    handle: Option<driver::Handle>,
    /// Whether the first poll reads the clock so that a deadline already
    /// passed completes at once.
    check_clock: bool,
}

impl Sleep {
    fn new(deadline: Instant) -> Sleep {
        Sleep { deadline, state: State::Idle, handle: None, check_clock: true }
    }

    /// The instant this sleep completes at (or after).
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the sleep has completed, or its deadline has passed.
    pub fn is_elapsed(&self) -> bool {
        matches!(self.state, State::Done) || self.deadline <= Instant::now()
    }

    /// Re-arms the sleep for `deadline`, cancelling any filed timer.
    pub fn reset(&mut self, deadline: Instant) {
        self.cancel();
        self.deadline = deadline;
        self.state = State::Idle;
        self.check_clock = true;
    }

    fn cancel(&mut self) {
        if let State::Registered(timer) = std::mem::replace(&mut self.state, State::Idle) {
            let handle = self.handle.as_ref().expect("a filed timer has its driver");
            handle.cancel_timer(timer);
        }
    }

    fn poll_sleep(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let State::Done = self.state {
            return Poll::Ready(());
        }
        ready!(coop::poll_proceed(cx));
        if matches!(self.state, State::Idle) && self.check_clock && self.deadline <= Instant::now() {
            self.state = State::Done;
            return Poll::Ready(());
        }
        let handle = self.handle.get_or_insert_with(|| context::with_driver(Clone::clone));
        let done = match &self.state {
            State::Idle => match handle.register_timer(self.deadline, cx.waker()) {
                Some(timer) => {
                    self.state = State::Registered(timer);
                    false
                }
                None => true,
            },
            State::Registered(timer) => handle.poll_timer(timer, cx.waker()).is_ready(),
            State::Done => true,
        };
        if done {
            self.state = State::Done;
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().poll_sleep(cx)
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// The error of a [`Timeout`] whose deadline passed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("deadline has elapsed")]
pub struct Elapsed(());

impl From<Elapsed> for std::io::Error {
    fn from(e: Elapsed) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::TimedOut, e)
    }
}

/// Runs `future` for at most `duration`: `Ok(output)` if it completes first
/// (a ready future wins even against a zero duration), else `Err(Elapsed)`
/// and the future is dropped.
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    Timeout { future: future.into_future(), sleep: sleep(duration) }
}

/// [`timeout`] with an absolute deadline.
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    Timeout { future: future.into_future(), sleep: sleep_until(deadline) }
}

/// The future of [`timeout`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Timeout<F> {
    future: F,
    sleep: Sleep,
}

impl<F> Timeout<F> {
    /// The wrapped future.
    pub fn get_ref(&self) -> &F {
        &self.future
    }

    /// Drops the timer and returns the wrapped future.
    pub fn into_inner(self) -> F {
        self.future
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `future` is structurally pinned: it is never moved out of
        // a pinned `Timeout` (`into_inner` takes `self` by value, which
        // requires `Timeout: Unpin` once pinned, i.e. `F: Unpin`), and
        // `Timeout` has no `Drop` impl that could move it. `sleep` is
        // `Unpin` and not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: see above; `this.future` stays where it is.
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        if let Poll::Ready(v) = future.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        // The inner future may have spent the whole budget; the deadline
        // must still be able to fire, so its check is not budgeted.
        coop::with_budget(None, || this.sleep.poll_sleep(cx)).map(|()| Err(Elapsed(())))
    }
}

/// A stream of ticks every `period`, the first one at once. Ticks are
/// scheduled at `start + k * period`, not "period after the last tick", so
/// lateness does not accumulate (drift); missed ticks fire back to back
/// until it has caught up.
///
/// # Panics
/// If `period` is zero.
pub fn interval(period: Duration) -> Interval {
    interval_at(Instant::now(), period)
}

/// [`interval`] with its first tick at `start`.
///
/// # Panics
/// If `period` is zero.
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(period > Duration::ZERO, "interval period must be non-zero, got {period:?}");
    Interval { period, sleep: sleep_until(start) }
}

/// The ticker of [`interval`].
#[derive(Debug)]
pub struct Interval {
    period: Duration,
    sleep: Sleep,
}

impl Interval {
    /// Waits for the next tick and returns the instant it was scheduled at.
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick (see [`Interval::tick`]).
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        ready!(self.sleep.poll_sleep(cx));
        let scheduled = self.sleep.deadline();
        self.sleep.reset(deadline_after(scheduled, self.period));
        Poll::Ready(scheduled)
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }
}
