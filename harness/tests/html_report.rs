//! `wsbench report`: one self-contained HTML page, opened in headless
//! Chromium (Debian's `chromium`; skipped, saying so, where it is missing).

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use common::{scratch, wsbench_in};
use wsbench::internals::record::SCHEMA_VERSION;

const HEADER: &str =
    "schema_version,timestamp,git_sha,host,cpu_model,logical_cpus,scheduler,workers,workload,knobs,run,duration_s,ops,\
throughput_per_s,offered_per_s,p50_us,p90_us,p99_us,p999_us,max_us,mean_us,status";

/// Night `i`: two cells, steal-half 20 % slower from night 12 on.
fn night(i: usize) -> String {
    let mut out = format!("{HEADER}\n");
    let wobble = [0.3, -0.8, 0.9, -0.2, 0.5, -0.6, 0.0][i % 7];
    for (sched, base) in [("steal-half", 1000.0), ("global", 500.0)] {
        for run in 0..5 {
            let level = if sched == "steal-half" && i >= 12 { 0.8 } else { 1.0 };
            let t = base * level * (1.0 + 0.01 * wobble + 0.002 * run as f64);
            let p50 = 1e6 / t;
            let _ = writeln!(
                out,
                "{SCHEMA_VERSION},2026-01-{:02}T02:17:00Z,sha{i:02}bbbb,night-host,cpu-x,2,{sched},2,yield-many,,{run},1.0,{},{t},,{p50},{},{},{},{},{p50},ok",
                i + 1,
                t.round(),
                p50 * 1.5,
                p50 * 2.0,
                p50 * 3.0,
                p50 * 5.0,
            );
        }
    }
    out
}

/// A history of 20 nights and a run directory with a comparison and a
/// worker sweep (the committed scaling CSV the book's tour draws, `skewed` at 1, 2, 4 workers).
fn setup(dir: &Path) {
    let mut args: Vec<String> = ["history", "add", "--db", "h.sqlite"].map(String::from).to_vec();
    for i in 0..20 {
        let name = format!("night{i:02}");
        std::fs::create_dir_all(dir.join(&name)).unwrap();
        std::fs::write(dir.join(&name).join("results.csv"), night(i)).unwrap();
        args.push(name);
    }
    // The newest run comes with its environment, as `wsbench run --json` writes it.
    std::fs::write(
        dir.join("night19/results.json"),
        r#"{"environment": {"kernel": "6.1-test-kernel", "logical_cpus": 2}}"#,
    )
    .unwrap();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    wsbench_in(dir, &args).ok();
    wsbench_in(dir, &["compare", "night00/results.csv", "night19/results.csv", "--json", "night19/compare.json"])
        .code(1);
    std::fs::create_dir_all(dir.join("sweep")).unwrap();
    let sweep = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/baseline/readme/skewed-scaling.csv");
    std::fs::copy(sweep, dir.join("sweep/results.csv")).unwrap();
    std::fs::copy(dir.join("night19/compare.json"), dir.join("sweep/compare.json")).unwrap();
}

#[test]
fn the_report_is_one_self_contained_page_with_every_section() {
    let dir = scratch("report-page");
    setup(&dir);
    wsbench_in(&dir, &["report", "--db", "h.sqlite", "--out", "report.html"]).ok();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for needle in
        ["Change points", "Newest comparison", "Trends", "Scaling", "Environment", "sha12bbbb", "regression (newest)"]
    {
        assert!(html.contains(needle), "lacks `{needle}`");
    }
    // 2 cells x 5 metrics trend charts; the newest run (night 19) has one
    // worker count, so no scaling curves.
    assert_eq!(html.matches("<svg").count(), 10);
    assert!(html.contains("no scaling curves"));
    // steal-half's five series each have one red change-point line.
    assert_eq!(html.matches(r##"stroke="#c62828" stroke-width="2""##).count(), 5);
    assert!(html.contains("5 regressed</span>"), "the newest comparison");
    assert!(html.contains("<th>kernel</th><td>6.1-test-kernel</td>"), "the environment of the run directory");
    self_contained(&html);

    wsbench_in(&dir, &["report", "--db", "h.sqlite", "--run", "sweep", "--out", "sweep.html"]).ok();
    let html = std::fs::read_to_string(dir.join("sweep.html")).unwrap();
    assert!(html.matches("<svg").count() > 10 + 2, "scaling curves inline");
    // No results.json beside the sweep: the environment stored with the newest run.
    assert!(html.contains("<th>kernel</th><td>6.1-test-kernel</td>"), "the environment kept in the history");
    self_contained(&html);
}

/// A nightly's second stage (`confirm.json` beside `compare.json`) is shown
/// under the comparison, with what repeated.
#[test]
fn the_second_stage_is_shown_with_what_repeated() {
    let dir = scratch("report-confirm");
    setup(&dir);
    wsbench_in(&dir, &["report", "--db", "h.sqlite", "--run", "night19", "--out", "first.html"]).ok();
    assert!(!std::fs::read_to_string(dir.join("first.html")).unwrap().contains("Second stage"));
    // The same two files judged as the second stage of their own first
    // stage: every regression repeats.
    wsbench_in(
        &dir,
        &[
            "compare",
            "night00/results.csv",
            "night19/results.csv",
            "--confirms",
            "night19/compare.json",
            "--json",
            "night19/confirm.json",
        ],
    )
    .code(1)
    .stderr_has(&["second stage of", "night19/compare.json"]);
    wsbench_in(&dir, &["report", "--db", "h.sqlite", "--run", "night19", "--out", "both.html"]).ok();
    let html = std::fs::read_to_string(dir.join("both.html")).unwrap();
    assert!(html.contains("<h3>Second stage</h3>") && html.contains("5 regressed in both stages"), "{html}");
    assert!(html.contains("confirm.json"));
    std::fs::write(dir.join("night19/confirm.json"), "{\"a\": 1}").unwrap();
    wsbench_in(&dir, &["report", "--db", "h.sqlite", "--run", "night19", "--out", "bad.html"])
        .code(2)
        .stderr_has(&["night19/confirm.json", "is not a comparison written by"]);
}

/// Nothing to fetch: no scripts, links, images or frames, and no URL but
/// the SVG namespace.
fn self_contained(html: &str) {
    for tag in ["<script", "<link", "<img", "<iframe", "@import", "url("] {
        assert!(!html.contains(tag), "the page has `{tag}`");
    }
    let urls = html.matches("http://").count() + html.matches("https://").count();
    let namespaces = html.matches("http://www.w3.org/").count();
    assert_eq!(urls, namespaces, "the page names a URL other than the SVG namespace");
}

/// The run directory's compare.json: garbage is an error naming it; one
/// made from another run is not shown as this run's comparison.
#[test]
fn a_comparison_of_other_files_or_garbage_is_not_shown_as_this_runs() {
    let dir = scratch("report-compare-json");
    setup(&dir);
    // sweep/compare.json is night19's (setup copies it): another run.
    wsbench_in(&dir, &["report", "--db", "h.sqlite", "--run", "sweep", "--out", "other.html"]).ok();
    let html = std::fs::read_to_string(dir.join("other.html")).unwrap();
    assert!(
        html.contains("it is not shown as this run&#39;s comparison")
            || html.contains("it is not shown as this run's comparison"),
        "{html}"
    );
    assert!(!html.contains("5 regressed</span>"), "night19's verdicts shown as the sweep's");
    // Its own run: shown.
    wsbench_in(&dir, &["report", "--db", "h.sqlite", "--run", "night19", "--out", "own.html"]).ok();
    assert!(std::fs::read_to_string(dir.join("own.html")).unwrap().contains("5 regressed</span>"));
    // Garbage, and a JSON that is not a comparison: errors naming the file.
    for (text, why) in
        [("{\"comparisons\": [", "is not valid JSON"), ("{\"a\": 1}\n", "is not a comparison written by")]
    {
        std::fs::write(dir.join("night19/compare.json"), text).unwrap();
        wsbench_in(&dir, &["report", "--db", "h.sqlite", "--run", "night19", "--out", "bad.html"])
            .code(2)
            .stderr_has(&["night19/compare.json", why]);
        assert!(!dir.join("bad.html").exists());
    }
}

#[test]
fn report_refuses_an_empty_history_and_a_bad_run_dir() {
    let dir = scratch("report-bad");
    wsbench_in(&dir, &["report", "--db", "none.sqlite", "--out", "r.html"]).code(2).stderr_has(&["no history at"]);
    setup(&dir);
    wsbench_in(&dir, &["report", "--db", "h.sqlite", "--run", "nowhere", "--out", "r.html"])
        .code(2)
        .stderr_has(&["--run `nowhere` has no results.csv"]);
    assert!(!dir.join("r.html").exists());
}

#[test]
fn the_report_renders_in_headless_chromium() {
    let Some(chromium) = ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new("sh").arg("-c").arg(format!("command -v {c}")).output().is_ok_and(|o| o.status.success())
    }) else {
        eprintln!("SKIPPED: chromium is not installed (Debian: apt-get install -y chromium; .ci/run installs it)");
        return;
    };
    let dir = scratch("report-chromium");
    setup(&dir);
    wsbench_in(&dir, &["report", "--db", "h.sqlite", "--run", "sweep", "--out", "report.html"]).ok();
    let shot = dir.join("shot.png");
    let out = Command::new("timeout")
        .arg("120")
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
            "--window-size=1400,1800",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", dir.join("report.html").display()))
        .output()
        .expect("start chromium");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {stderr}");
    // Console messages (errors included) are logged as `:CONSOLE`; the page
    // has no script, so any message is a problem (a blocked load, a parse error).
    let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let (width, height, pixels) = decode(&shot);
    assert_eq!((width, height), (1400, 1800));
    // Not blank: a good share of the pixels is not background, and the
    // chart colours are there.
    let inked = pixels.iter().filter(|p| p[0] < 200 || p[1] < 200 || p[2] < 200).count();
    assert!(inked * 100 > pixels.len(), "only {inked} of {} pixels drawn", pixels.len());
    let red = pixels.iter().filter(|p| p[0] > 150 && p[1] < 80 && p[2] < 80).count();
    let blue = pixels.iter().filter(|p| p[2] > 120 && p[0] < 80 && p[1] < 140).count();
    assert!(red > 20 && blue > 100, "red {red}, blue {blue}: charts not drawn");
}

/// RGB pixels of a PNG.
fn decode(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::fs::File::open(path).expect("screenshot written"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    let pixels = buf[..info.buffer_size()].chunks(step).map(|c| [c[0], c[1], c[2]]).collect();
    (info.width, info.height, pixels)
}
