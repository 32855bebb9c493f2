//! When a run that finished is still not a success: too many of its
//! requests, of its client connections or of its scheduled requests
//! failed or were never sent, or it measured nothing. Every row of `run`,
//! `load` and `serve` goes through [`judge`]. Such a run's latency
//! percentiles describe only the requests that got through, so they must
//! not be shown as if from a healthy run: the run is recorded with
//! `status=failed` and the reason, keeps its measured numbers in its row,
//! and enters no summary, chart or comparison.

use wsbench_workloads::api::extra as names;

use crate::data::record::{RunRecord, Status};

/// The largest share of failed requests (or failed client connections) an
/// `ok` run may have: 5%. Beyond it a run is an outage, not a measurement
/// of the service; below it the table shows the share next to the
/// latencies. Not 1%: `panic-every=100` fails 1 request in 100, and a
/// window of 599 requests holds 6 of them (1.002%), so a 1% rule would fail
/// such runs by rounding.
pub const MAX_FAILED_FRACTION: f64 = 0.05;
const PERCENT: f64 = 100.0;

fn extra(record: &RunRecord, name: &str) -> Option<f64> {
    record.extras.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

/// Marks `record` (a run that finished) failed with the reason when
/// [`too_many_failures`] finds one; returns that reason. The one health
/// check of every `run`, `load` and `serve` row.
pub fn judge(record: &mut RunRecord) -> Option<String> {
    let reason = too_many_failures(record)?;
    (record.status, record.error) = (Status::Failed, reason.clone());
    Some(reason)
}

/// Why `record` is not a success although the run finished, or `None` when
/// it is one. Deadline misses are left out of the failed requests: the
/// `timers` workload measures them on purpose (its `deadline_misses`).
pub fn too_many_failures(record: &RunRecord) -> Option<String> {
    let misses = extra(record, names::DEADLINE_MISSES).unwrap_or(0.0).max(0.0) as u64;
    // A benchmark sends no requests (failed is blank): nothing can fail.
    let failed = record.failed.unwrap_or(0).saturating_sub(misses);
    let attempted = record.ops.unwrap_or(0) + failed;
    let mut reasons = Vec::new();
    if failed > 0 && failed as f64 > MAX_FAILED_FRACTION * attempted as f64 {
        reasons.push(format!(
            "{failed} of {attempted} requests failed ({:.1}%)",
            failed as f64 / attempted as f64 * PERCENT
        ));
    }
    if let (Some(lost), Some(all)) = (extra(record, names::FAILED_CONNECTIONS), extra(record, names::CONNECTIONS)) {
        if lost > 0.0 && lost > MAX_FAILED_FRACTION * all {
            reasons.push(format!("{lost:.0} of {all:.0} client connections failed"));
        }
    }
    if let (Some(never), Some(all)) = (extra(record, names::NEVER_SENT), extra(record, names::SCHEDULED)) {
        if never > 0.0 && never > MAX_FAILED_FRACTION * all {
            reasons.push(format!(
                "{never:.0} of {all:.0} scheduled requests never sent ({:.1}%; the load generator fell behind)",
                never / all * PERCENT
            ));
        }
    }
    // Not "none completed inside the window": a slow server answers a
    // short window's requests in the drain, which is a measurement (of
    // latency; its throughput is 0).
    // Only when nothing else explains it (all never sent is a reason).
    if reasons.is_empty() && record.ops == Some(0) && record.failed.unwrap_or(0) == 0 {
        return Some(format!(
            "measured nothing: no request {} in the measured window (a longer --duration or a higher --rate \
             gives it requests to measure)",
            if record.sent == Some(0) { "was sent" } else { "completed" }
        ));
    }
    (!reasons.is_empty()).then(|| {
        format!(
            "too many failures: {}; a run may lose at most {:.0}% of its requests or connections",
            reasons.join(", "),
            MAX_FAILED_FRACTION * PERCENT
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::record::CellKey;

    fn record(ops: u64, failed: u64, extras: &[(&str, f64)]) -> RunRecord {
        let key = CellKey::plain("steal-half", 1, "rpc-fanout");
        let mut r = RunRecord::failed(key, 0, String::new());
        (r.status, r.ops, r.failed) = (Status::Ok, Some(ops), Some(failed));
        r.extras = extras.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        r
    }

    #[test]
    fn five_percent_of_requests_may_fail_and_no_more() {
        assert_eq!(too_many_failures(&record(1000, 0, &[])), None);
        assert_eq!(too_many_failures(&record(593, 6, &[])), None, "panic-every=100 over 599 requests");
        assert_eq!(too_many_failures(&record(950, 50, &[])), None, "50 of 1000 is exactly 5%");
        let why = too_many_failures(&record(949, 51, &[])).unwrap();
        assert!(why.contains("51 of 1000 requests failed (5.1%)") && why.contains("at most 5%"), "{why}");
        assert!(too_many_failures(&record(0, 5, &[])).unwrap().contains("5 of 5"));
    }

    #[test]
    fn never_sent_requests_count_and_a_row_that_measured_nothing_fails() {
        let ok = [("scheduled", 1000.0), ("never_sent", 50.0)];
        assert_eq!(too_many_failures(&record(950, 0, &ok)), None, "exactly 5%");
        let why = too_many_failures(&record(949, 0, &[("scheduled", 1000.0), ("never_sent", 51.0)])).unwrap();
        assert!(why.contains("51 of 1000 scheduled requests never sent (5.1%"), "{why}");
        let mut r = record(0, 0, &[]);
        r.sent = Some(0);
        assert!(judge(&mut r).unwrap().contains("measured nothing: no request was sent"));
        assert_eq!((r.status, r.error.starts_with("measured nothing")), (Status::Failed, true));
        assert!(too_many_failures(&record(0, 0, &[])).unwrap().contains("no request completed in the measured window"));
        let all_behind = record(0, 0, &[("scheduled", 100.0), ("never_sent", 100.0)]);
        assert!(too_many_failures(&all_behind).unwrap().contains("100 of 100 scheduled requests never sent"));
        let mut fine = record(10, 0, &[]);
        assert_eq!((judge(&mut fine), fine.status), (None, Status::Ok));
    }

    #[test]
    fn deadline_misses_are_not_failures_but_lost_connections_are() {
        assert_eq!(too_many_failures(&record(900, 100, &[("deadline_misses", 100.0)])), None);
        assert_eq!(too_many_failures(&record(100, 0, &[("connections", 64.0), ("failed_connections", 3.0)])), None);
        let why = too_many_failures(&record(100, 0, &[("connections", 64.0), ("failed_connections", 4.0)])).unwrap();
        assert!(why.contains("4 of 64 client connections failed"), "{why}");
        assert_eq!(too_many_failures(&record(100, 0, &[("connections", 64.0), ("failed_connections", 0.0)])), None);
    }
}
