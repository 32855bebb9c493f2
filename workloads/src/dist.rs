//! Service-time distributions: `fixed`, `exp`, `bimodal`, `pareto`, each
//! given by its mean, plus two shape parameters shared by every
//! distribution of a workload (`bimodal-p`, `bimodal-ratio`,
//! `pareto-shape`).

use rand::Rng;

use crate::api::ParamInfo;
use crate::params::Params;
use crate::Error;

/// No single draw exceeds this (a Pareto tail can otherwise ask a worker
/// to spin for minutes); documented in every distribution parameter.
pub const MAX_SAMPLE_NS: u64 = 1_000_000_000;
/// Largest accepted mean, in microseconds.
pub const MAX_MEAN_US: f64 = 1_000_000.0;
/// Largest accepted `bimodal-ratio` and `pareto-shape`.
const MAX_SHAPE: f64 = 1_000.0;
const NS_PER_US: f64 = 1_000.0;

/// Parameter: fraction of slow draws of `bimodal`.
pub const P_BIMODAL_P: ParamInfo =
    ParamInfo { name: "bimodal-p", default: "0.1", about: "bimodal: fraction of slow draws, a number in (0, 1)" };
/// Parameter: slow/fast ratio of `bimodal`.
pub const P_BIMODAL_RATIO: ParamInfo = ParamInfo {
    name: "bimodal-ratio",
    default: "10",
    about: "bimodal: slow draw = ratio x fast draw, a number >= 1 and <= 1000",
};
/// Parameter: tail index of `pareto`.
pub const P_PARETO_SHAPE: ParamInfo = ParamInfo {
    name: "pareto-shape",
    default: "2",
    about: "pareto: tail index alpha, a number > 1 (finite mean) and <= 1000",
};

/// A distribution of durations, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    /// Always the same.
    Fixed {
        /// The value.
        ns: f64,
    },
    /// Exponential.
    Exp {
        /// Mean.
        mean_ns: f64,
    },
    /// `fast_ns` with probability `1 - p_slow`, else `slow_ns`.
    Bimodal {
        /// Fast value.
        fast_ns: f64,
        /// Slow value.
        slow_ns: f64,
        /// Probability of the slow value.
        p_slow: f64,
    },
    /// Pareto with scale `x_m` and shape `alpha > 1`.
    Pareto {
        /// Scale (smallest value).
        scale_ns: f64,
        /// Tail index.
        shape: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fixed,
    Exp,
    Bimodal,
    Pareto,
}

const KINDS: &[(&str, Kind)] =
    &[("fixed", Kind::Fixed), ("exp", Kind::Exp), ("bimodal", Kind::Bimodal), ("pareto", Kind::Pareto)];

impl Dist {
    /// A distribution of mean `mean_ns` (parameters already validated).
    fn new(kind: Kind, mean_ns: f64, p_slow: f64, ratio: f64, shape: f64) -> Dist {
        match kind {
            Kind::Fixed => Dist::Fixed { ns: mean_ns },
            Kind::Exp => Dist::Exp { mean_ns },
            Kind::Bimodal => {
                // mean = (1 - p) f + p r f  =>  f = mean / (1 - p + p r)
                let fast_ns = mean_ns / (1.0 - p_slow + p_slow * ratio);
                Dist::Bimodal { fast_ns, slow_ns: fast_ns * ratio, p_slow }
            }
            // mean = alpha x_m / (alpha - 1)
            Kind::Pareto => Dist::Pareto { scale_ns: mean_ns * (shape - 1.0) / shape, shape },
        }
    }

    /// Reads `{kind_param}` and `{mean_param}` (microseconds) plus the
    /// shared shape parameters.
    pub(crate) fn from_params(p: &mut Params<'_>, kind_param: &str, mean_param: &str) -> Result<Dist, Error> {
        let kind = p.choice(kind_param, KINDS)?;
        let mean_us = p.f64_in(mean_param, 0.0, MAX_MEAN_US)?;
        let p_slow = p.f64_open(P_BIMODAL_P.name, 0.0, 1.0)?;
        let ratio = p.f64_in(P_BIMODAL_RATIO.name, 1.0, MAX_SHAPE)?;
        let shape = p.f64_above(P_PARETO_SHAPE.name, 1.0, MAX_SHAPE)?;
        Ok(Dist::new(kind, mean_us * NS_PER_US, p_slow, ratio, shape))
    }

    /// The distribution's mean, in nanoseconds (before the cap).
    #[cfg(test)]
    pub fn mean_ns(&self) -> f64 {
        match *self {
            Dist::Fixed { ns } => ns,
            Dist::Exp { mean_ns } => mean_ns,
            Dist::Bimodal { fast_ns, slow_ns, p_slow } => (1.0 - p_slow) * fast_ns + p_slow * slow_ns,
            Dist::Pareto { scale_ns, shape } => shape * scale_ns / (shape - 1.0),
        }
    }

    /// One draw, in nanoseconds, at most [`MAX_SAMPLE_NS`].
    pub fn sample<R: Rng>(&self, rng: &mut R) -> u64 {
        let ns = match *self {
            Dist::Fixed { ns } => ns,
            Dist::Exp { mean_ns } => -mean_ns * open_unit(rng).ln(),
            Dist::Bimodal { fast_ns, slow_ns, p_slow } => {
                if rng.random::<f64>() < p_slow {
                    slow_ns
                } else {
                    fast_ns
                }
            }
            Dist::Pareto { scale_ns, shape } => scale_ns / open_unit(rng).powf(1.0 / shape),
        };
        (ns as u64).min(MAX_SAMPLE_NS)
    }
}

/// A uniform draw in (0, 1].
fn open_unit<R: Rng>(rng: &mut R) -> f64 {
    1.0 - rng.random::<f64>()
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    use super::*;

    const DRAWS: usize = 200_000;
    const SEED: u64 = 7;

    fn sample_mean(d: Dist) -> f64 {
        let mut rng = SmallRng::seed_from_u64(SEED);
        (0..DRAWS).map(|_| d.sample(&mut rng) as f64).sum::<f64>() / DRAWS as f64
    }

    #[test]
    fn each_kind_has_the_requested_mean() {
        let mean_ns = 10_000.0;
        for (name, kind) in KINDS {
            let d = Dist::new(*kind, mean_ns, 0.1, 10.0, 3.0);
            assert!((d.mean_ns() - mean_ns).abs() < 1e-6, "{name}: analytic mean {}", d.mean_ns());
            // Pareto with alpha 3 has finite variance, so 200k draws pin the
            // mean to well within 3%; the others are tighter still.
            let m = sample_mean(d);
            assert!((m - mean_ns).abs() < 0.03 * mean_ns, "{name}: sample mean {m} vs {mean_ns}");
        }
    }

    #[test]
    fn bimodal_has_two_values_in_the_stated_ratio() {
        let d = Dist::new(Kind::Bimodal, 1_900.0, 0.1, 10.0, 2.0);
        let Dist::Bimodal { fast_ns, slow_ns, .. } = d else { panic!("{d:?}") };
        assert_eq!((fast_ns, slow_ns), (1_000.0, 10_000.0));
    }

    #[test]
    fn draws_are_capped() {
        let d = Dist::Fixed { ns: 5.0 * MAX_SAMPLE_NS as f64 };
        assert_eq!(d.sample(&mut SmallRng::seed_from_u64(SEED)), MAX_SAMPLE_NS);
    }
}
