//! `compare --plant METRIC=CHANGE`: the gate's power, measured on the
//! machine that gates. For each cell in turn, the current side's METRIC is
//! multiplied by 1 + CHANGE in that cell only (each run's value; with
//! `--hdr-dir`, each recorded latency of a percentile judged on the added
//! histograms), every comparison of the file is corrected again, and the
//! cell counts as flagged when its verdict on METRIC is the one the change
//! deserves (`regressed` for a change for the worse). The unplanted files'
//! own verdicts are the false alarms when both sides ran the same code.
//! `scripts/plant.sh` drives it over an A/B run's directory.

use anyhow::{anyhow, Result};
use serde::Serialize;

use super::{common, verdicts, Comparison, Floors, Inputs, Verdict, METRICS};
use crate::data::record::CellKey;
use crate::parse::parse_percent;

/// One planted change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Plant {
    /// The column, one of those `compare` judges.
    pub metric: &'static str,
    /// The relative change: 0.2 = +20 %.
    pub change: f64,
}

/// Parses `METRIC=CHANGE`, e.g. `p99_us=+20%` or `throughput_per_s=-20%`.
pub fn parse(text: &str) -> Result<Plant> {
    let allowed = METRICS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ");
    let (name, change) = text
        .split_once('=')
        .ok_or_else(|| anyhow!("--plant `{text}` is not METRIC=CHANGE; allowed: e.g. p99_us=+20% ({allowed})"))?;
    let metric = METRICS
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| anyhow!("--plant `{text}`: `{name}` is not a metric compare judges; allowed: {allowed}"))?
        .name;
    let (sign, magnitude) = match change.trim().strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, change.trim().trim_start_matches('+')),
    };
    let change = sign * parse_percent(magnitude).map_err(|e| anyhow!("--plant `{text}`: {e}"))?;
    if change == 0.0 {
        return Err(anyhow!(
            "--plant `{text}` plants nothing; allowed: a change other than 0% (the unplanted files' false alarms are \
             reported with every plant)"
        ));
    }
    if change <= -1.0 {
        return Err(anyhow!(
            "--plant `{text}`: a change of -100% or less leaves nothing to measure; allowed: above -100%"
        ));
    }
    Ok(Plant { metric, change })
}

/// One cell's verdict with the change planted in it.
#[derive(Debug, Clone, Serialize)]
pub struct PlantedCell {
    /// The cell.
    pub cell: CellKey,
    /// Its verdict on the metric; `None` when the metric was not judged
    /// there (no values).
    pub verdict: Option<Verdict>,
    /// Its p-value, before the correction.
    pub p_value: Option<f64>,
    /// Its corrected q-value.
    pub q_value: Option<f64>,
}

/// One planted change over every cell.
#[derive(Debug, Clone, Serialize)]
pub struct Planted {
    /// What was planted.
    pub plant: Plant,
    /// The verdict that counts as flagged.
    pub expected: Verdict,
    /// Per cell.
    pub cells: Vec<PlantedCell>,
    /// Cells whose verdict was `expected`.
    pub flagged: usize,
}

/// The whole measurement.
#[derive(Debug, Clone, Serialize)]
pub struct PlantReport {
    /// Comparisons of the unplanted files.
    pub comparisons: usize,
    /// Of them, not `unchanged`: false alarms when both sides ran the same
    /// code.
    pub false_alarms: usize,
    /// Per planted change.
    pub plants: Vec<Planted>,
}

/// Plants each of `plants` into each cell in turn (module doc).
pub(super) fn measure(inputs: &Inputs<'_>, floors: &Floors, plants: &[Plant]) -> PlantReport {
    let (judged, _) = inputs.judge_all();
    let mut unplanted = judged.clone();
    verdicts(&mut unplanted, floors, inputs.pairing);
    let false_alarms = unplanted.iter().filter(|c| c.verdict != Verdict::Unchanged).count();
    let keys = common(&inputs.base, &inputs.current);
    let plants = plants
        .iter()
        .map(|&plant| {
            let metric = METRICS.iter().find(|m| m.name == plant.metric).expect("parse() accepts only METRICS");
            let worse = if metric.higher_is_better { plant.change < 0.0 } else { plant.change > 0.0 };
            let expected = if worse { Verdict::Regressed } else { Verdict::Improved };
            let cells: Vec<PlantedCell> = keys
                .iter()
                .map(|&key| {
                    let at = judged.iter().position(|c| &c.cell == key && c.metric == plant.metric);
                    let planted = at.zip(inputs.judge_metric(metric, key, 1.0 + plant.change));
                    let Some((at, replacement)) = planted else {
                        return PlantedCell { cell: key.clone(), verdict: None, p_value: None, q_value: None };
                    };
                    let mut all: Vec<Comparison> = judged.clone();
                    all[at] = replacement;
                    verdicts(&mut all, floors, inputs.pairing);
                    let c = &all[at];
                    PlantedCell { cell: key.clone(), verdict: Some(c.verdict), p_value: c.p_value, q_value: c.q_value }
                })
                .collect();
            let flagged = cells.iter().filter(|c| c.verdict == Some(expected)).count();
            Planted { plant, expected, cells, flagged }
        })
        .collect();
    PlantReport { comparisons: unplanted.len(), false_alarms, plants }
}

/// The report as markdown: one line per planted cell, then the table.
pub fn render(report: &PlantReport) -> String {
    let mut out = format!(
        "unplanted: {} of {} comparison(s) not unchanged (false alarms when both sides run the same code)\n\n",
        report.false_alarms, report.comparisons
    );
    for p in &report.plants {
        for c in &p.cells {
            let verdict = c.verdict.map_or("not judged", Verdict::as_str);
            let q = c.q_value.map_or_else(|| "-".to_string(), super::format_q);
            out.push_str(&format!(
                "- {} {:+.0}% {}: {verdict} (q {q})\n",
                p.plant.metric,
                p.plant.change * 100.0,
                c.cell
            ));
        }
    }
    out.push_str("\n| metric | planted | cells | flagged | fraction |\n|---|---:|---:|---:|---:|\n");
    for p in &report.plants {
        let n = p.cells.len();
        let fraction = if n == 0 { String::new() } else { format!("{:.2}", p.flagged as f64 / n as f64) };
        out.push_str(&format!(
            "| {} | {:+.0}% | {n} | {} | {fraction} |\n",
            p.plant.metric,
            p.plant.change * 100.0,
            p.flagged
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plants_parse_with_their_sign() {
        assert_eq!(parse("p99_us=+20%").unwrap(), Plant { metric: "p99_us", change: 0.2 });
        assert_eq!(parse("throughput_per_s=-20%").unwrap(), Plant { metric: "throughput_per_s", change: -0.2 });
        assert_eq!(parse("cpu_us_per_op=10%").unwrap(), Plant { metric: "cpu_us_per_op", change: 0.1 });
    }

    #[test]
    fn bad_plants_name_the_value_and_what_is_allowed() {
        let e = parse("p98_us=+20%").unwrap_err().to_string();
        assert!(e.contains("`p98_us`") && e.contains("p99_us, p999_us"), "{e}");
        let e = parse("p99_us").unwrap_err().to_string();
        assert!(e.contains("METRIC=CHANGE"), "{e}");
        let e = parse("p99_us=+2x").unwrap_err().to_string();
        assert!(e.contains("`p99_us=+2x`") && e.contains("percentage"), "{e}");
        let e = parse("p50_us=-100%").unwrap_err().to_string();
        assert!(e.contains("-100%"), "{e}");
        let e = parse("p50_us=+0%").unwrap_err().to_string();
        assert!(e.contains("plants nothing"), "{e}");
    }
}
