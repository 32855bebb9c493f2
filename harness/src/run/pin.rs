//! Which cores the workers and the load generator are pinned to.
//!
//! Workers go round-robin over the cores this process may use. When a
//! workload has a load generator and there are more cores than workers, the
//! generator gets the cores the workers do not use, so it never competes
//! with the runtime under test; otherwise it is left unpinned.

/// The pinning of one cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorePlan {
    /// Core ids for workers, used round-robin by worker index.
    pub worker_cores: Vec<usize>,
    /// Core ids for load-generator threads; empty = unpinned.
    pub loadgen_cores: Vec<usize>,
    /// Workers exceed the allowed cores.
    pub oversubscribed: bool,
    /// The load generator shares cores with the workers.
    pub loadgen_shares_cores: bool,
}

/// The ids of the cores this process may run on, in order.
pub fn allowed_cores() -> Vec<usize> {
    match core_affinity::get_core_ids() {
        Some(ids) if !ids.is_empty() => ids.into_iter().map(|c| c.id).collect(),
        _ => (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect(),
    }
}

/// Plans one cell: `workers` worker threads over `cores`, with a load
/// generator when `has_loadgen`. With `pin` false nothing is pinned but
/// oversubscription is still reported.
pub fn plan(cores: &[usize], workers: usize, has_loadgen: bool, pin: bool) -> CorePlan {
    let oversubscribed = workers > cores.len();
    let separate = has_loadgen && cores.len() > workers;
    if !pin {
        return CorePlan {
            worker_cores: Vec::new(),
            loadgen_cores: Vec::new(),
            oversubscribed,
            loadgen_shares_cores: has_loadgen && !separate,
        };
    }
    let (worker_cores, loadgen_cores) =
        if separate { (cores[..workers].to_vec(), cores[workers..].to_vec()) } else { (cores.to_vec(), Vec::new()) };
    CorePlan { worker_cores, loadgen_cores, oversubscribed, loadgen_shares_cores: has_loadgen && !separate }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_generator_gets_the_spare_cores() {
        let p = plan(&[0, 1, 2, 3], 2, true, true);
        assert_eq!(p.worker_cores, vec![0, 1]);
        assert_eq!(p.loadgen_cores, vec![2, 3]);
        assert!(!p.oversubscribed && !p.loadgen_shares_cores);
    }

    #[test]
    fn too_few_cores_means_sharing_and_round_robin() {
        let p = plan(&[0, 1], 2, true, true);
        assert_eq!(p.worker_cores, vec![0, 1]);
        assert!(p.loadgen_cores.is_empty() && p.loadgen_shares_cores && !p.oversubscribed);
        let p = plan(&[0, 1], 128, false, true);
        assert_eq!(p.worker_cores, vec![0, 1]);
        assert!(p.oversubscribed && !p.loadgen_shares_cores);
    }

    #[test]
    fn unpinned_still_reports_oversubscription() {
        let p = plan(&[0, 1], 4, true, false);
        assert!(p.worker_cores.is_empty() && p.loadgen_cores.is_empty());
        assert!(p.oversubscribed && p.loadgen_shares_cores);
    }
}
