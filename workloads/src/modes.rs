//! Steady modes of a message-passing run, told apart by each iteration's
//! share of cross-worker hand-offs, so that two modes are never averaged
//! into one number (issue 28 item 2, "beware a mode lottery").
//!
//! A 4-stage pipeline on 2 workers settles, iteration by iteration, into
//! one of two steady modes 8x apart: its stages stay on one worker (few
//! hand-offs cross), or bounce between two (most do). The measured
//! iterations are kept here by their cross-worker share; iterations whose
//! shares are separated by a gap wider than [`MODE_GAP`], with no iteration
//! in it, belong to different modes. Each mode reports its own iteration
//! count, time per message and cross-worker share; a run with more than one
//! mode reports no whole-run time per message, and the harness leaves its
//! whole-run means (throughput, latency, per-op CPU) blank (`modes` > 1,
//! [`crate::api::extra::MODES`]).
//!
//! Memory is bounded for any number of iterations: they are summed into
//! [`SHARE_BINS`] bins of share, each keeping its exact sums and the exact
//! range of shares it saw, so the gaps are measured between real shares.

use std::time::Duration;

/// Iterations whose cross-worker shares (out of 1) are separated by an
/// empty gap wider than this are in different modes.
pub(crate) const MODE_GAP: f64 = 0.25;
/// Bins of cross-worker share the iterations are summed into (1 % wide;
/// narrower than [`MODE_GAP`], so a gap is never hidden inside a bin).
const SHARE_BINS: usize = 100;

/// The sums of the iterations that fell into one share bin (or one mode).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sums {
    iterations: u64,
    took_ns: u128,
    messages: u64,
    cross: u64,
    received: u64,
    share_min: f64,
    share_max: f64,
}

impl Sums {
    const EMPTY: Sums =
        Sums { iterations: 0, took_ns: 0, messages: 0, cross: 0, received: 0, share_min: 1.0, share_max: 0.0 };

    fn add(&mut self, o: &Sums) {
        self.iterations += o.iterations;
        self.took_ns += o.took_ns;
        self.messages += o.messages;
        self.cross += o.cross;
        self.received += o.received;
        self.share_min = self.share_min.min(o.share_min);
        self.share_max = self.share_max.max(o.share_max);
    }
}

/// One steady mode of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mode {
    /// Measured iterations in this mode.
    pub iterations: u64,
    /// Their time over their messages (as the workload counts messages
    /// for `ns_per_message`).
    pub ns_per_message: f64,
    /// Their cross-worker hand-offs over their hand-offs.
    pub cross_share: f64,
}

/// The measured iterations of one run, by cross-worker share.
#[derive(Debug, Clone)]
pub(crate) struct Modes {
    bins: Vec<Sums>,
}

impl Modes {
    pub(crate) fn new() -> Modes {
        Modes { bins: vec![Sums::EMPTY; SHARE_BINS] }
    }

    /// Adds one iteration: it took `took` for `messages` messages (the
    /// divisor of its time per message), and `cross` of its `received`
    /// hand-offs crossed workers.
    pub(crate) fn add(&mut self, took: Duration, messages: u64, cross: u64, received: u64) {
        let share = cross as f64 / received.max(1) as f64;
        let bin = ((share * SHARE_BINS as f64) as usize).min(SHARE_BINS - 1);
        let one = Sums {
            iterations: 1,
            took_ns: took.as_nanos(),
            messages,
            cross,
            received,
            share_min: share,
            share_max: share,
        };
        self.bins[bin].add(&one);
    }

    /// The lowest and highest share of any iteration (`None` before the
    /// first).
    pub(crate) fn share_range(&self) -> Option<(f64, f64)> {
        let all = self.bins.iter().fold(Sums::EMPTY, |mut a, b| {
            a.add(b);
            a
        });
        (all.iterations > 0).then_some((all.share_min, all.share_max))
    }

    /// The modes, lowest share first: the iterations split at every empty
    /// gap of shares wider than [`MODE_GAP`]; none before the first
    /// iteration.
    pub(crate) fn split(&self) -> Vec<Mode> {
        let mut groups: Vec<Sums> = Vec::new();
        for bin in self.bins.iter().filter(|b| b.iterations > 0) {
            match groups.last_mut() {
                Some(last) if bin.share_min - last.share_max <= MODE_GAP => last.add(bin),
                _ => groups.push(*bin),
            }
        }
        groups
            .iter()
            .map(|g| Mode {
                iterations: g.iterations,
                ns_per_message: g.took_ns as f64 / g.messages.max(1) as f64,
                cross_share: g.cross as f64 / g.received.max(1) as f64,
            })
            .collect()
    }
}

/// The extras of `modes`: `modes` (how many), and, when there are several,
/// each one's `modeN_iterations`, `modeN_ns_per_message` and
/// `modeN_cross_worker_share` (N = 1 for the lowest share).
pub(crate) fn extras(modes: &[Mode]) -> Vec<(String, f64)> {
    let mut out = vec![(crate::api::extra::MODES.to_string(), modes.len() as f64)];
    if modes.len() > 1 {
        for (i, m) in modes.iter().enumerate() {
            let n = i + 1;
            out.push((format!("mode{n}_iterations"), m.iterations as f64));
            out.push((format!("mode{n}_ns_per_message"), m.ns_per_message));
            out.push((format!("mode{n}_cross_worker_share"), m.cross_share));
        }
    }
    out
}

/// The note of a run whose iterations fell into several modes.
pub(crate) fn note(modes: &[Mode]) -> Option<String> {
    (modes.len() > 1).then(|| {
        let each: Vec<_> = modes
            .iter()
            .enumerate()
            .map(|(i, m)| {
                format!(
                    "mode{} {} iterations at {:.0} ns/message, {:.0}% of hand-offs cross-worker",
                    i + 1,
                    m.iterations,
                    m.ns_per_message,
                    100.0 * m.cross_share
                )
            })
            .collect();
        format!(
            "iterations fell into {} modes ({}): they are reported apart (modeN_* extras), and the run's \
             throughput, latency and per-op CPU, which would mix them, are blank",
            modes.len(),
            each.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Synthetic iterations of the pipeline's two modes: 3 local ones
    /// (0 to 2 % crossed, 263 ms for 1000 messages) and 2 bouncing ones
    /// (95 % and 97 %, 2.1 s): two modes, with exact counts and sums.
    #[test]
    fn two_modes_are_reported_apart_with_exact_counts() {
        let mut m = Modes::new();
        for (took, cross) in [(263, 0), (2100, 3800), (263, 40), (263, 80), (2100, 3880)] {
            m.add(ms(took), 1000, cross, 4000);
        }
        let modes = m.split();
        assert_eq!(modes.len(), 2);
        assert_eq!(modes[0], Mode { iterations: 3, ns_per_message: 263_000.0, cross_share: 120.0 / 12_000.0 });
        assert_eq!(modes[1], Mode { iterations: 2, ns_per_message: 2_100_000.0, cross_share: 7680.0 / 8000.0 });
        assert_eq!(m.share_range(), Some((0.0, 0.97)));
        let e = extras(&modes);
        let names: Vec<_> = e.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "modes",
                "mode1_iterations",
                "mode1_ns_per_message",
                "mode1_cross_worker_share",
                "mode2_iterations",
                "mode2_ns_per_message",
                "mode2_cross_worker_share"
            ]
        );
        assert_eq!((e[0].1, e[1].1, e[2].1, e[4].1, e[5].1), (2.0, 3.0, 263_000.0, 2.0, 2_100_000.0));
        let note = note(&modes).expect("a note");
        for part in ["2 modes", "mode1 3 iterations at 263000 ns/message", "mode2 2 iterations at 2100000", "blank"] {
            assert!(note.contains(part), "`{part}` missing from: {note}");
        }
    }

    /// Shares spread over 0.1 to 0.9 with no gap wider than 0.25 are one
    /// mode: its time per message is the whole run's.
    #[test]
    fn a_spread_without_a_gap_is_one_mode() {
        let mut m = Modes::new();
        for (i, cross) in [100u64, 300, 500, 700, 900].into_iter().enumerate() {
            m.add(ms(10 + i as u64), 100, cross, 1000);
        }
        let modes = m.split();
        assert_eq!(modes, [Mode { iterations: 5, ns_per_message: 60_000_000.0 / 500.0, cross_share: 0.5 }]);
        assert_eq!(extras(&modes), [("modes".to_string(), 1.0)]);
        assert_eq!(note(&modes), None);
    }

    /// Three clusters are three modes; a gap of exactly MODE_GAP does not
    /// split; nothing measured is no mode.
    #[test]
    fn every_wide_gap_splits_and_only_a_wide_one() {
        let mut m = Modes::new();
        for cross in [0u64, 0, 500, 1000, 1000, 1000] {
            m.add(ms(1), 1, cross, 1000);
        }
        let counts: Vec<_> = m.split().iter().map(|x| x.iterations).collect();
        assert_eq!(counts, [2, 1, 3]);
        let mut m = Modes::new();
        m.add(ms(1), 1, 0, 100);
        m.add(ms(1), 1, 25, 100);
        assert_eq!(m.split().len(), 1, "a gap of exactly {MODE_GAP} is one mode");
        assert!(Modes::new().split().is_empty());
        assert_eq!(Modes::new().share_range(), None);
    }
}
