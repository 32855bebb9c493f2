//! `wsbench report --out report.html`: one self-contained HTML page from
//! the history and a run directory: change points, a trend chart per cell
//! and metric with its change points marked, the newest comparison, the
//! scaling curves and the environment. Charts are inline SVG; the page
//! loads nothing and runs no script.

pub mod svg;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, ensure, Context, Result};
use serde_json::Value;

use crate::data::load::load;
use crate::history::detect::{self, Detection, Floors, Found, Series, DEFAULT_METRICS};
use crate::history::store::{RunSummary, Store};
use crate::output::export::{check_outputs, marks, write_output, Kind};
use crate::output::plot::{self, chart};
use crate::stats::changepoint::Search;
use crate::stats::summary::summarise;
use svg::{escape, format_value};

/// compare's default floors, which the page's verdicts use.
const FLOORS: Floors = Floors { threshold: 0.05, tail_threshold: 0.10 };
/// Size of the inline scaling charts.
const SCALING_SIZE: (u32, u32) = (760, 470);
/// Rows of the comparison shown (the worst first); the rest are in compare.md.
const COMPARISON_ROWS: usize = 25;

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1600px}\
h1{margin-bottom:4px}h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}\
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f2f2f2}\
.regression,.regressed{color:#c62828;font-weight:bold}.improvement,.improved{color:#2e7d32}.shift{color:#ef8f00}\
.charts{display:flex;flex-wrap:wrap;gap:8px}.meta{color:#555}.cell{margin:14px 0 4px}";

/// The run whose comparison, scaling curves and environment the page shows.
struct RunDir {
    dir: PathBuf,
    csv: PathBuf,
}

/// `wsbench report`'s options.
#[derive(Debug, Clone)]
pub struct Options {
    /// The HTML file to write.
    pub out: PathBuf,
    /// The run directory to show; `None`: the newest run in the history.
    pub run: Option<PathBuf>,
    /// The history database.
    pub db: PathBuf,
}

fn run_dir(args: &Options, runs: &[RunSummary]) -> Result<Option<RunDir>> {
    if let Some(dir) = &args.run {
        let csv = dir.join("results.csv");
        if !csv.is_file() {
            bail!(
                "--run `{}` has no results.csv (expected a run directory of scripts/nightly.sh or wsbench run)",
                dir.display()
            );
        }
        return Ok(Some(RunDir { dir: dir.clone(), csv }));
    }
    // The newest run of the history, when its file is still there.
    let Some(newest) = runs.last() else { return Ok(None) };
    let csv = PathBuf::from(&newest.source);
    Ok(csv.is_file().then(|| RunDir { dir: csv.parent().map(Path::to_path_buf).unwrap_or_default(), csv }))
}

fn summary_section(out: &mut String, db: &Path, runs: &[RunSummary], d: &Detection) {
    let _ = writeln!(out, "<h1>wsbench report</h1>");
    let (first, last) = (runs.first(), runs.last());
    let _ = writeln!(
        out,
        "<p class=\"meta\">History <code>{}</code>: {} run(s){}. {} series, {} change point(s), <span class=\"{}\">{} series end in a regression</span>.</p>",
        escape(&db.display().to_string()),
        runs.len(),
        match (first, last) {
            (Some(f), Some(l)) => format!(", {} to {}", escape(&f.key.run_time), escape(&l.key.run_time)),
            _ => String::new(),
        },
        d.series,
        d.found.len(),
        if d.open_regressions().count() > 0 { "regression" } else { "" },
        d.open_regressions().count()
    );
}

fn change_points_section(out: &mut String, d: &Detection) {
    let _ = writeln!(out, "<h2 id=\"change-points\">Change points</h2>");
    if d.found.is_empty() {
        let _ = writeln!(
            out,
            "<p>No change points ({}, p &lt; {}, at least {} runs on each side; {} series are still too short).</p>",
            d.method.name(),
            d.p_value,
            d.min_size,
            d.too_short
        );
        return;
    }
    out.push_str("<table><tr><th>change</th><th>host</th><th>cell</th><th>metric</th><th>starts at</th><th>last before</th><th>before</th><th>after</th><th>size</th><th>p</th></tr>\n");
    for f in &d.found {
        let _ = writeln!(
            out,
            "<tr><td class=\"{k}\">{k}{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code> {}</td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:+.1}%</td><td class=\"n\">{:.3}</td></tr>",
            if f.newest { " (newest)" } else { "" },
            escape(&f.host),
            escape(&f.cell.to_string()),
            escape(&f.metric),
            escape(f.first.git_sha.get(..10).unwrap_or(&f.first.git_sha)),
            escape(&f.first.run_time),
            escape(f.last_before.git_sha.get(..10).unwrap_or(&f.last_before.git_sha)),
            escape(&format_value(&f.metric, f.change.mean_before)),
            escape(&format_value(&f.metric, f.change.mean_after)),
            f.relative_change * 100.0,
            f.change.p_value,
            k = f.kind.as_str(),
        );
    }
    out.push_str("</table>\n");
}

fn trends_section(out: &mut String, series: &[Series], d: &Detection) {
    let _ = writeln!(out, "<h2 id=\"trends\">Trends</h2>");
    let _ = writeln!(
        out,
        "<p class=\"meta\">Each point is one run's median over its repetitions; dashed lines are segment means; vertical lines mark change points \
         (<span class=\"regression\">regression</span>, <span class=\"improvement\">improvement</span>, <span class=\"shift\">below the floor</span>), \
         placed between the last run before and the first run after the change.</p>"
    );
    let mut by_cell: BTreeMap<(String, String), Vec<&Series>> = BTreeMap::new();
    for s in series {
        by_cell.entry((s.host.clone(), s.cell.to_string())).or_default().push(s);
    }
    for ((host, cell), group) in by_cell {
        let _ = writeln!(
            out,
            "<h3 class=\"cell\">{} <span class=\"meta\">on {}</span></h3><div class=\"charts\">",
            escape(&cell),
            escape(&host)
        );
        let mut ordered = group;
        ordered.sort_by_key(|s| DEFAULT_METRICS.iter().position(|m| *m == s.metric).unwrap_or(usize::MAX));
        for s in ordered {
            let changes: Vec<&Found> =
                d.found.iter().filter(|f| f.host == s.host && f.cell == s.cell && f.metric == s.metric).collect();
            out.push_str(&svg::trend(&s.metric, &s.metric, &s.points, &changes));
        }
        out.push_str("</div>\n");
    }
}

fn cell_text(cell: &Value) -> String {
    let text = |k: &str| cell.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut s = format!(
        "{} x{} {}",
        text("scheduler"),
        cell.get("workers").and_then(Value::as_u64).unwrap_or(0),
        text("workload")
    );
    for (k, open, close) in [("knobs", " [", "]"), ("params", " (", ")")] {
        if !text(k).is_empty() {
            let _ = write!(s, "{open}{}{close}", text(k));
        }
    }
    if let Some(rate) = cell.get("rate_per_s").and_then(Value::as_u64) {
        let _ = write!(s, " @{rate}/s");
    }
    s
}

/// The run directory's `compare.json`: absent is said so; one that is not
/// a comparison written by `wsbench compare --json` is an error naming it;
/// one whose current side is another run than the directory's results.csv
/// is not shown as its comparison, with a warning saying which it is.
fn comparison_section(out: &mut String, run: Option<&RunDir>) -> Result<()> {
    let _ = writeln!(out, "<h2 id=\"comparison\">Newest comparison</h2>");
    let Some(run) = run else {
        out.push_str("<p>No run directory (give one with <code>--run DIR</code>).</p>\n");
        return Ok(());
    };
    let path = run.dir.join("compare.json");
    if std::fs::symlink_metadata(&path).is_err() {
        let _ = writeln!(
            out,
            "<p>No comparison in <code>{}</code> (no baseline for this machine yet?).</p>",
            escape(&run.dir.display().to_string())
        );
        return Ok(());
    }
    let (json, by_wsbench) = read_comparison(&path, "the comparison")?;
    ensure!(
        by_wsbench && json["comparisons"].is_array() && json["counts"].is_object(),
        "`{}` is not a comparison written by `wsbench compare --json` (no generator mark, `comparisons` or `counts`); \
         remove it or write it again with `wsbench compare BASE {} --json {}`",
        path.display(),
        run.csv.display(),
        path.display()
    );
    let this_run = load(&run.csv)?.timestamp;
    match json.get("current_timestamp").and_then(Value::as_str) {
        Some(ts) if ts == this_run => {}
        Some(ts) => {
            let _ = writeln!(
                out,
                "<p class=\"meta\">warning: <code>{}</code> compares <code>{}</code> (the run started {}), not this \
                 directory's results.csv (the run started {}): it is not shown as this run's comparison.</p>",
                escape(&path.display().to_string()),
                escape(json["current"].as_str().unwrap_or("")),
                escape(ts),
                escape(&this_run)
            );
            return Ok(());
        }
        None => {
            let _ = writeln!(
                out,
                "<p class=\"meta\">warning: <code>{}</code> was written by an older wsbench that did not record \
                 which run it compares; it may not be this run's.</p>",
                escape(&path.display().to_string())
            );
        }
    }
    let count = |k: &str| json["counts"][k].as_u64().unwrap_or(0);
    let rows = json["comparisons"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(
        out,
        "<p><b><span class=\"regressed\">{} regressed</span>, <span class=\"improved\">{} improved</span>, {} unchanged</b> of {} comparisons; base <code>{}</code>, current <code>{}</code>.</p>",
        count("regressed"),
        count("improved"),
        count("unchanged"),
        rows.len(),
        escape(json["base"].as_str().unwrap_or("")),
        escape(json["current"].as_str().unwrap_or(""))
    );
    for w in json["warnings"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        let _ = writeln!(out, "<p class=\"meta\">warning: {}</p>", escape(w));
    }
    comparison_table(out, &rows);
    if rows.len() > COMPARISON_ROWS {
        let _ = writeln!(out, "<p class=\"meta\">{} more rows in compare.md.</p>", rows.len() - COMPARISON_ROWS);
    }
    second_stage_section(out, run)
}

/// A `compare --json` report read as JSON (`what` names it in errors),
/// and whether wsbench wrote it (its generator mark).
fn read_comparison(path: &Path, what: &str) -> Result<(Value, bool)> {
    let bytes = crate::data::input::read_input(path, what)?;
    let json: Value = serde_json::from_slice(&bytes).with_context(|| {
        format!("`{}` is not valid JSON: not a comparison written by `wsbench compare --json`", path.display())
    })?;
    let by_wsbench = json.get("generator").and_then(Value::as_str).is_some_and(|g| g.starts_with("wsbench"));
    Ok((json, by_wsbench))
}

/// The rows of a `compare --json` report as a table, the worst first, at
/// most [`COMPARISON_ROWS`] of them.
fn comparison_table(out: &mut String, rows: &[Value]) {
    out.push_str("<table><tr><th>verdict</th><th>cell</th><th>metric</th><th>base</th><th>current</th><th>change</th><th>p</th><th>q</th><th>runs</th></tr>\n");
    for c in rows.iter().take(COMPARISON_ROWS) {
        let metric = c["metric"].as_str().unwrap_or("");
        let num = |k: &str| c[k].as_f64().map(|v| format_value(metric, v)).unwrap_or_else(|| "-".into());
        let verdict = c["verdict"].as_str().unwrap_or("");
        let _ = writeln!(
            out,
            "<tr><td class=\"{v}\">{v}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(&cell_text(&c["cell"])),
            // A percentile judged on the added histograms (`compare --hdr-dir`)
            // or by the shift test on the per-run values.
            escape(&if c["pooled"] == true {
                format!("{metric} (pooled)")
            } else if c["shift"] == true {
                format!("{metric} (shift)")
            } else {
                metric.to_string()
            }),
            escape(&num("base")),
            escape(&num("current")),
            c["change"].as_f64().map(|v| format!("{:+.1}%", v * 100.0)).unwrap_or_default(),
            c["p_value"].as_f64().map(|p| format!("{p:.4}")).unwrap_or_else(|| "-".into()),
            c["q_value"].as_f64().map(|q| format!("{q:.3}")).unwrap_or_else(|| "-".into()),
            c["runs"].as_array().map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("/")).unwrap_or_default(),
            v = escape(verdict),
        );
    }
    out.push_str("</table>\n");
}

/// The second stage of a nightly's A/B gate, when the run directory has
/// one (`confirm.json`: `compare --confirms compare.json` on the regressed
/// cells measured again): which regressions repeated. Without it the
/// first stage's verdicts above would read as the night's.
fn second_stage_section(out: &mut String, run: &RunDir) -> Result<()> {
    let path = run.dir.join("confirm.json");
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(());
    }
    let (json, by_wsbench) = read_comparison(&path, "the second stage's comparison")?;
    ensure!(
        by_wsbench && json["comparisons"].is_array(),
        "`{}` is not a comparison written by `wsbench compare --confirms ... --json` (no generator mark or `comparisons`)",
        path.display()
    );
    let rows: Vec<Value> = json["comparisons"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["verdict"] != "unchanged" || c["note"].as_str().is_some_and(|n| n.contains("confirmed")))
        .cloned()
        .collect();
    let confirmed = rows.iter().filter(|c| c["verdict"] == "regressed").count();
    let _ = writeln!(
        out,
        "<h3>Second stage</h3><p>The regressed cells above, measured again with fresh pairs (<code>{}</code>): <b><span \
         class=\"regressed\">{confirmed} regressed in both stages</span></b>. Only these fail the night.</p>",
        escape(&path.display().to_string())
    );
    for w in json["warnings"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        let _ = writeln!(out, "<p class=\"meta\">warning: {}</p>", escape(w));
    }
    comparison_table(out, &rows);
    Ok(())
}

fn scaling_section(out: &mut String, run: Option<&RunDir>) -> Result<()> {
    let _ = writeln!(out, "<h2 id=\"scaling\">Scaling</h2>");
    let Some(run) = run else {
        out.push_str("<p>No run directory.</p>\n");
        return Ok(());
    };
    let file = load(&run.csv)?;
    let (charts, _) = plot::scaling_charts(&summarise(&file.records), &plot::caption(&file), file.logical_cpus);
    if charts.is_empty() {
        out.push_str("<p>This run has one worker count per workload, so there are no scaling curves.</p>\n");
        return Ok(());
    }
    chart::register_embedded_font()?;
    out.push_str("<div class=\"charts\">");
    for (_, c) in &charts {
        out.push_str(&chart::svg(c, SCALING_SIZE)?);
    }
    out.push_str("</div>\n");
    Ok(())
}

fn environment_section(out: &mut String, run: Option<&RunDir>, runs: &[RunSummary]) {
    let _ = writeln!(out, "<h2 id=\"environment\">Environment</h2>");
    let from_json = run
        .and_then(|r| crate::data::input::read_input(&r.dir.join("results.json"), "the results JSON").ok())
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v.get("environment").cloned());
    let stored = runs.last().and_then(|r| r.environment.as_deref()).and_then(|t| serde_json::from_str::<Value>(t).ok());
    let Some(Value::Object(env)) = from_json.or(stored) else {
        match runs.last() {
            Some(r) => {
                let _ = writeln!(
                    out,
                    "<p>{} · {} logical CPUs · host {} · git <code>{}</code> (no results.json with the full environment).</p>",
                    escape(&r.key.cpu_model),
                    r.key.logical_cpus,
                    escape(&r.key.host),
                    escape(&r.key.git_sha)
                );
            }
            None => out.push_str("<p>Unknown.</p>\n"),
        }
        return;
    };
    out.push_str("<table>\n");
    for (k, v) in &env {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", escape(k), env_value_html(k, v));
    }
    out.push_str("</table>\n");
}

/// One environment value as HTML for people: byte counts in GiB, doctor's
/// findings one per line (`warn governor: ... (fix: ...)`), other lists
/// and objects as compact JSON.
fn env_value_html(key: &str, value: &Value) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    match value {
        Value::String(s) => escape(s),
        Value::Null => String::new(),
        Value::Number(n) if key.ends_with("_bytes") => match n.as_u64() {
            Some(b) => escape(&format!("{:.1} GiB ({b} bytes)", b as f64 / GIB)),
            None => escape(&n.to_string()),
        },
        Value::Array(items) if key == "findings" => items
            .iter()
            .map(|f| {
                let field = |name: &str| f.get(name).and_then(Value::as_str).unwrap_or("").to_string();
                let fix = field("fix");
                let fix = if fix.is_empty() { String::new() } else { format!(" (fix: {fix})") };
                escape(&format!("{} {}: {}{fix}", field("level"), field("check"), field("detail")))
            })
            .collect::<Vec<_>>()
            .join("<br>"),
        other => escape(&other.to_string()),
    }
}

/// The page.
pub fn render(args: &Options) -> Result<String> {
    let store = Store::open_existing(&args.db)?;
    let runs = store.runs()?;
    if runs.is_empty() && args.run.is_none() {
        bail!("the history `{}` holds no runs and no --run was given: nothing to report", args.db.display());
    }
    let metrics: Vec<String> = DEFAULT_METRICS.iter().map(|m| m.to_string()).collect();
    let series = detect::load_series(&store, &runs, &metrics)?;
    let detection = detect::detect_all(&series, &Search::default(), &FLOORS);
    let run = run_dir(args, &runs)?;
    let mut out =
        String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>wsbench report</title>");
    let _ = writeln!(out, "<style>{STYLE}</style></head><body>");
    summary_section(&mut out, &args.db, &runs, &detection);
    let _ = writeln!(
        out,
        "<p><a href=\"#change-points\">change points</a> · <a href=\"#comparison\">newest comparison</a> · <a href=\"#trends\">trends</a> · \
         <a href=\"#scaling\">scaling</a> · <a href=\"#environment\">environment</a></p>"
    );
    change_points_section(&mut out, &detection);
    comparison_section(&mut out, run.as_ref())?;
    trends_section(&mut out, &series, &detection);
    scaling_section(&mut out, run.as_ref())?;
    environment_section(&mut out, run.as_ref(), &runs);
    let _ = writeln!(
        out,
        "<p class=\"meta\">Change points: {}; p &lt; {} (at most {} draws), at least {} runs a side; regression/improvement beyond \
         compare's floors (5 %; 10 % for p99, p99.9).</p></body></html>",
        escape(detect::method_line(detection.method)),
        detection.p_value,
        detection.permutations,
        detection.min_size
    );
    Ok(out)
}

/// `wsbench report`.
pub fn main(args: &Options) -> Result<ExitCode> {
    let run_files: Vec<PathBuf> = match &args.run {
        Some(dir) => {
            ["results.csv", "compare.json", "confirm.json", "results.json"].iter().map(|f| dir.join(f)).collect()
        }
        None => Vec::new(),
    };
    let mut inputs: Vec<(&str, &Path)> = vec![("--db", args.db.as_path())];
    inputs.extend(run_files.iter().map(|p| ("of --run", p.as_path())));
    check_outputs(&[("the report (--out)", &args.out, Kind::Html)], &inputs)?;
    let html = marks::with_comment(Kind::Html, &render(args)?);
    write_output(&args.out, html.as_bytes()).with_context(|| format!("cannot write `{}`", args.out.display()))?;
    crate::outln!("{}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_values_are_written_for_people() {
        assert_eq!(
            env_value_html("memory_bytes", &serde_json::json!(25_232_932_864u64)),
            "23.5 GiB (25232932864 bytes)"
        );
        let findings = serde_json::json!([
            {"check": "governor", "level": "warn", "detail": "powersave", "fix": "cpupower frequency-set -g performance"},
            {"check": "smt", "level": "ok", "detail": "off", "fix": ""}
        ]);
        assert_eq!(
            env_value_html("findings", &findings),
            "warn governor: powersave (fix: cpupower frequency-set -g performance)<br>ok smt: off"
        );
        assert_eq!(env_value_html("host", &serde_json::json!("a<b")), "a&lt;b");
        assert_eq!(svg::format_value("cpu_us_per_op", 12.5), "12.5µs");
    }
}
