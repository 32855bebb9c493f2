//! The steal loop's victim order, shared by every stealing policy
//! (`steal-one`, `steal-half`, `bwos`): every worker but the thief once, in
//! the order the `victim` knob says (random start, next worker first, or
//! level by level over a `crate::topology::WorkerTopology`), and the count
//! of steals within the thief's L3 group and across (`steals_local_group`,
//! `steals_remote_group`), kept whenever a worker topology is known.

use crate::fast_rand::FastRand;
use crate::knobs::Victim;
use crate::metrics::Counters;
use crate::topology::WorkerTopology;

/// Victims of each worker by level, for `victim=topology`.
type Levels = Box<[[Box<[usize]>; 3]]>;

/// The steal loop's victim order, one per runtime: every worker but the
/// thief once, in the order the `victim` knob says, and the group
/// counters when a worker topology is known.
pub(crate) struct VictimOrder {
    victim: Victim,
    workers: usize,
    /// Per worker its victims by level (`victim=topology` with a topology).
    levels: Option<Levels>,
    /// The worker topology, when known (for the group counters).
    topology: Option<WorkerTopology>,
}

impl VictimOrder {
    /// Without a topology `victim=topology` orders as `random`.
    pub(crate) fn new(victim: Victim, topology: Option<&WorkerTopology>, workers: usize) -> VictimOrder {
        let topology = topology.filter(|t| t.workers() == workers).cloned();
        let levels = match (&topology, victim) {
            (Some(t), Victim::Topology) => {
                Some((0..workers).map(|me| t.levels(me).map(Vec::into_boxed_slice)).collect())
            }
            _ => None,
        };
        VictimOrder { victim, workers, levels, topology }
    }

    /// Whether victims follow the topology (a policy's own victim
    /// heuristics, such as `bwos`'s weighted draw, stand aside then).
    pub(crate) fn by_topology(&self) -> bool {
        self.levels.is_some()
    }

    /// `me`'s victims, each once: `random` starts at a random worker and
    /// goes round; `sequential` starts at `me + 1`; `topology` goes level
    /// by level, starting each at a random member and going round it.
    pub(crate) fn victims<'a>(&'a self, rng: &mut FastRand, me: usize) -> Victims<'a> {
        let n = self.workers;
        match &self.levels {
            Some(levels) => {
                let levels = &levels[me];
                let offsets = levels.each_ref().map(|l| if l.len() > 1 { rng.below(l.len()) } else { 0 });
                Victims::Levels { levels, offsets, level: 0, k: 0 }
            }
            None => {
                let start = match self.victim {
                    Victim::Sequential => me + 1,
                    Victim::Random | Victim::Topology => rng.below(n),
                };
                Victims::Ring { start, k: 0, n, me }
            }
        }
    }

    /// Counts a successful steal by `me` from `victim` as within its group
    /// or across, when the topology is known.
    #[inline]
    pub(crate) fn count_steal(&self, counters: &Counters, me: usize, victim: usize) {
        if let Some(t) = &self.topology {
            let c = if t.same_group(me, victim) { &counters.steals_local_group } else { &counters.steals_remote_group };
            Counters::bump(c, 1);
        }
    }

    /// Whether [`VictimOrder::count_steal`] counts (a topology is known).
    pub(crate) fn counts_groups(&self) -> bool {
        self.topology.is_some()
    }
}

/// The iterator of [`VictimOrder::victims`].
pub(crate) enum Victims<'a> {
    /// `(start + k) % n` for `k` in `0..n`, skipping `me`.
    Ring { start: usize, k: usize, n: usize, me: usize },
    /// Each level in turn, rotated by its offset.
    Levels { levels: &'a [Box<[usize]>; 3], offsets: [usize; 3], level: usize, k: usize },
}

impl Iterator for Victims<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        match self {
            Victims::Ring { start, k, n, me } => loop {
                if *k >= *n {
                    return None;
                }
                let v = (*start + *k) % *n;
                *k += 1;
                if v != *me {
                    return Some(v);
                }
            },
            Victims::Levels { levels, offsets, level, k } => loop {
                let members = levels.get(*level)?;
                if *k < members.len() {
                    let v = members[(offsets[*level] + *k) % members.len()];
                    *k += 1;
                    return Some(v);
                }
                *level += 1;
                *k = 0;
            },
        }
    }
}

// `cfg(test)` on the line above `mod`: how `circles.py` tells test code.
#[cfg(not(loom))]
#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Imposed;

    /// `victim=topology` over an imposed 2x4: worker 5's victims are 4, 6, 7
    /// (its group) in some rotation, then 0..4 in some rotation; over many
    /// draws each group member comes first at some point.
    #[test]
    fn topology_order_is_level_by_level_random_within() {
        let t = WorkerTopology::imposed(Imposed { groups: 2, size: 4 });
        let order = VictimOrder::new(Victim::Topology, Some(&t), 8);
        assert!(order.by_topology() && order.counts_groups());
        let mut rng = FastRand::new(7);
        let mut firsts = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let v: Vec<usize> = order.victims(&mut rng, 5).collect();
            let (mut own, mut rest) = (v[..3].to_vec(), v[3..].to_vec());
            firsts.insert(v[0]);
            // A rotation of the level's list: consecutive members in order.
            let rotated = |s: &[usize], of: &[usize]| {
                let i = of.iter().position(|&x| x == s[0]).unwrap();
                s.iter().enumerate().all(|(k, &x)| x == of[(i + k) % of.len()])
            };
            assert!(rotated(&own, &[4, 6, 7]) && rotated(&rest, &[0, 1, 2, 3]), "{v:?}");
            own.sort_unstable();
            rest.sort_unstable();
            assert_eq!((own, rest), (vec![4, 6, 7], vec![0, 1, 2, 3]));
        }
        assert_eq!(firsts.into_iter().collect::<Vec<_>>(), [4, 6, 7]);
    }

    #[test]
    fn random_and_sequential_visit_every_other_worker_once() {
        let mut rng = FastRand::new(1);
        for victim in [Victim::Random, Victim::Sequential, Victim::Topology] {
            for (me, n) in [(0, 1), (0, 2), (3, 8), (7, 8)] {
                // No topology: `topology` orders as `random`.
                let order = VictimOrder::new(victim, None, n);
                assert!(!order.by_topology() && !order.counts_groups());
                let mut v: Vec<usize> = order.victims(&mut rng, me).collect();
                v.sort_unstable();
                let want: Vec<usize> = (0..n).filter(|&i| i != me).collect();
                assert_eq!(v, want, "{victim:?} me={me} n={n}");
            }
        }
        let seq: Vec<usize> = VictimOrder::new(Victim::Sequential, None, 4).victims(&mut rng, 2).collect();
        assert_eq!(seq, [3, 0, 1]);
        // A topology of another size is not used.
        let t = WorkerTopology::imposed(Imposed { groups: 2, size: 2 });
        assert!(!VictimOrder::new(Victim::Topology, Some(&t), 8).counts_groups());
    }

    #[test]
    fn steals_are_counted_within_or_across_the_group() {
        let t = WorkerTopology::imposed(Imposed { groups: 2, size: 2 });
        let order = VictimOrder::new(Victim::Random, Some(&t), 4);
        assert!(order.counts_groups() && !order.by_topology(), "counted under any victim order");
        let c = Counters::default();
        for (me, victim) in [(0, 1), (0, 2), (0, 3), (3, 2), (2, 1)] {
            order.count_steal(&c, me, victim);
        }
        let m = c.snapshot();
        assert_eq!((m.steals_local_group, m.steals_remote_group), (2, 3));
    }
}
